#!/usr/bin/env bash
# An S3-compatible object store on 127.0.0.1:7070: Versity's S3 gateway
# (versitygw) over a posix directory, a real S3 server (multipart uploads,
# ListObjectsV2, ranged GETs) that the file source and sink's s3:// paths
# are tested against. Built once with Go from the wrapper module in
# testenv/s3 (8 minutes with an empty Go cache on 2 loaded cores, 25 s with a
# warm one) into the state
# dir, and rebuilt only when its go.mod or go.sum change. Objects persist
# in the state dir across restarts; tests use buckets of their own.
#
# Usage: testenv/s3.sh {start|stop|status|env}
#   env prints ETLD_TEST_S3_ENDPOINT, ETLD_TEST_S3_ACCESS_KEY,
#   ETLD_TEST_S3_SECRET_KEY and ETLD_TEST_S3_REGION.
set -euo pipefail

# shellcheck source=testenv/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TESTENV_SERVICE=s3

SRC="$TESTENV_ROOT/s3"
STATE="$ETLD_TESTENV_DIR/s3"
BIN="$STATE/bin/versitygw"
DATA="$STATE/data"
PIDFILE="$STATE/s3.pid"
LOGFILE="$STATE/s3.log"
URL="http://$S3_HOST:$S3_PORT"
# A loopback test server's root user: not a secret.
ACCESS_KEY=etldtest
SECRET_KEY=etldtest-secret-key
REGION=us-east-1
START_TIMEOUT=${ETLD_TESTENV_S3_TIMEOUT:-30}

sources_sum() {
	cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/tools.go" | sha256sum | cut -d' ' -f1
}

# install: build the server into $BIN, once per module content.
install() {
	local want
	want=$(sources_sum)
	if [[ -x "$BIN" ]] && stamp_matches "$BIN.sources.sha256" "$want"; then
		return 0
	fi
	command -v go >/dev/null || die "go not found on PATH (the S3 server is built with Go)"
	log "building versitygw ($(sed -n 's:^require github.com/versity/versitygw \(.*\)$:\1:p' "$SRC/go.mod")) with Go"
	local t0=$SECONDS
	mkdir -p "$STATE/bin"
	(cd "$SRC" && GOFLAGS=-mod=mod go build -o "$BIN.tmp" github.com/versity/versitygw/cmd/versitygw) >"$STATE/build.log" 2>&1 ||
		fail_with_log "$STATE/build.log" "go could not build versitygw"
	mv -f "$BIN.tmp" "$BIN"
	printf '%s\n' "$want" >"$BIN.sources.sha256"
	log "built in $((SECONDS - t0))s"
}

# answers: the server speaks S3 (an unsigned request is refused with an
# S3 error document, not a connection error).
answers() {
	curl -s --max-time 5 "$URL/" | grep -q '<Error>'
}

start() {
	local t0=$SECONDS
	install
	if pid_alive "$PIDFILE" versitygw "$BIN"; then
		log "our S3 server (pid $(<"$PIDFILE")) is running; checking it"
	elif port_open "$S3_PORT"; then
		if answers; then
			log "an S3 server not started by testenv already answers on $URL; using it"
			return 0
		fi
		die "port $S3_PORT is taken by something that does not answer as an S3 server"
	else
		mkdir -p "$DATA"
		[[ -f "$LOGFILE" ]] && mv -f "$LOGFILE" "$LOGFILE.1"
		log "starting versitygw on $URL over $DATA"
		# setsid: it outlives the calling shell.
		ROOT_ACCESS_KEY_ID=$ACCESS_KEY ROOT_SECRET_ACCESS_KEY=$SECRET_KEY \
			setsid "$BIN" --port "$S3_HOST:$S3_PORT" --region "$REGION" posix "$DATA" >"$LOGFILE" 2>&1 </dev/null &
		echo $! >"$PIDFILE"
		wait_for 10 "the versitygw process" pid_alive "$PIDFILE" versitygw "$BIN" ||
			fail_with_log "$LOGFILE" "the S3 server process did not start"
	fi
	local rc=0
	wait_service "$START_TIMEOUT" "$URL" "$PIDFILE" versitygw "$BIN" answers || rc=$?
	((rc == 0)) || fail_with_log "$LOGFILE" "the S3 server does not answer on $URL"
	log "ready after $((SECONDS - t0))s on $URL"
}

stop() {
	if pid_alive "$PIDFILE" versitygw "$BIN"; then
		stop_pid "$PIDFILE" versitygw "$BIN" 15
		log "stopped"
	elif port_open "$S3_PORT"; then
		log "an S3 server on port $S3_PORT was not started by testenv; leaving it alone"
	else
		log "not running"
	fi
}

status() {
	if answers; then
		echo "s3: ready on $URL"
		return 0
	fi
	echo "s3: not ready"
	return 1
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
env)
	echo "export ETLD_TEST_S3_ENDPOINT=$URL"
	echo "export ETLD_TEST_S3_ACCESS_KEY=$ACCESS_KEY"
	echo "export ETLD_TEST_S3_SECRET_KEY=$SECRET_KEY"
	echo "export ETLD_TEST_S3_REGION=$REGION"
	;;
*)
	echo "usage: $0 {start|stop|status|env}" >&2
	exit 2
	;;
esac

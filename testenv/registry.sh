#!/usr/bin/env bash
# A schema registry on 127.0.0.1:8081: Apicurio Registry, whose
# Confluent-compatible API (/apis/ccompat/v7) the avro-confluent and
# protobuf-confluent formats talk to. Built once from Maven Central with the
# Quarkus Maven plugin (testenv/registry/pom.xml says what and why) into
# quarkus-app/quarkus-run.jar; storage is in memory, so every start is empty.
#
# Usage: testenv/registry.sh {start|stop|status|env}
#   env prints ETLD_TEST_SCHEMA_REGISTRY, the API's base URL.
set -euo pipefail

# shellcheck source=testenv/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TESTENV_SERVICE=registry

SRC="$TESTENV_ROOT/registry"
STATE="$ETLD_TESTENV_DIR/registry"
APP="$STATE/app"
PIDFILE="$STATE/registry.pid"
LOGFILE="$STATE/registry.log"
PROC_MATCH="$APP/quarkus-run.jar" # in our registry's command line
URL="http://$REGISTRY_HOST:$REGISTRY_PORT/apis/ccompat/v7"
START_TIMEOUT=${ETLD_TESTENV_REGISTRY_TIMEOUT:-180}

JAVA_HOME_DIR=$(java_home)
JAVA="$JAVA_HOME_DIR/bin/java"

sources_sum() {
	cat "$SRC/pom.xml" "$SRC"/*.java | sha256sum | cut -d' ' -f1
}

# install: build the application into $APP, once per pom and source content.
install() {
	local want
	want=$(sources_sum)
	if stamp_matches "$APP/.sources.sha256" "$want"; then
		return 0
	fi
	log "building the registry with Maven ($(sed -n 's:.*<apicurio.version>\(.*\)</apicurio.version>.*:\1:p' "$SRC/pom.xml"))"
	local t0=$SECONDS build="$STATE/build"
	rm -rf "$build"
	mkdir -p "$build/src/main/java/etld/testenv"
	cp "$SRC/pom.xml" "$build/"
	cp "$SRC"/*.java "$build/src/main/java/etld/testenv/"
	# The registry's own application.properties asks for a legacy jar; the
	# command line wins.
	mvn_fetch "$build/pom.xml" -Dstyle.color=never -Dquarkus.package.type=fast-jar package >"$STATE/mvn.log" 2>&1 ||
		fail_with_log "$STATE/mvn.log" "Maven could not build the registry"
	printf '%s\n' "$want" >"$build/target/quarkus-app/.sources.sha256"
	rm -rf "$APP"
	mv "$build/target/quarkus-app" "$APP"
	rm -rf "$build"
	log "built in $((SECONDS - t0))s"
}

# answers: the Confluent API lists subjects.
answers() {
	curl -sf --max-time 5 "$URL/subjects" >/dev/null
}

start() {
	local t0=$SECONDS
	check_java "$JAVA_HOME_DIR"
	install
	if pid_alive "$PIDFILE" java "$PROC_MATCH"; then
		log "our registry (pid $(<"$PIDFILE")) is running; checking it"
	elif port_open "$REGISTRY_PORT"; then
		if answers; then
			log "a registry not started by testenv already answers on $URL; using it"
			return 0
		fi
		die "port $REGISTRY_PORT is taken by something that does not answer as a schema registry"
	else
		[[ -f "$LOGFILE" ]] && mv -f "$LOGFILE" "$LOGFILE.1"
		log "starting Apicurio Registry on $URL"
		# setsid: it outlives the calling shell. C1 only: a test registry
		# starts faster and serves a few requests a second.
		setsid "$JAVA" -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
			-Dquarkus.http.host="$REGISTRY_HOST" -Dquarkus.http.port="$REGISTRY_PORT" \
			-Dquarkus.datasource.jdbc.min-size=2 -Dquarkus.datasource.jdbc.initial-size=2 \
			-jar "$APP/quarkus-run.jar" >"$LOGFILE" 2>&1 </dev/null &
		echo $! >"$PIDFILE"
		wait_for 10 "the java process" pid_alive "$PIDFILE" java "$PROC_MATCH" ||
			fail_with_log "$LOGFILE" "the registry process did not start"
	fi
	local rc=0
	wait_service "$START_TIMEOUT" "$URL" "$PIDFILE" java "$PROC_MATCH" answers || rc=$?
	((rc == 0)) || fail_with_log "$LOGFILE" "the registry does not answer on $URL"
	log "ready after $((SECONDS - t0))s on $URL"
}

stop() {
	if pid_alive "$PIDFILE" java "$PROC_MATCH"; then
		stop_pid "$PIDFILE" java "$PROC_MATCH" 30
		log "stopped"
	elif port_open "$REGISTRY_PORT"; then
		log "a registry on port $REGISTRY_PORT was not started by testenv; leaving it alone"
	else
		log "not running"
	fi
}

status() {
	if answers; then
		echo "registry: ready on $URL"
		return 0
	fi
	echo "registry: not ready"
	return 1
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
env) echo "export ETLD_TEST_SCHEMA_REGISTRY=$URL" ;;
*)
	echo "usage: $0 {start|stop|status|env}" >&2
	exit 2
	;;
esac

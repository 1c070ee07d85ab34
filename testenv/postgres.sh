#!/usr/bin/env bash
# PostgreSQL 15 from Debian's packages on 127.0.0.1:5432, with a private
# data dir, wal_level=logical (replication slots and WAL senders for the
# CDC source), database etld_test owned by user etld (password in lib.sh,
# LOGIN REPLICATION), reachable over TCP with a password.
#
# Usage: testenv/postgres.sh {start|stop|status|env|bin}
#   env prints the ETLD_TEST_PG_* exports; bin prints the directory of
#   the server's programs (initdb, postgres, pg_ctl), which tests that
#   start a private server of their own use.
set -euo pipefail

# shellcheck source=testenv/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TESTENV_SERVICE=postgres

STATE="$ETLD_TESTENV_DIR/postgres"
DATA="$STATE/data"
RUN="$STATE/run"
PIDFILE="$RUN/postgres.pid" # the postmaster's pid, copied from DATA/postmaster.pid
PROC_MATCH="-D $DATA"      # in our postmaster's command line
LOGFILE="$RUN/postgres.log"
START_TIMEOUT=${ETLD_TESTENV_PG_TIMEOUT:-90}
PG_MAJOR=15

# The server's settings. Logical decoding needs wal_level=logical; the
# tests create and drop many slots, each with its WAL sender. fsync=off
# keeps the tests fast: the data of a testenv is thrown away, and a
# stopped or killed server (not a crashed machine) loses nothing by it.
SETTINGS=(
	-c "listen_addresses=$PG_HOST" -c "port=$PG_PORT" -c "unix_socket_directories=$RUN"
	-c wal_level=logical -c max_replication_slots=64 -c max_wal_senders=64
	-c max_connections=200 -c fsync=off -c full_page_writes=off
	-c wal_sender_timeout=60s -c max_slot_wal_keep_size=4GB
)

bindir() {
	printf '/usr/lib/postgresql/%s/bin\n' "$PG_MAJOR"
}

run_user() {
	if [[ "$(id -u)" -eq 0 ]]; then echo postgres; else id -un; fi
}

# as_user COMMAND...: run COMMAND as the server's user.
as_user() {
	if [[ "$(id -u)" -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

dsn() {
	printf 'postgres://%s:%s@%s:%s/%s?sslmode=disable\n' "$PG_USER" "$PG_PASSWORD" "$PG_HOST" "$PG_PORT" "$PG_DB"
}

# ready: the etld user can run a query in etld_test over TCP.
ready() {
	PGPASSWORD="$PG_PASSWORD" PGCONNECT_TIMEOUT=2 "$(bindir)/psql" -X -q -A -t \
		-h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" -c 'SELECT 1' >/dev/null 2>&1
}

socket_ready() {
	"$(bindir)/pg_isready" -q -h "$RUN" -p "$PG_PORT" >/dev/null 2>&1
}

install() {
	if [[ -x "$(bindir)/postgres" && -x "$(bindir)/psql" ]]; then
		return 0
	fi
	require_root "installing postgresql-$PG_MAJOR"
	log "installing postgresql-$PG_MAJOR from apt"
	local t0=$SECONDS
	# The package would create and start a cluster of its own on port
	# 5432: testenv runs its own, on its data dir.
	mkdir -p /etc/postgresql-common/createcluster.d
	echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.d/etld-testenv.conf
	with_lock apt env DEBIAN_FRONTEND=noninteractive sh -c \
		"apt-get update -qq && apt-get install -y -q postgresql-$PG_MAJOR postgresql-client-$PG_MAJOR >/dev/null"
	[[ -x "$(bindir)/postgres" ]] || die "postgresql-$PG_MAJOR is installed but $(bindir)/postgres is not there"
	log "installed in $((SECONDS - t0))s: $("$(bindir)/postgres" --version)"
}

init_datadir() {
	local user
	user=$(run_user)
	mkdir -p "$STATE" "$RUN"
	chmod 755 "$ETLD_TESTENV_DIR" "$STATE"
	chown "$user:" "$STATE" "$RUN"
	if [[ -f "$DATA/PG_VERSION" ]]; then
		return 0
	fi
	log "initialising data dir $DATA"
	rm -rf "$DATA"
	if ! as_user "$(bindir)/initdb" -D "$DATA" -U postgres -E UTF8 --locale=C.UTF-8 \
		--auth-local=trust --auth-host=scram-sha-256 >"$RUN/initdb.log" 2>&1; then
		rm -rf "$DATA"
		fail_with_log "$RUN/initdb.log" "initdb failed"
	fi
}

launch() {
	[[ -f "$LOGFILE" ]] && mv -f "$LOGFILE" "$LOGFILE.1"
	log "starting postgres $PG_MAJOR on $PG_HOST:$PG_PORT (data $DATA)"
	# pg_ctl -w waits until the postmaster it forked has written its own
	# pid into postmaster.pid and accepts connections. Reading that file
	# without it raced with a stale one: a machine restored from a
	# snapshot of a running server has the old pid there, which is dead
	# (or someone else's) until the new postmaster rewrites the file.
	local opts
	opts=$(printf '%q ' "${SETTINGS[@]}")
	as_user "$(bindir)/pg_ctl" -D "$DATA" -l "$LOGFILE" -o "$opts" -w -t "$START_TIMEOUT" start >"$RUN/pg_ctl.log" 2>&1 ||
		fail_with_log "$LOGFILE" "pg_ctl start failed ($(tr '\n' ' ' <"$RUN/pg_ctl.log"))"
	head -n 1 "$DATA/postmaster.pid" >"$PIDFILE"
}

# setup_sql: the TCP user and its database; safe to repeat.
setup_sql() {
	as_user "$(bindir)/psql" -X -q -v ON_ERROR_STOP=1 -h "$RUN" -p "$PG_PORT" -U postgres -d postgres <<-SQL
		SELECT 'CREATE ROLE $PG_USER' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER')\gexec
		ALTER ROLE $PG_USER LOGIN REPLICATION CREATEDB PASSWORD '$PG_PASSWORD';
		SELECT 'CREATE DATABASE $PG_DB OWNER $PG_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$PG_DB')\gexec
	SQL
}

start() {
	local t0=$SECONDS
	if ready; then
		log "already running and ready on $PG_HOST:$PG_PORT"
		return 0
	fi
	install
	[[ -d "$RUN" ]] && adopt_postmaster
	if ! pid_alive "$PIDFILE" postgres "$PROC_MATCH"; then
		if port_open "$PG_PORT"; then
			die "port $PG_PORT is taken by a server where user $PG_USER cannot log in; stop it or move testenv's with ETLD_TESTENV_PG_PORT"
		fi
		init_datadir
		launch
	else
		log "our postgres (pid $(<"$PIDFILE")) runs but is not ready yet"
	fi
	local rc=0
	wait_service "$START_TIMEOUT" "the postgres socket" "$PIDFILE" postgres "$PROC_MATCH" socket_ready || rc=$?
	((rc == 0)) || fail_with_log "$LOGFILE" "postgres did not come up"
	setup_sql >"$RUN/setup.log" 2>&1 || fail_with_log "$RUN/setup.log" "creating $PG_DB and user $PG_USER failed"
	wait_service "$START_TIMEOUT" "a TCP login as $PG_USER" "$PIDFILE" postgres "$PROC_MATCH" ready || rc=$?
	((rc == 0)) || fail_with_log "$LOGFILE" "postgres does not accept $PG_USER over TCP"
	log "ready after $((SECONDS - t0))s: $(dsn | sed 's/:[^:@]*@/:***@/')"
}

# adopt_postmaster: point PIDFILE at the postmaster that runs on DATA
# now, if one does (a start that failed half-way left PIDFILE stale, and
# the server up; a stop must still find it).
adopt_postmaster() {
	[[ -s "$DATA/postmaster.pid" ]] || return 0
	head -n 1 "$DATA/postmaster.pid" >"$PIDFILE.new"
	if pid_alive "$PIDFILE.new" postgres "$PROC_MATCH"; then
		mv -f "$PIDFILE.new" "$PIDFILE"
	else
		rm -f "$PIDFILE.new"
	fi
}

stop() {
	[[ -d "$RUN" ]] && adopt_postmaster
	if pid_alive "$PIDFILE" postgres "$PROC_MATCH"; then
		# A fast shutdown: SIGTERM (a smart one) would wait for every
		# client, and a test's replication connection may stay for long.
		log "stopping pid $(<"$PIDFILE")"
		as_user "$(bindir)/pg_ctl" -D "$DATA" -m fast -t 60 stop >"$RUN/pg_ctl.log" 2>&1 ||
			stop_pid "$PIDFILE" postgres "$PROC_MATCH" 10
		rm -f "$PIDFILE"
		log "stopped"
	elif port_open "$PG_PORT"; then
		log "a server on port $PG_PORT was not started by testenv; leaving it alone"
	else
		log "not running"
	fi
}

status() {
	if ready; then
		echo "postgres: ready on $PG_HOST:$PG_PORT"
		return 0
	fi
	echo "postgres: not ready"
	return 1
}

env_lines() {
	echo "export ETLD_TEST_PG_DSN='$(dsn)'"
	echo "export ETLD_TEST_PG_BIN=$(bindir)"
	# The variable configs/examples/postgres-*.yaml read.
	echo 'export ETLD_PG_DSN=$ETLD_TEST_PG_DSN'
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
env) env_lines ;;
bin) bindir ;;
*)
	echo "usage: $0 {start|stop|status|env|bin}" >&2
	exit 2
	;;
esac

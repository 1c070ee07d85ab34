#!/usr/bin/env bash
# MariaDB from Debian's packages on 127.0.0.1:3306, with a private data dir,
# database etld_test and user etld (password in lib.sh), reachable over TCP.
# The binary log is on, row-based with full images and full row metadata
# (column names in every table map), so that the mysql source's binlog
# capture (mode: cdc) can read it; the etld user may replicate.
#
# Usage: testenv/mariadb.sh {start|stop|status|dsn}
set -euo pipefail

# shellcheck source=testenv/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TESTENV_SERVICE=mariadb

STATE="$ETLD_TESTENV_DIR/mariadb"
DATA="$STATE/data"
RUN="$STATE/run"
PIDFILE="$RUN/mariadbd.pid" # written by start-stop-daemon: ours
PROC_MATCH="--datadir=$DATA" # in our mariadbd's command line
ERRLOG="$RUN/error.log"
SOCKET="$RUN/mysqld.sock"
START_TIMEOUT=${ETLD_TESTENV_MARIADB_TIMEOUT:-90}

# Run as the mysql system user when root (the package creates it), else as
# the calling user.
run_user() {
	if [[ "$(id -u)" -eq 0 ]]; then echo mysql; else id -un; fi
}

dsn() {
	printf '%s:%s@tcp(%s:%s)/%s\n' "$MYSQL_USER" "$MYSQL_PASSWORD" "$MYSQL_HOST" "$MYSQL_PORT" "$MYSQL_DB"
}

find_bin() {
	local name=$1 dir
	if command -v "$name" 2>/dev/null; then return 0; fi
	for dir in /usr/sbin /usr/bin; do
		if [[ -x "$dir/$name" ]]; then
			echo "$dir/$name"
			return 0
		fi
	done
	return 1
}

# ready: the etld user can run a query in etld_test over TCP.
ready() {
	MYSQL_PWD="$MYSQL_PASSWORD" mariadb --no-defaults --protocol=TCP \
		-h "$MYSQL_HOST" -P "$MYSQL_PORT" -u "$MYSQL_USER" \
		--connect-timeout=2 -N -e 'SELECT 1' "$MYSQL_DB" >/dev/null 2>&1
}

socket_ping() {
	mariadb-admin --no-defaults --socket="$SOCKET" -u "$(admin_user)" ping >/dev/null 2>&1
}

# admin_user: the account mariadb-install-db made for unix-socket logins.
admin_user() {
	if [[ "$(id -u)" -eq 0 ]]; then echo root; else id -un; fi
}

install() {
	if find_bin mariadbd >/dev/null && command -v mariadb >/dev/null; then
		return 0
	fi
	require_root "installing mariadb-server"
	log "installing mariadb-server and mariadb-client from apt"
	local t0=$SECONDS
	with_lock apt env DEBIAN_FRONTEND=noninteractive sh -c \
		'apt-get update -qq && apt-get install -y -q mariadb-server mariadb-client >/dev/null'
	log "installed in $((SECONDS - t0))s: $("$(find_bin mariadbd)" --version)"
}

init_datadir() {
	local user
	user=$(run_user)
	mkdir -p "$DATA" "$RUN"
	chmod 755 "$ETLD_TESTENV_DIR" "$STATE"
	chown "$user:" "$DATA" "$RUN"
	if [[ -d "$DATA/mysql" ]]; then
		return 0
	fi
	log "initialising data dir $DATA"
	# --tmpdir: not the shared /tmp, where other servers' temporary tables live.
	local args=(--no-defaults --datadir="$DATA" --tmpdir="$RUN" --skip-test-db)
	if [[ "$(id -u)" -eq 0 ]]; then args+=(--user=mysql); fi
	if ! mariadb-install-db "${args[@]}" >"$RUN/install-db.log" 2>&1; then
		rm -rf "${DATA:?}/mysql"
		fail_with_log "$RUN/install-db.log" "mariadb-install-db failed"
	fi
}

launch() {
	local mariadbd user
	mariadbd=$(find_bin mariadbd) || die "mariadbd not found"
	user=$(run_user)
	local args=(--no-defaults --datadir="$DATA" --tmpdir="$RUN" --socket="$SOCKET"
		--pid-file="$RUN/mysqld.pid" --port="$MYSQL_PORT"
		--bind-address="$MYSQL_HOST" --log-error="$ERRLOG"
		--skip-name-resolve
		# Binlog capture: ROW format, before and after images of every
		# column, column names in the table maps. Binlogs older than a
		# day go, in files of 256 MiB, so that the tests' writes do not
		# fill the disk of a machine that keeps its data dir.
		--server-id=1 --log-bin=mariadb-bin --binlog-format=ROW
		--binlog-row-image=FULL --binlog-row-metadata=FULL
		--binlog-expire-logs-seconds=86400 --max-binlog-size=256M)
	if [[ "$(id -u)" -eq 0 ]]; then args+=(--user=mysql); fi
	[[ -f "$ERRLOG" ]] && mv -f "$ERRLOG" "$ERRLOG.1"
	log "starting $mariadbd on $MYSQL_HOST:$MYSQL_PORT (data $DATA)"
	start-stop-daemon --start --background --make-pidfile --pidfile "$PIDFILE" \
		--exec "$mariadbd" -- "${args[@]}"
}

# setup: create the database and the TCP user; safe to repeat.
setup_sql() {
	mariadb --no-defaults --socket="$SOCKET" -u "$(admin_user)" <<-SQL
		CREATE DATABASE IF NOT EXISTS \`$MYSQL_DB\`;
		CREATE USER IF NOT EXISTS '$MYSQL_USER'@'%' IDENTIFIED BY '$MYSQL_PASSWORD';
		ALTER USER '$MYSQL_USER'@'%' IDENTIFIED BY '$MYSQL_PASSWORD';
		GRANT ALL PRIVILEGES ON *.* TO '$MYSQL_USER'@'%' WITH GRANT OPTION;
		GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '$MYSQL_USER'@'%';
	SQL
}

start() {
	local t0=$SECONDS
	if ready; then
		log "already running and ready on $MYSQL_HOST:$MYSQL_PORT"
		return 0
	fi
	install
	if ! pid_alive "$PIDFILE" mariadbd "$PROC_MATCH"; then
		if port_open "$MYSQL_PORT"; then
			die "port $MYSQL_PORT is taken by a server where user $MYSQL_USER cannot log in; stop it or free the port"
		fi
		init_datadir
		launch
	else
		log "our mariadbd (pid $(<"$PIDFILE")) runs but is not ready yet"
	fi
	local rc=0
	wait_service "$START_TIMEOUT" "mariadbd socket" "$PIDFILE" mariadbd "$PROC_MATCH" socket_ping || rc=$?
	((rc == 0)) || fail_with_log "$ERRLOG" "mariadbd did not come up"
	setup_sql >"$RUN/setup.log" 2>&1 || fail_with_log "$RUN/setup.log" "creating $MYSQL_DB and user $MYSQL_USER failed"
	wait_service "$START_TIMEOUT" "a TCP login as $MYSQL_USER" "$PIDFILE" mariadbd "$PROC_MATCH" ready || rc=$?
	((rc == 0)) || fail_with_log "$ERRLOG" "mariadbd does not accept $MYSQL_USER over TCP"
	log "ready after $((SECONDS - t0))s: $(dsn)"
}

stop() {
	if pid_alive "$PIDFILE" mariadbd "$PROC_MATCH"; then
		stop_pid "$PIDFILE" mariadbd "$PROC_MATCH" 60
		log "stopped"
	elif port_open "$MYSQL_PORT"; then
		log "a server on port $MYSQL_PORT was not started by testenv; leaving it alone"
	else
		log "not running"
	fi
}

status() {
	if ready; then
		echo "mariadb: ready on $MYSQL_HOST:$MYSQL_PORT ($(dsn))"
		return 0
	fi
	echo "mariadb: not ready"
	return 1
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
dsn) dsn ;;
*)
	echo "usage: $0 {start|stop|status|dsn}" >&2
	exit 2
	;;
esac

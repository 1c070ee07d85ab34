# shellcheck shell=bash
# shellcheck disable=SC2034 # the settings below are used by the scripts that source this file
# Shared helpers for the testenv scripts. Source it; do not run it.
#
# Layout of the state directory (ETLD_TESTENV_DIR):
#   mariadb/{data,run}          MariaDB data dir, socket, pid file, error log
#   postgres/{data,run}         PostgreSQL data dir, socket, pid file, log
#   kafka/{lib,data,config}     broker jars (from Maven), KRaft log dir, config
#   kafka/kafka.log             broker log
#   elasticsearch/dist/...      unpacked distribution (from Maven)
#   elasticsearch/{config,data,logs,tmp}
#   registry/{build,app}        Maven build of the schema registry, quarkus-app
#   registry/registry.log       its log
#   s3/bin/versitygw            the S3 server, built with Go (testenv/s3)
#   s3/{data,s3.log}            its buckets and objects, its log
# Downloads themselves stay in Maven's local repository (~/.m2) and apt's
# cache, so a fresh state dir rebuilds without the network once they are there.

umask 022

TESTENV_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export TESTENV_ROOT

# Services run as unprivileged users (mysql, postgres, etldtest) and must be able to
# traverse the state dir, so root's default lives outside /root (mode 700).
if [[ -z "${ETLD_TESTENV_DIR:-}" ]]; then
	if [[ "$(id -u)" -eq 0 ]]; then
		ETLD_TESTENV_DIR=/var/cache/etld-testenv
	else
		ETLD_TESTENV_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/etld-testenv"
	fi
fi
export ETLD_TESTENV_DIR

# Loopback addresses; the Go tests get them through testenv/.env. The ports
# can be moved (with a separate ETLD_TESTENV_DIR) to run a second set.
MYSQL_HOST=127.0.0.1
MYSQL_PORT=${ETLD_TESTENV_MYSQL_PORT:-3306}
MYSQL_DB=etld_test
MYSQL_USER=etld
MYSQL_PASSWORD=etld-test-pw
PG_HOST=127.0.0.1
PG_PORT=${ETLD_TESTENV_PG_PORT:-5432}
PG_DB=etld_test
PG_USER=etld
PG_PASSWORD=etld-test-pw
KAFKA_HOST=127.0.0.1
KAFKA_PORT=${ETLD_TESTENV_KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${ETLD_TESTENV_KAFKA_CONTROLLER_PORT:-9093}
# A second broker listener, SASL_PLAINTEXT, for the SASL tests: user
# KAFKA_SASL_USER with KAFKA_SASL_PASSWORD for PLAIN, SCRAM-SHA-256 and
# SCRAM-SHA-512.
KAFKA_SASL_PORT=${ETLD_TESTENV_KAFKA_SASL_PORT:-9094}
KAFKA_SASL_USER=etld
KAFKA_SASL_PASSWORD=etld-test-pw
ES_HOST=127.0.0.1
ES_PORT=${ETLD_TESTENV_ES_PORT:-9200}
ES_TRANSPORT_PORT=${ETLD_TESTENV_ES_TRANSPORT_PORT:-9300}
# The schema registry (Apicurio, Confluent's API under /apis/ccompat/v7).
REGISTRY_HOST=127.0.0.1
REGISTRY_PORT=${ETLD_TESTENV_REGISTRY_PORT:-8081}

S3_HOST=127.0.0.1
S3_PORT=${ETLD_TESTENV_S3_PORT:-7070}

log() {
	printf '%s [testenv/%s] %s\n' "$(date +%H:%M:%S)" "${TESTENV_SERVICE:-main}" "$*" >&2
}

die() {
	log "ERROR: $*"
	exit 1
}

# fail_with_log FILE MESSAGE: print the last lines of FILE, then die.
fail_with_log() {
	local file=$1
	shift
	log "ERROR: $*"
	if [[ -r "$file" ]]; then
		if grep -q -E 'ERROR|FATAL' "$file"; then
			log "first error lines in $file:"
			grep -m 8 -E 'ERROR|FATAL' "$file" | cut -c1-400 | sed 's/^/    | /' >&2
		fi
		log "last 60 lines of $file:"
		tail -n 60 "$file" | sed 's/^/    | /' >&2
	else
		log "(no log at $file)"
	fi
	exit 1
}

require_root() {
	[[ "$(id -u)" -eq 0 ]] || die "$1 needs root (run the test command as root, or start the service yourself)"
}

# wait_for TIMEOUT_SECONDS DESCRIPTION COMMAND...: run COMMAND every half
# second until it succeeds; return 1 when the deadline passes.
wait_for() {
	local timeout=$1 what=$2
	shift 2
	local deadline=$((SECONDS + timeout))
	while ! "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			log "timed out after ${timeout}s waiting for $what"
			return 1
		fi
		sleep 0.5
	done
}

# port_open PORT: something accepts TCP connections on 127.0.0.1:PORT.
port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pid_alive PIDFILE COMM MATCH: the pid in PIDFILE runs, its command name is
# COMM and its command line contains MATCH (a path under the state dir), so a
# recycled pid, or another service's java, is never mistaken for ours.
pid_alive() {
	local pidfile=$1 comm=$2 match=$3 pid cmdline
	[[ -s "$pidfile" ]] || return 1
	pid=$(<"$pidfile")
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	[[ "$(ps -o comm= -p "$pid" 2>/dev/null)" == "$comm" ]] || return 1
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	[[ "$cmdline" == *"$match"* ]]
}

# stop_pid PIDFILE COMM MATCH TIMEOUT: SIGTERM the pid in PIDFILE, wait, then
# SIGKILL it. Only ever touches that one pid, and only if pid_alive says it
# is ours.
stop_pid() {
	local pidfile=$1 comm=$2 match=$3 timeout=$4 pid
	if ! pid_alive "$pidfile" "$comm" "$match"; then
		rm -f "$pidfile"
		return 0
	fi
	pid=$(<"$pidfile")
	log "stopping pid $pid"
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + timeout))
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			log "pid $pid still alive after ${timeout}s, sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
	rm -f "$pidfile"
}

# wait_service TIMEOUT DESCRIPTION PIDFILE COMM MATCH COMMAND...: like
# wait_for, but gives up at once (status 2) when our process has died.
wait_service() {
	local timeout=$1 what=$2 pidfile=$3 comm=$4 match=$5
	shift 5
	local deadline=$((SECONDS + timeout))
	while ! "$@" >/dev/null 2>&1; do
		# start-stop-daemon writes the pid before the fork execs the
		# server: until then the pid's name is not yet the server's, so
		# only a pid that is gone means the process exited.
		if ! pid_alive "$pidfile" "$comm" "$match" && ! kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null; then
			log "the process for $what exited"
			return 2
		fi
		if ((SECONDS >= deadline)); then
			log "timed out after ${timeout}s waiting for $what"
			return 1
		fi
		sleep 0.5
	done
}

# with_lock NAME COMMAND...: serialise apt and Maven, which up.sh may
# otherwise run concurrently for different services.
with_lock() {
	local name=$1
	shift
	mkdir -p "$ETLD_TESTENV_DIR"
	(
		flock 9
		"$@"
	) 9>"$ETLD_TESTENV_DIR/.$name.lock"
}

# java_home: the JDK home for Kafka and Elasticsearch 8 (override with
# ETLD_TESTENV_JAVA_HOME).
java_home() {
	if [[ -n "${ETLD_TESTENV_JAVA_HOME:-}" ]]; then
		printf '%s\n' "$ETLD_TESTENV_JAVA_HOME"
		return
	fi
	if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
		printf '%s\n' "$JAVA_HOME"
		return
	fi
	local java
	java=$(command -v java) || die "java not found on PATH (Kafka and Elasticsearch need Java 17+)"
	java=$(readlink -f "$java")
	printf '%s\n' "${java%/bin/java}"
}

# check_java HOME: the JDK at HOME is version 17 or later.
check_java() {
	local home=$1 version major
	[[ -x "$home/bin/java" ]] || die "no java at $home/bin/java"
	version=$("$home/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p')
	major=${version%%.*}
	[[ "$major" =~ ^[0-9]+$ && "$major" -ge 17 ]] || die "java at $home is version '$version'; need 17 or later"
}

# mvn_fetch POM GOAL_ARGS...: run Maven quietly in batch mode on POM.
mvn_fetch() {
	command -v mvn >/dev/null || die "mvn not found (install Maven 3.8+)"
	local pom=$1
	shift
	with_lock mvn mvn -q -B -f "$pom" "$@"
}

# stamp_matches STAMPFILE CONTENT: STAMPFILE holds exactly CONTENT.
stamp_matches() {
	[[ -f "$1" && "$(<"$1")" == "$2" ]]
}

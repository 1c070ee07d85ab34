# shellcheck shell=bash
# Shared by scripts/nexmark's scripts and `go run ./bench -nexmark` (through
# udf.sh): the nexmark project's sources at the commit etld's queries and
# Flink recordings follow, and q14's user function built from them. Source
# it; do not run it.
#
#   NEXMARK_GIT     a clone of the nexmark/nexmark repository (a git dir or a
#                   work tree); cloned from GitHub into the work directory
#                   when unset
#   NEXMARK_COMMIT  another commit of it (the one below when unset)

# The queries' commit, as scripts/nexmark/record.sh's generator.
NEXMARK_DEFAULT_COMMIT=6b3646c3baec701f1fa74baf938d235f742e5d3c

# nexmark_sources WORK: extracts nexmark-flink/src/main at the commit into
# WORK and sets nexmark_commit to the commit's full hash. Exports
# NEXMARK_GIT (the clone it made, if any) so that a second call, or a
# script this one runs, clones no more.
nexmark_sources() {
	local work=$1
	if [[ -z "${NEXMARK_GIT:-}" ]]; then
		git clone -q https://github.com/nexmark/nexmark "$work/nexmark"
		NEXMARK_GIT="$work/nexmark"
	fi
	export NEXMARK_GIT
	nexmark_commit=$(git -C "$NEXMARK_GIT" rev-parse "${NEXMARK_COMMIT:-$NEXMARK_DEFAULT_COMMIT}^{commit}")
	git -C "$NEXMARK_GIT" archive "$nexmark_commit" nexmark-flink/src/main | tar -x -C "$work"
}

# nexmark_udf_jar WORK OUT: compiles q14's user function (the project's
# CountChar, under nexmark_sources' WORK) against testenv/flink.sh's Flink
# jars, which it installs when missing, into the jar OUT (written whole or
# not at all).
nexmark_udf_jar() {
	local work=$1 out=$2 root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	bash "$root/testenv/flink.sh" start
	local lib
	lib="$(dirname "$(bash "$root/testenv/flink.sh" env | sed -n 's/^export ETLD_TEST_FLINK=//p')")/lib"
	rm -rf "$work/udf"
	mkdir -p "$work/udf" "$(dirname "$out")"
	javac -nowarn -d "$work/udf" -cp "$lib/*" \
		"$work/nexmark-flink/src/main/java/com/github/nexmark/flink/udf/CountChar.java"
	jar cf "$out.tmp" -C "$work/udf" .
	mv "$out.tmp" "$out"
}

#!/usr/bin/env bash
# Records what bench/nexmark's TestMatchesFlink compares etld against:
# Flink 2.3's final table of each Nexmark query, the nexmark project's own
# SQL (ddl_gen.sql, ddl_views.sql, qN.sql at the commit below), run in local
# mode by testenv/flink.sh's runner over the events etld's nexmark source
# writes as json. Writes bench/nexmark/flink/sql/qN.sql, the Flink script of
# each query (the generator's DDL reading that file instead of generating,
# and what else Flink 2.3 needs changed, written in its header; `go run
# ./bench -nexmark` runs them too), and for each event count
# bench/nexmark/flink/EVENTS/qN.txt: the row count, the SHA-256 of the
# sorted final table and a sample of its rows, or Flink's error. Flink's
# whole tables stay in bench/.cache/nexmark/flink-EVENTS/.
#
# Needs git, Java (testenv/flink.sh fetches Flink's jars with Maven once).
#
#   NEXMARK_GIT  a clone of the nexmark/nexmark repository (a git dir or a
#                work tree); cloned from GitHub into a temporary directory
#                when unset (lib.sh, with NEXMARK_COMMIT)
#   EVENTS       how many events, one recording each ("100000 1000000": make
#                test checks the first, a run without -race the second)
#   ONLY         some queries only, e.g. q3,q5 (all when unset)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/nexmark/lib.sh
source scripts/nexmark/lib.sh
EVENTS=${EVENTS:-100000 1000000}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

nexmark_sources "$work"
queries="$work/nexmark-flink/src/main/resources/queries"

# q14's user function, compiled against the runner's Flink jars (which
# this installs when missing).
nexmark_udf_jar "$work" "$work/udf.jar"
eval "$(bash testenv/flink.sh env)"

for n in $EVENTS; do
	go test -count=1 -timeout 600m -run '^TestRecordFlink$' -v ./bench/nexmark \
		-args -record -queries "$queries" -udf-jar "$work/udf.jar" -commit "$nexmark_commit" \
		-events "$n" -only "${ONLY:-}"
done

#!/usr/bin/env bash
# Records what sources/nexmark's reference test compares against: the
# reference Nexmark generator's first events (nexmark-flink's generator
# classes, compiled here with javac; no Flink cluster), dumped by Dump.java
# with a fixed seed and base time, kept as a SHA-256 digest of the whole
# dump and its first lines as a sample:
#   sources/nexmark/testdata/reference.sha256
#   sources/nexmark/testdata/reference-head.tsv.gz
#
# Needs git, javac/java and mvn (the generator classes compile against
# flink-core, flink's shaded jackson, slf4j and jsr305, fetched by mvn from the
# usual Maven repository into ~/.m2).
#
#   NEXMARK_GIT  a clone of the nexmark/nexmark repository (a git dir or a
#                work tree); cloned from GitHub into a temporary directory
#                when unset
#   EVENTS       how many events (1000000)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/scripts/nexmark"
OUT="$ROOT/sources/nexmark/testdata"
# The reference's commit, so a re-recording reads the same generator.
COMMIT=6b3646c3baec701f1fa74baf938d235f742e5d3c
EVENTS=${EVENTS:-1000000}
# Must match the test: seed and base time of the recorded run.
SEED=42
BASE_TIME=1700000000000
SAMPLE=2000

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ -z "${NEXMARK_GIT:-}" ]]; then
	git clone -q https://github.com/nexmark/nexmark "$work/nexmark"
	NEXMARK_GIT="$work/nexmark"
fi
commit=$(git -C "$NEXMARK_GIT" rev-parse "${NEXMARK_COMMIT:-$COMMIT}^{commit}")
mkdir -p "$work/src"
git -C "$NEXMARK_GIT" archive "$commit" nexmark-flink/src/main/java | tar -x -C "$work/src"
J="$work/src/nexmark-flink/src/main/java/com/github/nexmark/flink"

mkdir -p "$work/lib"
for a in org.apache.flink:flink-core:2.3.0 \
	org.apache.flink:flink-shaded-jackson:2.20.1-21.0 \
	org.slf4j:slf4j-api:1.7.36 \
	com.google.code.findbugs:jsr305:1.3.9; do
	mvn -q dependency:copy -Dartifact="$a" -DoutputDirectory="$work/lib" >/dev/null
done

mkdir -p "$work/classes"
javac -nowarn -d "$work/classes" -cp "$work/lib/*" \
	"$J/NexmarkConfiguration.java" "$J/utils/NexmarkUtils.java" \
	"$J"/generator/GeneratorConfig.java "$J"/generator/NexmarkGenerator.java \
	"$J"/generator/model/*.java "$J"/model/*.java "$HERE/Dump.java" 2>"$work/javac.log" ||
	{ cat "$work/javac.log" >&2; exit 1; }

java -cp "$work/classes:$work/lib/*" Dump "$EVENTS" "$SEED" "$BASE_TIME" >"$work/dump.tsv"
mkdir -p "$OUT"
printf '%s %s events seed %s base_time %s nexmark %s\n' \
	"$(sha256sum "$work/dump.tsv" | cut -d' ' -f1)" "$EVENTS" "$SEED" "$BASE_TIME" "$commit" >"$OUT/reference.sha256"
head -n "$SAMPLE" "$work/dump.tsv" | gzip -9n >"$OUT/reference-head.tsv.gz"
echo "recorded $(wc -l <"$work/dump.tsv") events: $(cat "$OUT/reference.sha256")"

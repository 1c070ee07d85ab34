#!/usr/bin/env bash
# Builds q14's user function jar (the nexmark project's CountChar, which
# Flink's q14 script adds with ADD JAR) into OUT.jar, as
# scripts/nexmark/flink.sh builds it for the recordings; `go run ./bench
# -nexmark` runs this once into its cache. Needs git, Java (testenv/flink.sh
# fetches Flink's jars with Maven once).
#
# Usage: scripts/nexmark/udf.sh OUT.jar   (NEXMARK_GIT, NEXMARK_COMMIT: lib.sh)
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 OUT.jar" >&2
	exit 2
fi
# shellcheck source=scripts/nexmark/lib.sh
source "$(dirname "$0")/lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nexmark_sources "$work"
nexmark_udf_jar "$work" "$1"

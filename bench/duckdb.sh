#!/usr/bin/env bash
# DuckDB for the bench runner: a Python venv under the cache dir with
# duckdb from the package index pip is configured for. Prints the venv's
# python on stdout; exits 1 (and says why on stderr) when Python or the
# package is not to be had, which the runner reports as "not run".
#
# Usage: bench/duckdb.sh [CACHE_DIR]   (default bench/.cache)
set -euo pipefail
DUCKDB_VERSION=${DUCKDB_VERSION:-2.0.0}
cache=${1:-bench/.cache}
venv="$cache/duckdb-$DUCKDB_VERSION"
py="$venv/bin/python"
if [[ -x "$py" ]] && "$py" -c 'import duckdb' 2>/dev/null; then
	echo "$py"
	exit 0
fi
command -v python3 >/dev/null || { echo "duckdb.sh: no python3" >&2; exit 1; }
rm -rf "$venv.tmp"
python3 -m venv "$venv.tmp" >&2
"$venv.tmp/bin/python" -m pip install --quiet --disable-pip-version-check "duckdb==$DUCKDB_VERSION" >&2
rm -rf "$venv"
mv "$venv.tmp" "$venv"
# A venv records its own path in its scripts, but the interpreter link
# and site-packages work from the new place, which is all we use.
echo "$py"

#!/usr/bin/env bash
# Parquet write of N rows (10M by default): etld (file source csv -> file
# sink parquet) against DuckDB's COPY ... TO 'x.parquet' over the same CSV,
# both snappy, row groups of 122880 rows, runs interleaved. Prints rows/s,
# CPU seconds (user+sys) and peak RSS of each run.
#
#   bench/parquet/run.sh [ROWS] [ROUNDS]
#
# With BASELINE=path/to/etld (a binary built from another commit), that
# binary runs in each round too, between the two, so a change is measured
# against its baseline and DuckDB under the same load.
#
# Needs ETLD_TEST_PYTHON (testenv/tools.sh: a Python with duckdb).
set -euo pipefail
rows=${1:-10000000}
rounds=${2:-3}
py=${ETLD_TEST_PYTHON:?run testenv/tools.sh start and source testenv/.env}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/etld" "$root/cmd/etld"
"$py" - "$work/in.csv" "$rows" <<'PY'
import sys, duckdb
duckdb.sql(f"""COPY (SELECT i AS id, 'sensor_' || (i % 500) AS sensor, round((i * 7919 % 4000) / 100.0 - 5, 2) AS temp,
  TIMESTAMP '2026-01-01' + to_milliseconds(i * 37) AS ts FROM range({sys.argv[2]}) t(i))
  TO '{sys.argv[1]}' (HEADER false)""")
PY
cat >"$work/etld.yaml" <<YAML
version: 1
name: parquet-bench
sources:
  - name: readings
    type: file
    path: $work/in.csv
    format: csv
    schema:
      - id BIGINT
      - sensor STRING
      - temp DOUBLE
      - ts TIMESTAMP(3)
sinks:
  - name: out
    from: readings
    type: file
    path: $work/etld.out
    format: {type: parquet, compression: snappy, row_group_size: 122880}
    rolling: {file_size: 64GiB}
YAML
cat >"$work/duck_copy.py" <<PY
import duckdb
duckdb.sql("""COPY (SELECT * FROM read_csv('$work/in.csv', header = false,
  columns = {'id': 'BIGINT', 'sensor': 'VARCHAR', 'temp': 'DOUBLE', 'ts': 'TIMESTAMP'}))
  TO '$work/duckdb.parquet' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 122880)""")
PY

measure() { # name command...
	local name=$1 out
	shift
	/usr/bin/time -o "$work/time" -f "%e %U %S %M" "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; return 1; }
	read -r el us sy rss <"$work/time"
	awk -v n="$name" -v r="$rows" -v el="$el" -v us="$us" -v sy="$sy" -v rss="$rss" \
		'BEGIN { printf "%-7s %6.2f s  %5.2f M rows/s  CPU %6.2f s  RSS %5d MiB\n", n, el, r/el/1e6, us+sy, rss/1024 }'
}
echo "rows: $rows; csv: $(du -h "$work/in.csv" | cut -f1); cores: $(nproc)"
for _ in $(seq "$rounds"); do
	rm -rf "$work/etld.out" "$work/duckdb.parquet"
	measure etld "$work/etld" run "$work/etld.yaml"
	if [[ -n "${BASELINE:-}" ]]; then
		rm -rf "$work/etld.out"
		measure base "$BASELINE" run "$work/etld.yaml"
	fi
	measure duckdb "$py" "$work/duck_copy.py"
done
echo "files: etld $(du -sh "$work/etld.out" | cut -f1), duckdb $(du -h "$work/duckdb.parquet" | cut -f1)"
"$py" - "$work" <<'PY'
import sys, duckdb
w = sys.argv[1]
a = duckdb.sql(f"SELECT count(*), sum(id), round(sum(temp), 2), max(ts), count(DISTINCT sensor) FROM read_parquet('{w}/etld.out/*.parquet')").fetchall()
b = duckdb.sql(f"SELECT count(*), sum(id), round(sum(temp), 2), max(ts), count(DISTINCT sensor) FROM read_parquet('{w}/duckdb.parquet')").fetchall()
print("same content:", a == b, a)
PY

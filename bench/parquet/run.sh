#!/usr/bin/env bash
# Parquet write of N rows (10M by default): etld (file source csv -> file
# sink parquet) against DuckDB's COPY ... TO 'x.parquet' over the same CSV,
# both snappy, row groups of 122880 rows, runs interleaved. Prints rows/s,
# CPU seconds (user+sys) and peak RSS of each run.
#
#   bench/parquet/run.sh [ROWS] [ROUNDS]
#
# SHAPE picks the table: readings (the default: BIGINT, STRING, DOUBLE,
# TIMESTAMP(3), no NULLs) or orders (BIGINT, DECIMAL(10,2), INT, DATE,
# TIMESTAMP(6), STRING, NULLs in three of them), so that a change is
# checked on types and NULLs the first does not have.
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
shape=${SHAPE:-readings}
case $shape in
readings)
	gen="SELECT i AS id, 'sensor_' || (i % 500) AS sensor, round((i * 7919 % 4000) / 100.0 - 5, 2) AS temp,
  TIMESTAMP '2026-01-01' + to_milliseconds(i * 37) AS ts FROM range(ROWS) t(i)"
	schema=$'      - id BIGINT\n      - sensor STRING\n      - temp DOUBLE\n      - ts TIMESTAMP(3)'
	csvopts=""
	duckcols="{'id': 'BIGINT', 'sensor': 'VARCHAR', 'temp': 'DOUBLE', 'ts': 'TIMESTAMP'}"
	check="count(*), sum(id), round(sum(temp), 2), max(ts), count(DISTINCT sensor)"
	;;
orders)
	gen="SELECT i AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE ((i * 7919 % 10000000) / 100.0)::DECIMAL(10,2) END AS price,
  CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 1000)::INTEGER END AS qty, DATE '2026-01-01' + (i % 400)::INTEGER AS day,
  TIMESTAMP '2026-01-01' + to_microseconds(i * 37123) AS ts, CASE WHEN i % 5 = 0 THEN NULL ELSE 'note ' || (i % 5000) END AS note
  FROM range(ROWS) t(i)"
	schema=$'      - id BIGINT\n      - price DECIMAL(10,2)\n      - qty INT\n      - day DATE\n      - ts TIMESTAMP(6)\n      - note STRING'
	# An empty field is NULL, as DuckDB writes and reads it.
	csvopts=', null_literal: ""'
	duckcols="{'id': 'BIGINT', 'price': 'DECIMAL(10,2)', 'qty': 'INTEGER', 'day': 'DATE', 'ts': 'TIMESTAMP', 'note': 'VARCHAR'}"
	check="count(*), sum(id), sum(price), count(qty), sum(qty), max(day), max(ts), count(note), count(DISTINCT note)"
	;;
*)
	echo "SHAPE=$shape: want readings or orders" >&2
	exit 2
	;;
esac
"$py" - "$work/in.csv" "$rows" "$gen" <<'PY'
import sys, duckdb
duckdb.sql(f"COPY ({sys.argv[3].replace('ROWS', sys.argv[2])}) TO '{sys.argv[1]}' (HEADER false)")
PY
cat >"$work/etld.yaml" <<YAML
version: 1
name: parquet-bench
sources:
  - name: readings
    type: file
    path: $work/in.csv
    format: {type: csv$csvopts}
    schema:
$schema
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
  columns = $duckcols))
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
echo "shape: $shape; rows: $rows; csv: $(du -h "$work/in.csv" | cut -f1); cores: $(nproc)"
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
"$py" - "$work" "$check" <<'PY'
import sys, duckdb
w, q = sys.argv[1], sys.argv[2]
a = duckdb.sql(f"SELECT {q} FROM read_parquet('{w}/etld.out/*.parquet')").fetchall()
b = duckdb.sql(f"SELECT {q} FROM read_parquet('{w}/duckdb.parquet')").fetchall()
print("same content:", a == b, a, "" if a == b else b)
PY

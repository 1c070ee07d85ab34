#!/usr/bin/env bash
# Kafka Avro -> Parquet on object storage, end to end: N records (1M by
# default) framed for the schema registry (avro-confluent) in a topic of
# 4 partitions, read to the topic's end (stop: latest) by etld and
# written as Parquet part files to an S3 bucket. Beside it, in the same
# rounds and interleaved, the same read into a blackhole (what reading
# and decoding cost alone) and into Parquet on the local disk (what the
# object store adds). Prints rows/s, CPU seconds (user+sys) and peak RSS
# of each run, and checks the objects written with DuckDB.
#
#   bench/lake/run.sh [ROWS] [ROUNDS]
#
# Needs kafka, registry and s3 up and ETLD_TEST_PYTHON (a Python with
# duckdb): bash testenv/up.sh kafka registry s3 && source testenv/.env.
set -euo pipefail
rows=${1:-1000000}
rounds=${2:-3}
: "${ETLD_TEST_KAFKA:?run testenv/up.sh kafka registry s3 and source testenv/.env}"
: "${ETLD_TEST_SCHEMA_REGISTRY:?the schema registry is not up}"
: "${ETLD_TEST_S3_ENDPOINT:?the S3 server is not up}"
py=${ETLD_TEST_PYTHON:?run testenv/tools.sh start and source testenv/.env}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run_id="lake$(date +%s)$$"
topic="bench-$run_id"
bucket="bench-$run_id"

go build -o "$work/etld" "$root/cmd/etld"
export AWS_ACCESS_KEY_ID=$ETLD_TEST_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$ETLD_TEST_S3_SECRET_KEY
curl -sf --aws-sigv4 "aws:amz:$ETLD_TEST_S3_REGION:s3" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
	-X PUT "$ETLD_TEST_S3_ENDPOINT/$bucket" >/dev/null

schema='    schema:
      - order_id BIGINT
      - customer STRING
      - product STRING
      - quantity INT
      - price DECIMAL(10, 2)
      - discount DOUBLE
      - ordered_at TIMESTAMP(3)'
registry="{type: avro-confluent, url: \"$ETLD_TEST_SCHEMA_REGISTRY\"}"

cat >"$work/fill.yaml" <<YAML
version: 1
name: lake-fill
sources:
  - name: orders
    type: datagen
    rows: $rows
    seed: 7
$schema
    fields:
      order_id: {kind: sequence, start: 1, end: $rows}
      customer: {length: 12}
      product: {length: 20}
      quantity: {min: 1, max: 50}
      discount: {min: 0, max: 0.5, null_rate: 0.2}
      ordered_at: {max_past: 30d}
sinks:
  - name: topic
    from: orders
    type: kafka
    brokers: $ETLD_TEST_KAFKA
    topic: $topic
    create_topic: true
    partitions: 4
    partitioner: round-robin
    format: $registry
YAML

read_yaml() { # name sink-yaml
	cat <<YAML
version: 1
name: lake-$1
sources:
  - name: orders
    type: kafka
    brokers: $ETLD_TEST_KAFKA
    topic: $topic
    start: earliest
    stop: latest
    format: $registry
$schema
sinks:
  - name: out
    from: orders
$2
YAML
}
read_yaml s3 "    type: file
    path: s3://$bucket/orders
    s3: {endpoint: \"$ETLD_TEST_S3_ENDPOINT\", region: $ETLD_TEST_S3_REGION}
    format: {type: parquet, compression: snappy}" >"$work/s3.yaml"
read_yaml local "    type: file
    path: $work/local
    format: {type: parquet, compression: snappy}" >"$work/local.yaml"
read_yaml blackhole "    type: blackhole" >"$work/blackhole.yaml"

measure() { # name command...
	local name=$1
	shift
	/usr/bin/time -o "$work/time" -f "%e %U %S %M" "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; return 1; }
	read -r el us sy rss <"$work/time"
	awk -v n="$name" -v r="$rows" -v el="$el" -v us="$us" -v sy="$sy" -v rss="$rss" \
		'BEGIN { printf "%-10s %6.2f s  %5.2f M rows/s  CPU %6.2f s (%4.2f us/row)  RSS %5d MiB\n", n, el, r/el/1e6, us+sy, (us+sy)/r*1e6, rss/1024 }'
}

"$work/etld" run "$work/fill.yaml" >/dev/null 2>"$work/fill.err" || { cat "$work/fill.err" >&2; exit 1; }
echo "rows: $rows; cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
	rm -rf "$work/local"
	measure blackhole "$work/etld" run "$work/blackhole.yaml"
	measure local "$work/etld" run "$work/local.yaml"
	# Each round writes under its own prefix: the sink refuses nothing
	# there, and the last round's objects are the ones checked.
	sed -i "s|s3://$bucket/orders[0-9]*|s3://$bucket/orders$round|" "$work/s3.yaml"
	measure s3 "$work/etld" run "$work/s3.yaml"
done

# The objects of the last round, read back from the bucket by etld's
# file source into CSV, against the local files, both read by DuckDB.
cat >"$work/check.yaml" <<YAML
version: 1
name: lake-check
sources:
  - name: orders
    type: file
    path: s3://$bucket/orders$rounds/*.parquet
    s3: {endpoint: "$ETLD_TEST_S3_ENDPOINT", region: $ETLD_TEST_S3_REGION}
    format: parquet
$schema
sinks:
  - name: out
    from: orders
    type: file
    path: $work/check.csv
    format: csv
YAML
"$work/etld" run "$work/check.yaml" >/dev/null 2>"$work/check.err" || { cat "$work/check.err" >&2; exit 1; }
"$py" - "$work" <<'PY'
import sys, duckdb
w = sys.argv[1]
cols = "{'order_id': 'BIGINT', 'customer': 'VARCHAR', 'product': 'VARCHAR', 'quantity': 'INT', 'price': 'DECIMAL(10,2)', 'discount': 'DOUBLE', 'ordered_at': 'TIMESTAMP'}"
q = "SELECT count(*), count(DISTINCT order_id), sum(quantity), sum(price), max(ordered_at) FROM {}"
a = duckdb.sql(q.format(f"read_csv('{w}/check.csv', header = false, columns = {cols})")).fetchall()
b = duckdb.sql(q.format(f"read_parquet('{w}/local/*.parquet')")).fetchall()
print("objects read back:", a, "same as the local files:", a == b)
sys.exit(0 if a == b and a[0][0] > 0 else 1)
PY

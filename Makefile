.PHONY: test run-example testenv-up testenv-down image conformance-flink

# Starts MariaDB, Kafka and Elasticsearch on loopback (testenv/), runs go vet
# and go test -race against them, fuzzes pipeline files for 30s (FuzzLoadPlan),
# and stops what it started.
# Pass go test flags with ARGS, e.g. make test ARGS="-timeout 30m -run Kafka".
test:
	bash scripts/test.sh $(ARGS)

run-example:
	go run ./cmd/etld run configs/examples/hello-datagen.yaml

# Leave the services running for go test by hand: source testenv/.env afterwards.
testenv-up:
	bash testenv/up.sh

testenv-down:
	bash testenv/down.sh

# The container image from a binary built here (Dockerfile.prebuilt): the
# Dockerfile's image without its golang build stage. Needs podman.
# IMAGE names the tag, e.g. make image IMAGE=localhost/etld:1.2.
IMAGE ?= localhost/etld:dev
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
image:
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o build/etld ./cmd/etld
	bash scripts/image.sh build/etld $(IMAGE)

# Re-records Flink's results for the conformance suite (conformance/cases):
# Flink 2.3 in local mode (testenv/flink.sh fetches it once) runs every case
# in one JVM and each case file gets its flink.out or flink.err section.
# CASE narrows it to the cases matching a regular expression, e.g.
# make conformance-flink CASE='^fn-'. make test checks etld against them.
CASE ?=
conformance-flink:
	bash testenv/flink.sh start
	eval "$$(bash testenv/flink.sh env)" && go test -count=1 -timeout 120m -run TestRecordFlink ./conformance -args -record -case '$(CASE)'

# The whole-process benchmarks (bench/README.md): generates the data once into
# bench/.cache, then runs each workload on etld, the Go baselines, DuckDB (a
# venv under bench/.cache, bench/duckdb.sh) and Flink (testenv/flink.sh, where
# Java is present) interleaved, and prints the table and the targets.
# BENCH_ROWS, BENCH_RUNS, BENCH_ONLY (e.g. W1,W2) narrow it; BENCH_GO=1 also
# runs the Go benchmarks against Flink of pipeline/ (bench-go); BENCH_SINKS=1
# the sinks against their raw clients (bench-sinks), with the services
# testenv/up.sh starts on loopback.
.PHONY: bench bench-go bench-sinks
BENCH_ROWS ?= 10M
BENCH_RUNS ?= 3
BENCH_ONLY ?=
BENCH_GO ?=
BENCH_SINKS ?=
bench:
	go run ./bench -rows $(BENCH_ROWS) -runs $(BENCH_RUNS) -only '$(BENCH_ONLY)' -json bench/.cache/bench.json
	@if [ -n "$(BENCH_GO)" ]; then $(MAKE) --no-print-directory bench-go; fi
	@if [ -n "$(BENCH_SINKS)" ]; then $(MAKE) --no-print-directory bench-sinks; fi

# Nexmark (bench/nexmark/README.md): every query, etld against Flink 2.3 local
# over the same events (etld's nexmark source written once as json into
# bench/.cache/nexmark), interleaved runs; prints the table per query.
# NEXMARK_EVENTS=100M for the large run (about 34 GB of json on disk),
# NEXMARK_ONLY=q0,q5 for some queries.
.PHONY: bench-nexmark nexmark-flink
NEXMARK_EVENTS ?= 10M
NEXMARK_RUNS ?= 3
NEXMARK_ONLY ?=
NEXMARK_FLINK_STATE ?=
bench-nexmark:
	go run ./bench -nexmark -rows $(NEXMARK_EVENTS) -runs $(NEXMARK_RUNS) -only '$(NEXMARK_ONLY)' -flink-state '$(NEXMARK_FLINK_STATE)' -json bench/.cache/nexmark.json

# Records Flink 2.3's final table of every Nexmark query over the events of
# etld's nexmark source (scripts/nexmark/flink.sh: the nexmark project's SQL,
# cloned from GitHub unless NEXMARK_GIT names a clone; needs Java), which
# make test compares etld's with (bench/nexmark, TestMatchesFlink).
nexmark-flink:
	bash scripts/nexmark/flink.sh

# etld export flink of every Nexmark query Flink runs, on a Flink 2.3
# standalone session cluster on loopback (testenv/flinkcluster.sh: a
# JobManager and two TaskManagers) at parallelism 4, each final table
# against the recorded one, and one run that loses a TaskManager
# (bench/nexmark TestFlinkCluster; make test runs three queries and the
# kill). NEXMARK_CLUSTER_EVENTS=1000000 for the larger recordings.
.PHONY: nexmark-cluster
NEXMARK_CLUSTER_EVENTS ?= 100000
nexmark-cluster:
	bash testenv/flinkcluster.sh start
	eval "$$(bash testenv/flink.sh env)" && eval "$$(bash testenv/flinkcluster.sh env)" && \
		go test -count=1 -timeout 120m -run '^TestFlinkCluster$$' -v ./bench/nexmark -args -cluster-all -events $(NEXMARK_CLUSTER_EVENTS)

bench-go:
	if [ -z "$$ETLD_TEST_FLINK" ] && command -v java >/dev/null; then bash testenv/flink.sh start && eval "$$(bash testenv/flink.sh env)"; fi; \
	go test -count=1 -timeout 60m -run XXX -bench AgainstFlink -benchtime 1x ./pipeline/

# Each sink against the strongest plain client of its server (MySQL upsert:
# one and two connections; PostgreSQL: pgx's unnest upsert and CopyFrom;
# Kafka to Kafka: a reader per partition feeding one Writer; Elasticsearch:
# a BulkIndexer), 1M changes each, interleaved passes;
# each prints rows/s and the ratio.
bench-sinks:
	bash testenv/up.sh mariadb postgres kafka elasticsearch >/dev/null
	. testenv/.env && ETLD_BENCH_ROWS=$${ETLD_BENCH_ROWS:-1000000} go test -count=1 -timeout 60m -run '^$$' -bench 'Upsert|Append|KafkaToKafka' -benchtime 3x ./sinks/mysql/ ./sinks/postgres/ ./sinks/kafka/ ./sinks/elasticsearch/

# Change data capture against the plain clients (bench/README.md): the
# PostgreSQL source's capture (a slot's stream) against a pglogrepl loop
# that only parses the messages and its snapshot against COPY TO STDOUT;
# the MySQL binlog capture against go-mysql's BinlogSyncer loop that only
# decodes the events; the PostgreSQL sink's upsert and append against a
# raw pgx loop. Interleaved passes, rows/s and ratios. ETLD_BENCH_ROWS
# sets the size (1M).
.PHONY: bench-cdc
bench-cdc:
	bash testenv/up.sh postgres mariadb >/dev/null
	. testenv/.env && ETLD_BENCH_ROWS=$${ETLD_BENCH_ROWS:-1000000} go test -count=1 -timeout 60m -run '^$$' -bench 'Capture|Snapshot' -benchtime 3x ./sources/postgres/
	. testenv/.env && ETLD_BENCH_ROWS=$${ETLD_BENCH_ROWS:-1000000} go test -count=1 -timeout 60m -run '^$$' -bench 'CDCAgainstRawBinlog' -benchtime 1x ./sources/mysql/
	. testenv/.env && ETLD_BENCH_ROWS=$${ETLD_BENCH_ROWS:-1000000} go test -count=1 -timeout 60m -run '^$$' -bench 'Upsert|Append' -benchtime 3x ./sinks/postgres/

# Kafka Avro -> Parquet on object storage end to end (bench/README.md):
# LAKE_ROWS records framed for the schema registry, read to the topic's
# end into Parquet objects on the S3 server, beside the same read into a
# blackhole and into local Parquet, interleaved rounds; rows/s, CPU, RSS.
LAKE_ROWS ?= 1000000
.PHONY: bench-lake
bench-lake:
	bash testenv/up.sh kafka registry s3 tools >/dev/null
	. testenv/.env && bash bench/lake/run.sh $(LAKE_ROWS) 3

# The example functions of the Go SDK for WebAssembly (sdk/go/examples,
# docs/udf.md) as modules in bin/udf/, built with this Go toolchain.
.PHONY: udf-examples
udf-examples:
	@mkdir -p bin/udf
	for d in sdk/go/examples/*/; do \
		GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/udf/$$(basename $$d).wasm ./$$d || exit 1; \
	done

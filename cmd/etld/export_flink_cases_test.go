package main

import (
	"os"
	"path/filepath"
	"testing"
)

// flinkCase is a pipeline that TestExportFlinkOnFlink runs on etld and,
// exported, on Flink.
type flinkCase struct {
	name string
	// file is the pipeline's path in the work directory; yaml its text
	// for a pipeline made here ("" for an example). subst are old, new
	// pairs replaced in the text. {{side}} (etld or flink) and {{uniq}}
	// make topics and tables each side's own.
	file  string
	yaml  string
	subst []string
	sinks []flinkSink
	// differs is the text of a listed difference that changes Flink's
	// table; countOnly compares the number of rows only (random data).
	differs   string
	countOnly bool
	// listed are differences the script must list that the comparison
	// of values passes over (normalizeLine, canonicalJSON).
	listed []string
	// topics are created before the runs; before fills them.
	topics []string
	before func(t *testing.T, brokers string, names func(string) []string)
}

// readingsCSV is the input of the pipelines made here: id, ts (ms),
// temp, region.
const readingsCSV = `s1,1000,20.5,eu
s2,2000,18.0,us
s1,3000,22.0,eu
s3,4000,-3.5,asia
s2,12000,19.5,us
s1,15000,30.25,eu
s3,21000,1.0,asia
s4,22000,25.0,eu
`

// productsCanal holds single-row Canal messages (the multi-row UPDATE
// is a listed difference, see the cdc example).
const productsCanal = `{"data":[{"id":"1","name":"a","category":"tools","weight":"1.50"}],"type":"INSERT","database":"db","table":"products"}
{"data":[{"id":"2","name":"b","category":"tools","weight":"2.25"}],"type":"INSERT","database":"db","table":"products"}
{"data":[{"id":"3","name":"c","category":"parts","weight":"0.10"}],"type":"INSERT","database":"db","table":"products"}
{"data":[{"id":"2","name":"b","category":"parts","weight":"2.25"}],"old":[{"category":"tools"}],"type":"UPDATE","database":"db","table":"products"}
{"data":[{"id":"1","name":"a","category":"tools","weight":"1.50"}],"type":"DELETE","database":"db","table":"products"}
{"data":[{"id":"9"}],"type":"INSERT","database":"db","table":"orders"}
`

func writeGenData(t *testing.T, dir string) {
	t.Helper()
	d := filepath.Join(dir, "configs", "gen", "data")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"readings.csv": readingsCSV, "products.jsonl": productsCanal, "regions.csv": regionsCSV, "region-rates.jsonl": regionRates} {
		if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const readingsSource = `
  - name: readings
    type: file
    path: configs/gen/data/readings.csv
    schema:
      - id STRING
      - ts BIGINT
      - temp DOUBLE
      - region STRING
      - event_time AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: event_time - INTERVAL '1' SECOND
`

func flinkCases() []flinkCase {
	return append([]flinkCase{
		// The examples.
		{name: "sensor-stats", file: "configs/examples/sensor-stats.yaml", sinks: []flinkSink{{kind: "print"}}},
		{name: "sensor-rename", file: "configs/examples/sensor-rename.yaml", sinks: []flinkSink{{kind: "file", target: "out/sensor-renamed.csv", header: true}}},
		{name: "sensor-windows", file: "configs/examples/sensor-windows.yaml", sinks: []flinkSink{{kind: "file", target: "out/sensor-windows.csv", header: true}},
			listed: []string{"writes a timestamp quoted"}},
		{name: "statement-set", file: "configs/examples/statement-set.yaml", sinks: []flinkSink{
			{kind: "file", target: "out/hot-sensors.csv"}, {kind: "file", target: "out/numbers.json"}}},
		{name: "messages", file: "configs/examples/messages.yaml", sinks: []flinkSink{{kind: "print"}},
			listed: []string{"Flink's csv format has no header"}},
		{name: "cdc-canal-products", file: "configs/examples/cdc-canal-products.yaml", sinks: []flinkSink{{kind: "print"}},
			differs: "an UPDATE message of several rows"},
		{name: "hello-datagen", file: "configs/examples/hello-datagen.yaml", sinks: []flinkSink{{kind: "print"}}, countOnly: true},
		{name: "kafka-orders-produce", file: "configs/examples/kafka-orders-produce.yaml",
			subst:     []string{"topic: orders\n", "topic: orders_{{uniq}}_{{side}}\n"},
			sinks:     []flinkSink{{kind: "kafka-append", target: "orders_{{uniq}}_{{side}}"}},
			countOnly: true},
		{name: "kafka-sensor-stats", file: "configs/examples/kafka-sensor-stats.yaml",
			subst: []string{
				"topic: sensor_stats\n", "topic: stats_{{uniq}}_{{side}}\n",
				"topic: sensor_stats_changelog\n", "topic: changelog_{{uniq}}_{{side}}\n"},
			sinks: []flinkSink{
				{kind: "kafka-upsert", target: "stats_{{uniq}}_{{side}}"},
				{kind: "kafka-debezium", target: "changelog_{{uniq}}_{{side}}"}}},
		{name: "mysql-sensor-stats", file: "configs/examples/mysql-sensor-stats.yaml",
			subst: []string{"table: sensor_stats\n", "table: stats_{{uniq}}_{{side}}\n"},
			sinks: []flinkSink{{kind: "mysql", target: "stats_{{uniq}}_{{side}}"}}},

		// Made here: each connector and SQL construct etld supports.
		{name: "gen-scalar", file: "configs/gen/scalar.yaml", sinks: []flinkSink{{kind: "file", target: "out/scalar.json"}}, yaml: `version: 1
name: gen-scalar
sources:` + readingsSource + `
transforms:
  - name: scalars
    sql: |
      SELECT UPPER(id) AS sid, ts / 1000 AS secs, ROUND(temp * 1.8 + 32, 1) AS temp_f,
        CASE WHEN temp > 20 THEN 'warm' WHEN temp < 0 THEN 'cold' ELSE 'mild' END AS feel,
        region || '-' || id AS tag, CHAR_LENGTH(region) AS rlen, SUBSTRING(region FROM 1 FOR 1) AS r1,
        CAST(temp AS INT) AS t_int, MOD(ts, 7000) AS m, ABS(temp) AS a, NOT (temp > 20) AS cool,
        COALESCE(REGEXP_EXTRACT(region, 'e(.)', 1), 'none') AS rx, TRIM(' ' || id || ' ') AS trimmed
      FROM readings
      WHERE temp BETWEEN -10 AND 40 AND region IN ('eu', 'us', 'asia') AND id LIKE 's%'
sinks:
  - name: out
    from: scalars
    type: file
    path: out/scalar.json
    format: json
`},
		{name: "gen-aggregate", file: "configs/gen/aggregate.yaml", sinks: []flinkSink{{kind: "print"}}, yaml: `version: 1
name: gen-aggregate
sources:` + readingsSource + `
transforms:
  - name: per_region
    sql: |
      SELECT region, COUNT(*) AS n, COUNT(DISTINCT id) AS ids, SUM(temp) AS total,
        MIN(ts) AS first_ts, MAX(id) AS last_id, AVG(temp) AS avg_temp
      FROM readings
      GROUP BY region
      HAVING COUNT(*) > 1
sinks:
  - name: out
    from: per_region
    type: print
`},
		{name: "gen-windows", file: "configs/gen/windows.yaml", listed: []string{"writes a timestamp quoted"}, sinks: []flinkSink{
			{kind: "file", target: "out/hop.csv"}, {kind: "file", target: "out/cumulate.json"}}, yaml: `version: 1
name: gen-windows
sources:` + readingsSource + `
transforms:
  - name: hopping
    sql: |
      SELECT window_start, window_end, region, COUNT(*) AS n, MAX(temp) AS hi
      FROM TABLE(HOP(TABLE readings, DESCRIPTOR(event_time), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
      GROUP BY window_start, window_end, region
  - name: cumulative
    sql: |
      SELECT window_start, window_end, COUNT(*) AS n, SUM(temp) AS total
      FROM TABLE(CUMULATE(TABLE readings, DESCRIPTOR(event_time), INTERVAL '5' SECOND, INTERVAL '20' SECOND))
      GROUP BY window_start, window_end
sinks:
  - name: hop_out
    from: hopping
    type: file
    path: out/hop.csv
  - name: cumulate_out
    from: cumulative
    type: file
    path: out/cumulate.json
    format: json
`},
		{name: "gen-union", file: "configs/gen/union.yaml", sinks: []flinkSink{{kind: "print"}}, yaml: `version: 1
name: gen-union
sources:` + readingsSource + `
transforms:
  - name: both
    sql: |
      SELECT id, temp FROM readings WHERE region = 'eu'
      UNION ALL
      SELECT id, temp FROM readings WHERE temp < 5
sinks:
  - name: out
    from: both
    type: print
`},
		// SELECT DISTINCT is updating in Flink (a listed difference): a
		// print sink takes it, a file would not.
		{name: "gen-distinct", file: "configs/gen/distinct.yaml", sinks: []flinkSink{{kind: "print"}},
			listed: []string{"SELECT DISTINCT: etld's result is insert-only"}, yaml: `version: 1
name: gen-distinct
sources:` + readingsSource + `
transforms:
  - name: regions
    sql: SELECT DISTINCT region, id FROM readings
sinks:
  - name: out
    from: regions
    type: print
`},
		{name: "gen-datagen-global", file: "configs/gen/datagen.yaml", sinks: []flinkSink{{kind: "print"}}, yaml: `version: 1
name: gen-datagen-global
sources:
  - name: gen
    type: datagen
    schema:
      - n BIGINT
      - s STRING
    fields:
      n: { kind: sequence, start: 1, end: 50 }
      s: { kind: sequence, start: 100, end: 149 }
transforms:
  - name: totals
    sql: SELECT COUNT(*) AS c, SUM(n) AS total, MAX(s) AS top, MIN(n * 2) AS low FROM gen
sinks:
  - name: out
    from: totals
    type: print
`},
		{name: "gen-batch", file: "configs/gen/batch.yaml", sinks: []flinkSink{{kind: "file", target: "out/batch.csv"}}, yaml: `version: 1
name: gen-batch
execution: batch
sources:
  - name: readings
    type: file
    path: configs/gen/data/readings.csv
    schema:
      - id STRING
      - ts BIGINT
      - temp DOUBLE
      - region STRING
transforms:
  - name: per_id
    sql: SELECT id, COUNT(*) AS n, MAX(temp) AS hi FROM readings GROUP BY id
sinks:
  - name: out
    from: per_id
    type: file
    path: out/batch.csv
`},
		{name: "gen-canal", file: "configs/gen/canal.yaml", sinks: []flinkSink{{kind: "print"}}, yaml: `version: 1
name: gen-canal
sources:
  - name: products
    type: file
    path: configs/gen/data/products.jsonl
    format: { type: canal-json, table_include: products }
    key: [id]
    schema:
      - id BIGINT
      - name STRING
      - category STRING
      - weight DECIMAL(10, 2)
transforms:
  - name: per_category
    sql: SELECT category, COUNT(*) AS products, SUM(weight) AS total FROM products GROUP BY category
sinks:
  - name: out
    from: per_category
    type: print
`},
		{name: "gen-kafka", file: "configs/gen/kafka.yaml",
			topics: []string{"in_{{uniq}}_{{side}}", "per_customer_{{uniq}}_{{side}}", "big_{{uniq}}_{{side}}"},
			before: func(t *testing.T, brokers string, names func(string) []string) {
				produce(t, brokers, names("in_{{uniq}}_{{side}}"),
					`{"order_id": 1, "customer": "ann", "amount": 10.50}`,
					`{"order_id": 2, "customer": "bob", "amount": 4.25}`,
					`{"order_id": 3, "customer": "ann", "amount": 7.00}`,
					`{"order_id": 4, "customer": "cy", "amount": 100.00}`,
					`{"order_id": 5, "customer": "bob", "amount": 1.75}`)
			},
			sinks: []flinkSink{
				{kind: "kafka-upsert", target: "per_customer_{{uniq}}_{{side}}"},
				{kind: "kafka-append", target: "big_{{uniq}}_{{side}}"}},
			yaml: `version: 1
name: gen-kafka
sources:
  - name: orders
    type: kafka
    brokers: ${KAFKA_BROKERS}
    topic: in_{{uniq}}_{{side}}
    start: earliest
    stop: latest
    format: json
    schema:
      - order_id BIGINT
      - customer STRING
      - amount DECIMAL(10, 2)
      - part INT METADATA FROM 'partition'
transforms:
  - name: per_customer
    sql: SELECT customer, COUNT(*) AS orders, SUM(amount) AS revenue, MAX(part) AS p FROM orders GROUP BY customer
  - name: big
    sql: SELECT order_id, customer, amount * 2 AS doubled FROM orders WHERE amount > 5
sinks:
  - name: per_customer_out
    from: per_customer
    type: kafka
    brokers: ${KAFKA_BROKERS}
    topic: per_customer_{{uniq}}_{{side}}
  - name: big_out
    from: big
    type: kafka
    brokers: ${KAFKA_BROKERS}
    topic: big_{{uniq}}_{{side}}
    key_fields: [order_id]
`},
		{name: "gen-mysql-append", file: "configs/gen/mysql.yaml", sinks: []flinkSink{{kind: "mysql", target: "warm_{{uniq}}_{{side}}"}}, yaml: `version: 1
name: gen-mysql-append
sources:` + readingsSource + `
transforms:
  - name: warm
    sql: SELECT id, ts, temp, event_time FROM readings WHERE temp > 19
sinks:
  - name: out
    from: warm
    type: mysql
    dsn: ${ETLD_MYSQL_DSN}
    table: warm_{{uniq}}_{{side}}
    create_table: true
`},
	}, flinkOpCases()...)
}

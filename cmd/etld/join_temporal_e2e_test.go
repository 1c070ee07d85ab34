package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// The versioned table: a debezium-json changelog of rates keyed by
// currency, in time order (its watermark is the time itself, so no
// version is late). An update's -U carries the before image, at the time
// of the version it ends: Flink drops it (the versioned table is read as
// upserts), and so does etld.
const temporalRates = `{"before":null,"after":{"currency":"EUR","rate":114,"ts":1000},"op":"c"}
{"before":null,"after":{"currency":"USD","rate":100,"ts":1000},"op":"c"}
{"before":null,"after":{"currency":"CHF","rate":90,"ts":2000},"op":"c"}
{"before":{"currency":"EUR","rate":114,"ts":1000},"after":{"currency":"EUR","rate":116,"ts":10000},"op":"u"}
{"before":null,"after":{"currency":"JPY","rate":1,"ts":15000},"op":"c"}
{"before":{"currency":"CHF","rate":90,"ts":2000},"after":{"currency":"CHF","rate":95,"ts":20000},"op":"u"}
{"before":null,"after":{"currency":"EUR","rate":118,"ts":30000},"op":"c"}
`

// temporalDeletes is a changelog with a delete, read with a watermark an
// hour behind, so that every order joins at the end of the input, once
// all changes are in: a -D is the before image, at the time of the
// version it deletes, and replaces that version (in Flink as in etld).
// With a close watermark the delete would be a late change, whose effect
// depends on how the two inputs interleave.
const temporalDeletes = `{"before":null,"after":{"currency":"EUR","rate":114,"ts":1000},"op":"c"}
{"before":null,"after":{"currency":"USD","rate":100,"ts":1000},"op":"c"}
{"before":{"currency":"EUR","rate":114,"ts":1000},"after":{"currency":"EUR","rate":116,"ts":10000},"op":"u"}
{"before":{"currency":"USD","rate":100,"ts":1000},"after":null,"op":"d"}
{"before":null,"after":{"currency":"USD","rate":101,"ts":35000},"op":"c"}
`

// Orders in time order within the 5 s watermark delay: none is late.
const temporalOrders = `1,EUR,10,500
2,EUR,10,2000
3,USD,20,3000
4,CHF,3,4000
5,EUR,10,12000
6,JPY,5,16000
7,GBP,7,17000
8,CHF,2,25000
9,EUR,1,31000
10,USD,1,40000
11,,1,41000
`

// temporalHistory is the rates as an append-only log (csv: currency,
// rate, ts), which a keep-last deduplication by time turns into a
// versioned table: Flink's versioned view.
const temporalHistory = `EUR,114,1000
USD,100,1000
CHF,90,2000
EUR,116,10000
JPY,1,15000
CHF,95,20000
EUR,118,30000
`

// temporalVersionedView is Flink's versioned view of temporalHistory:
// the view versioned_rates in Flink, a transform in etld.
const temporalVersionedView = "SELECT currency, rate, update_time FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY update_time DESC) AS rn FROM rates_history) WHERE rn = 1"

var temporalCases = []struct{ name, sql string }{
	{"temporal_versioned_view", "SELECT o.id, o.currency, r.rate FROM orders o LEFT JOIN versioned_rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency"},
	{"temporal_inner", "SELECT o.id, r.rate, o.amount * r.rate AS price FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency"},
	{"temporal_left", "SELECT o.id, o.currency, r.rate, r.update_time FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON r.currency = o.currency"},
	{"temporal_residual", "SELECT o.id, r.rate FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency AND r.rate > 95"},
	{"temporal_deletes", "SELECT o.id, o.currency, r.rate FROM orders o LEFT JOIN rates_log FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency"},
	{"temporal_then_window", "SELECT window_start, SUM(price) AS total, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE priced, DESCRIPTOR(order_time), INTERVAL '10' SECOND)) GROUP BY window_start, window_end"},
}

const temporalDDL = `CREATE TABLE orders (id INT, currency STRING, amount INT, ts BIGINT, order_time AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv', 'csv.null-literal' = '');
CREATE TABLE rates (currency STRING, rate INT, ts BIGINT, update_time AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR update_time AS update_time, PRIMARY KEY (currency) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE rates_log (currency STRING, rate INT, ts BIGINT, update_time AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR update_time AS update_time - INTERVAL '1' HOUR, PRIMARY KEY (currency) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE rates_history (currency STRING, rate INT, ts BIGINT, update_time AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR update_time AS update_time)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TEMPORARY VIEW versioned_rates AS ` + temporalVersionedView + `;
CREATE TEMPORARY VIEW priced AS SELECT o.id, o.order_time, o.amount * r.rate AS price FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency;
`

// temporalTransforms are the etld transforms of temporalDDL; the sources
// are the caller's (files or Kafka topics).
const temporalTransforms = temporalPriced + `  - name: versioned_rates
    sql: ` + temporalVersionedView + `
`

// temporalPriced is the transform priced alone, over orders and rates.
const temporalPriced = `transforms:
  - name: priced
    sql: SELECT o.id, o.order_time, o.amount * r.rate AS price FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency
`

// temporalHistorySource is the source of temporalHistory, read from a
// file: %s is its path.
const temporalHistorySource = `  - name: rates_history
    type: file
    path: %s
    schema: [currency STRING, rate INT, ts BIGINT, "update_time AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: update_time
`

const temporalFileSources = `sources:
  - name: orders
    type: file
    path: %s
    format: {type: csv, null_literal: ""}
    schema: [id INT, currency STRING, amount INT, ts BIGINT, "order_time AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: order_time - INTERVAL '5' SECOND
  - name: rates
    type: file
    path: %s
    format: debezium-json
    key: [currency]
    schema: [currency STRING, rate INT, ts BIGINT, "update_time AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: update_time
  - name: rates_log
    type: file
    path: %s
    format: debezium-json
    key: [currency]
    schema: [currency STRING, rate INT, ts BIGINT, "update_time AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: update_time - INTERVAL '1' HOUR
`

// flinkTemporal runs every temporal case through Flink over the files of
// temporalRates and temporalOrders and returns each one's folded output.
func flinkTemporal(t *testing.T, dir string) (orders, rates, deletes, history string, want [][]string) {
	t.Helper()
	orders, rates, deletes = filepath.Join(dir, "orders.csv"), filepath.Join(dir, "rates.json"), filepath.Join(dir, "deletes.json")
	history = filepath.Join(dir, "history.csv")
	for path, data := range map[string]string{orders: temporalOrders, rates: temporalRates, deletes: temporalDeletes, history: temporalHistory} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var scripts []string
	for _, tc := range temporalCases {
		script := filepath.Join(dir, tc.name+".sql")
		if err := os.WriteFile(script, []byte(fmt.Sprintf(temporalDDL, orders, rates, deletes, history)+tc.sql+";\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, script)
	}
	for i, r := range testenv.RunFlink(t, 5*time.Minute, scripts...) {
		if r.Err != "" {
			t.Fatalf("Flink failed on %s: %s", temporalCases[i].name, r.Err)
		}
		if strings.Contains(r.Out, "-D[") || strings.Contains(r.Out, "-U[") {
			t.Fatalf("Flink retracted in %s:\n%s", temporalCases[i].name, r.Out)
		}
		w := foldPrinted(t, r.Out)
		if len(w) == 0 {
			t.Fatalf("Flink printed nothing for %s: the case tests nothing", temporalCases[i].name)
		}
		want = append(want, w)
	}
	return orders, rates, deletes, history, want
}

// TestTemporalJoinMatchesFlink runs each event-time temporal join over
// files through etld and Flink into print and compares the outputs; then
// through etld over Kafka topics of the same data (temporalOverKafka).
func TestTemporalJoinMatchesFlink(t *testing.T) {
	dir := t.TempDir()
	orders, rates, deletes, history, want := flinkTemporal(t, dir)
	t.Run("kafka", func(t *testing.T) { temporalOverKafka(t, dir, want) })
	for i, tc := range temporalCases {
		t.Run(tc.name, func(t *testing.T) {
			yaml := fmt.Sprintf("version: 1\nname: %s\n"+temporalFileSources+temporalHistorySource+temporalTransforms+"  - name: q\n    sql: %s\nsinks:\n  - {name: out, from: q, type: print}\n",
				tc.name, orders, rates, deletes, history, tc.sql)
			path := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := etld(t, dir, "run", "--quiet", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.Contains(stdout, "-D[") || strings.Contains(stdout, "-U[") {
				t.Errorf("a temporal join retracted:\n%s", stdout)
			}
			if got := foldPrinted(t, stdout); !slices.Equal(got, want[i]) {
				t.Errorf("etld's table:\n%s\nFlink's:\n%s", strings.Join(got, "\n"), strings.Join(want[i], "\n"))
			}
		})
	}
}

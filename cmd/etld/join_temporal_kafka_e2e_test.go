package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// temporalKafkaSources reads the orders (csv) and the two rate changelogs
// (debezium-json, keyed by currency) from Kafka topics; %[1]s is the
// brokers, %[2]s, %[3]s and %[4]s the topics, %[5]s the stop option.
const temporalKafkaSources = `sources:
  - name: orders
    type: kafka
    brokers: [%[1]s]
    topic: %[2]s
    start: earliest%[5]s
    format: {type: csv, null_literal: ""}
    schema: [id INT, currency STRING, amount INT, ts BIGINT, "order_time AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: order_time - INTERVAL '5' SECOND
  - name: rates
    type: kafka
    brokers: [%[1]s]
    topic: %[3]s
    start: earliest%[5]s
    format: debezium-json
    key: [currency]
    schema: [currency STRING, rate INT, ts BIGINT, "update_time AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: update_time
  - name: rates_log
    type: kafka
    brokers: [%[1]s]
    topic: %[4]s
    start: earliest%[5]s
    format: debezium-json
    key: [currency]
    schema: [currency STRING, rate INT, ts BIGINT, "update_time AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: update_time - INTERVAL '1' HOUR
`

// lines splits a data constant into its messages.
func lines(data string) []string {
	return strings.Split(strings.TrimSuffix(data, "\n"), "\n")
}

// temporalOverKafka runs the cases over real Kafka topics (the upsert
// changelog of rates is a debezium-json topic, read to its end offsets)
// and compares each output with Flink's over the same data in files.
func temporalOverKafka(t *testing.T, dir string, want [][]string) {
	brokers := testenv.Kafka(t)
	topics := []string{testenv.UniqueName(t, "tj-orders"), testenv.UniqueName(t, "tj-rates"), testenv.UniqueName(t, "tj-rates-log"), testenv.UniqueName(t, "tj-history")}
	createTopics(t, brokers, topics)
	produce(t, brokers, topics[:1], lines(temporalOrders)...)
	produce(t, brokers, topics[1:2], lines(temporalRates)...)
	produce(t, brokers, topics[2:3], lines(temporalDeletes)...)
	produce(t, brokers, topics[3:], lines(temporalHistory)...)
	sources := fmt.Sprintf(temporalKafkaSources, brokers, topics[0], topics[1], topics[2], "\n    stop: latest") +
		fmt.Sprintf(`  - name: rates_history
    type: kafka
    brokers: [%s]
    topic: %s
    start: earliest
    stop: latest
    format: csv
    schema: [currency STRING, rate INT, ts BIGINT, "update_time AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: update_time
`, brokers, topics[3])
	for i, tc := range temporalCases {
		t.Run(tc.name, func(t *testing.T) {
			yaml := fmt.Sprintf("version: 1\nname: k_%s\n", tc.name) + sources + temporalTransforms +
				fmt.Sprintf("  - name: q\n    sql: %s\nsinks:\n  - {name: out, from: q, type: print}\n", tc.sql)
			path := filepath.Join(dir, "kafka_"+tc.name+".yaml")
			writeFile(t, path, yaml)
			stdout, stderr, code := etld(t, dir, "run", "--quiet", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := foldPrinted(t, stdout); !slices.Equal(got, want[i]) {
				t.Errorf("etld's table over Kafka:\n%s\nFlink's:\n%s", strings.Join(got, "\n"), strings.Join(want[i], "\n"))
			}
		})
	}
}

// TestTemporalJoinResumesItsVersions stops an unbounded run over Kafka
// (SIGTERM: a final checkpoint) while it holds orders the watermark has
// not passed and the versions they need, then resumes from the state
// directory with new orders and a rate of another currency only: the
// held order and the new ones join the EUR version read in the first
// life, and nothing of the first life is printed again.
func TestTemporalJoinResumesItsVersions(t *testing.T) {
	brokers := testenv.Kafka(t)
	ctx := testenv.Context(t, 3*time.Minute)
	topics := []string{testenv.UniqueName(t, "tjr-orders"), testenv.UniqueName(t, "tjr-rates"), testenv.UniqueName(t, "tjr-rates-log")}
	createTopics(t, brokers, topics)
	dir, state := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "resume.yaml")
	writeFile(t, path, "version: 1\nname: tj_resume\ncheckpoint_interval: 1s\n"+
		fmt.Sprintf(temporalKafkaSources, brokers, topics[0], topics[1], topics[2], "")+temporalPriced+
		"sinks:\n  - {name: out, from: priced, type: print}\n")

	life := func(want []string) string {
		t.Helper()
		out := &lockedBuffer{}
		cmd := exec.CommandContext(ctx, etldBin, "run", "--quiet", "--state-dir", state, path)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		deadline := time.Now().Add(90 * time.Second)
		for strings.Count(out.String(), "+I[") < len(want) {
			if time.Now().After(deadline) {
				t.Fatalf("printed in 90 s:\n%s\nwant %d rows", out, len(want))
			}
			time.Sleep(20 * time.Millisecond) // polling the output, not waiting for it
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("stop: %v\n%s", err, out)
		}
		var got []string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "+I[") {
				got = append(got, strings.TrimSpace(l))
			} else if strings.Contains(l, "-U[") || strings.Contains(l, "-D[") {
				t.Errorf("a temporal join retracted: %s", l)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("printed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		return out.String()
	}

	// Life 1: EUR is 114 from 1 s, 116 from 10 s. The join's watermark is
	// min(orders 12 s - 5 s, rates 10 s) = 7 s: orders 1 and 2 join, order
	// 3 (12 s) is held.
	produce(t, brokers, topics[1:2],
		`{"before":null,"after":{"currency":"EUR","rate":114,"ts":1000},"op":"c"}`,
		`{"before":{"currency":"EUR","rate":114,"ts":1000},"after":{"currency":"EUR","rate":116,"ts":10000},"op":"u"}`)
	produce(t, brokers, topics[:1], "1,EUR,1,2000", "2,EUR,2,6000", "3,EUR,3,12000")
	life([]string{"+I[1, 1970-01-01T00:00:02Z, 114]", "+I[2, 1970-01-01T00:00:06Z, 228]"})

	// Life 2: no EUR change; a JPY rate moves the rates' watermark to
	// 50 s, orders to 60 s - 5 s: orders 3, 4 and 5 join EUR 116, which
	// only the restored state knows; order 6 (60 s) stays held, also when
	// the stop ends the orders first (a union then takes the watermark of
	// the input still open, the rates' 50 s).
	produce(t, brokers, topics[1:2], `{"before":null,"after":{"currency":"JPY","rate":1,"ts":50000},"op":"c"}`)
	produce(t, brokers, topics[:1], "4,EUR,4,13000", "5,EUR,5,20000", "6,EUR,6,60000")
	life([]string{"+I[3, 1970-01-01T00:00:12Z, 348]", "+I[4, 1970-01-01T00:00:13Z, 464]", "+I[5, 1970-01-01T00:00:20Z, 580]"})
}

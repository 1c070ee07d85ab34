package kafka_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/testenv"
)

// readings writes a CSV of n (sensor, delta) rows with deltas of both
// signs, so that sums cross zero many times, and returns each sensor's
// final (count, sum).
func readings(t *testing.T, path string, n, sensors int) map[string][2]int64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	var b strings.Builder
	final := map[string][2]int64{}
	for range n {
		s := fmt.Sprintf("s%02d", rng.IntN(sensors))
		d := rng.Int64N(21) - 10
		fmt.Fprintf(&b, "%s,%d\n", s, d)
		c := final[s]
		final[s] = [2]int64{c[0] + 1, c[1] + d}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return final
}

// TestPipelineUpsertGroupBy runs CSV -> GROUP BY ... HAVING -> kafka (mode
// auto picks upsert by the GROUP BY key) through the real registry, then
// folds the topic (last value per key, a tombstone deletes) and compares
// it with the table computed directly from the input.
func TestPipelineUpsertGroupBy(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 120*time.Second)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	final := readings(t, in, 20000, 30)
	topic := newTopic(t, addr, 3)
	runPipeline(t, ctx, dir, fmt.Sprintf(`version: 1
name: upsert-to-kafka
mini_batch: false
sources:
  - name: r
    type: file
    path: %s
    format: csv
    schema:
      - sensor STRING
      - delta BIGINT
transforms:
  - name: totals
    sql: SELECT sensor, COUNT(*) AS n, SUM(delta) AS total FROM r GROUP BY sensor HAVING SUM(delta) > 0
sinks:
  - name: out
    from: totals
    type: kafka
    brokers: %s
    topic: %s
`, in, addr, topic))

	table := map[string]string{}
	tombstones := 0
	keyPartition := map[string]int{}
	for _, m := range readAll(t, addr, topic) {
		k := string(m.Key)
		if p, ok := keyPartition[k]; ok && p != m.Partition {
			t.Fatalf("key %s in partitions %d and %d", k, p, m.Partition)
		}
		keyPartition[k] = m.Partition
		if m.Value == nil {
			tombstones++
			delete(table, k)
			continue
		}
		table[k] = string(m.Value)
	}
	want := map[string]string{}
	for s, c := range final {
		if c[1] > 0 {
			want[fmt.Sprintf(`{"sensor":"%s"}`, s)] = fmt.Sprintf(`{"sensor":"%s","n":%d,"total":%d}`, s, c[0], c[1])
		}
	}
	if !reflect.DeepEqual(table, want) {
		t.Errorf("folded topic:\n%v\nwant:\n%v", table, want)
	}
	if tombstones == 0 {
		t.Error("no tombstone in the topic: the HAVING never removed a group, the test proves nothing about deletes")
	}
	t.Logf("%d keys, %d tombstones", len(table), tombstones)
}

// TestPipelineDebeziumOut writes the same GROUP BY as debezium-json (mode
// auto picks retract): each change is an event, c for +I/+U and d for
// -U/-D, keyed by key_fields; replaying the events gives the final table.
func TestPipelineDebeziumOut(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 120*time.Second)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	final := readings(t, in, 5000, 10)
	topic := newTopic(t, addr, 2)
	runPipeline(t, ctx, dir, fmt.Sprintf(`version: 1
name: debezium-to-kafka
sources:
  - name: r
    type: file
    path: %s
    schema:
      - sensor STRING
      - delta BIGINT
transforms:
  - name: totals
    sql: SELECT sensor, SUM(delta) AS total FROM r GROUP BY sensor
sinks:
  - name: out
    from: totals
    type: kafka
    brokers: %s
    topic: %s
    format: debezium-json
    key_fields: [sensor]
`, in, addr, topic))

	type image struct {
		Sensor string
		Total  int64
	}
	type event struct {
		Before *image
		After  *image
		Op     string
	}
	table := map[string]int64{}
	ops := map[string]int{}
	for _, m := range readAll(t, addr, topic) {
		var ev event
		if err := json.Unmarshal(m.Value, &ev); err != nil {
			t.Fatalf("message %q: %v", m.Value, err)
		}
		ops[ev.Op]++
		switch ev.Op {
		case "c":
			if string(m.Key) != fmt.Sprintf(`{"sensor":"%s"}`, ev.After.Sensor) {
				t.Fatalf("key %s for %+v", m.Key, ev.After)
			}
			table[ev.After.Sensor] = ev.After.Total
		case "d":
			if got, ok := table[ev.Before.Sensor]; !ok || got != ev.Before.Total {
				t.Fatalf("d event for %+v, but the table holds %d (%v)", ev.Before, got, ok)
			}
			delete(table, ev.Before.Sensor)
		default:
			t.Fatalf("op %q in %s", ev.Op, m.Value)
		}
	}
	want := map[string]int64{}
	for s, c := range final {
		want[s] = c[1]
	}
	if !reflect.DeepEqual(table, want) {
		t.Errorf("replayed events give %v, want %v", table, want)
	}
	if ops["d"] == 0 {
		t.Errorf("no d event: %v", ops)
	}
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("ops %v, keys %v", ops, keys)
}

// TestPipelineCountsOnlyAcknowledgedMessages: messages the broker refuses
// for good (larger than the topic takes) go to on_error and are not
// counted as written; the summary's written count is what the topic
// holds.
func TestPipelineCountsOnlyAcknowledgedMessages(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 120*time.Second)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	big := strings.Repeat("x", 5000)
	data := fmt.Sprintf("1,small\n2,%s\n3,small\n4,%s\n5,small\n", big, big)
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	topic := newTopic(t, addr, 1, kafka.ConfigEntry{ConfigName: "max.message.bytes", ConfigValue: "2000"})
	sum := runPipeline(t, ctx, dir, fmt.Sprintf(`version: 1
name: refused-to-kafka
sources:
  - name: r
    type: file
    path: %s
    schema: [id BIGINT, text STRING]
sinks:
  - name: out
    from: r
    type: kafka
    brokers: %s
    topic: %s
    format: json
    on_error: skip
`, in, addr, topic))
	if n := len(readAll(t, addr, topic)); n != 3 {
		t.Errorf("the topic holds %d messages, want the 3 small ones", n)
	}
	if len(sum.Sinks) != 1 || sum.Sinks[0].In != 5 || sum.Sinks[0].Out != 3 || sum.Sinks[0].Skipped != 2 {
		t.Errorf("summary %+v: want 5 rows in, 3 written and 2 skipped in the sink", sum.Sinks)
	}
}

package kafka_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// TestPipelineKafkaToFile runs a whole pipeline file through the facade:
// a bounded Kafka source with metadata columns and a dead-letter policy,
// SQL, and a CSV file sink.
func TestPipelineKafkaToFile(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 120*time.Second)
	topic := testenv.KafkaTopic(t, addr, 2)

	w := &kafka.Writer{
		Addr: kafka.TCP(addr), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond,
		Balancer: kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.WriterData.(int) }),
	}
	var msgs []kafka.Message
	for i := range 20 {
		msgs = append(msgs, kafka.Message{Value: fmt.Appendf(nil, `{"id":%d,"amount":%d.5}`, i, i), WriterData: i % 2})
	}
	// One bad message in partition 1, after the good ones there.
	msgs = append(msgs, kafka.Message{Value: []byte(`{"id":"oops"}`), WriterData: 1})
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("produce: %v", err)
	}
	w.Close()

	dir := t.TempDir()
	out, dlq := filepath.Join(dir, "out.csv"), filepath.Join(dir, "dlq.jsonl")
	yaml := fmt.Sprintf(`version: 1
name: kafka-to-file
sources:
  - name: orders
    type: kafka
    brokers: %s
    topic: %s
    stop: latest
    format: json
    schema:
      - id BIGINT
      - amount DOUBLE
      - part INT METADATA FROM 'partition'
      - off BIGINT METADATA FROM 'offset'
    on_error: dead-letter
    dead_letter: %s
transforms:
  - name: big
    sql: SELECT id, part, off FROM orders WHERE amount > 10
sinks:
  - name: out
    from: big
    type: file
    path: %s
`, addr, topic, dlq, out)
	pipefile.Run(t, ctx, pipeline.Env{Registry: builtin.Registry()}, dir, yaml)

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(data))
	sort.Strings(got)
	var want []string
	for i := 10; i < 20; i++ {
		want = append(want, fmt.Sprintf("%d,%d,%d", i, i%2, i/2))
	}
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("out.csv = %v, want %v", got, want)
	}
	dead, err := os.ReadFile(dlq)
	if err != nil {
		t.Fatal(err)
	}
	if pos := topic + "/1/10"; strings.Count(string(dead), "\n") != 1 || !strings.Contains(string(dead), pos) || !strings.Contains(string(dead), "oops") {
		t.Errorf("dead letters:\n%s\nwant one record at %s", dead, pos)
	}
}

// TestPipelineTransformErrorNamesTheMessage: a CAST that fails in a transform
// names the Kafka message (topic/partition/offset) its row came from, and the
// transform.
func TestPipelineTransformErrorNamesTheMessage(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 120*time.Second)
	topic := testenv.KafkaTopic(t, addr, 1)
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	if err := w.WriteMessages(ctx, kafka.Message{Value: []byte(`{"id":1,"v":"1"}`)}, kafka.Message{Value: []byte(`{"id":2,"v":"12x"}`)}); err != nil {
		t.Fatalf("produce: %v", err)
	}
	w.Close()

	dir := t.TempDir()
	yaml := fmt.Sprintf(`version: 1
name: kafka-typed
sources:
  - name: m
    type: kafka
    brokers: %s
    topic: %s
    stop: latest
    format: json
    schema: [id BIGINT, v STRING]
transforms:
  - name: typed
    sql: SELECT id, CAST(v AS INT) AS n FROM m
sinks:
  - name: out
    from: typed
    type: blackhole
`, addr, topic)
	p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, yaml)
	_, err := p.Run(ctx, pipeline.RunOptions{})
	for _, want := range []string{`transform "typed" (Calc(`, topic + "/0/1: ", `cannot parse "12x" as INT`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run error %v, want one saying %q", err, want)
		}
	}
}

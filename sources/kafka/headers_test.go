package kafka_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// TestPipelineHeadersMetadata reads the headers metadata column as
// Flink's MAP<STRING, BYTES> from a real broker: a header's value by
// key, a missing one NULL, a repeated key its last value, the count.
func TestPipelineHeadersMetadata(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 120*time.Second)
	topic := testenv.KafkaTopic(t, addr, 1)
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	err := w.WriteMessages(ctx,
		kafka.Message{Value: []byte(`{"id":1}`), Headers: []kafka.Header{{Key: "trace", Value: []byte("abc")}, {Key: "v", Value: []byte{1}}, {Key: "v", Value: []byte{2}}}},
		kafka.Message{Value: []byte(`{"id":2}`)},
	)
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	w.Close()

	dir := t.TempDir()
	out := filepath.Join(dir, "out.csv")
	yaml := fmt.Sprintf(`version: 1
name: kafka-headers
sources:
  - name: msgs
    type: kafka
    brokers: %s
    topic: %s
    stop: latest
    format: json
    schema:
      - id BIGINT
      - headers MAP<STRING, BYTES> METADATA
transforms:
  - name: h
    sql: |
      SELECT id, CAST(headers['trace'] AS STRING) AS trace, headers['v'] AS v,
             CARDINALITY(headers) AS n, headers['none'] IS NULL AS none_null
      FROM msgs
sinks:
  - {name: out, from: h, type: file, path: %s}
`, addr, topic, out)
	pipefile.Run(t, ctx, pipeline.Env{Registry: builtin.Registry()}, dir, yaml)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// BYTES are base64 in CSV: 0x02 is Ag==.
	const want = "1,abc,Ag==,2,true\n2,,,0,true\n"
	if string(data) != want {
		t.Errorf("out.csv:\n%s\nwant:\n%s", data, want)
	}
}

// TestHeadersMetadataTypeChecked: a headers column declared with another
// MAP type is refused at load, naming the type Flink gives it.
func TestHeadersMetadataTypeChecked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	yaml := `version: 1
name: bad-headers
sources:
  - name: msgs
    type: kafka
    brokers: 127.0.0.1:1
    topic: t
    format: json
    schema:
      - id BIGINT
      - headers MAP<STRING, STRING> METADATA
sinks:
  - {name: out, from: msgs, type: print}
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), `p.yaml:11:9: sources[0].schema[1]: column "headers": metadata "headers" is MAP<STRING, BYTES>, declared MAP<STRING, STRING>`) {
		t.Fatalf("load error = %v", err)
	}
}

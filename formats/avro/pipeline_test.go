package avro_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// TestKafkaAvroPipeline: a topic of registry-framed Avro from an
// independent writer (schemas registered with the registry's own API,
// datums from hamba/avro, produced with kafka-go), with the writer's
// schema changing halfway (a field added, one widened) and one message
// without the framing, is read by a pipeline that writes a CSV file and
// a second topic in avro-confluent. The file holds exactly the rows
// written (the bad message dead-lettered); the second topic's messages,
// read with kafka-go and decoded by hamba with the schema the registry
// holds under <topic>-value for their id, are the same rows.
func TestKafkaAvroPipeline(t *testing.T) {
	brokers := testenv.Kafka(t)
	reg := testenv.SchemaRegistry(t)
	ctx := testenv.Context(t, 2*time.Minute)
	in := testenv.KafkaTopic(t, brokers, 1)
	out := testenv.KafkaTopic(t, brokers, 1)

	v1 := `{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"note","type":["null","string"],"default":null},
		{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
		{"name":"id","type":"int"}]}`
	v2 := `{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"note","type":["null","string"],"default":null},
		{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
		{"name":"tags","type":{"type":"array","items":"string"},"default":[]},
		{"name":"id","type":"long"}]}`
	id1, id2 := register(t, reg, in+"-value", v1), register(t, reg, in+"-value", v2)
	var msgs []kafka.Message
	var want []string
	for i := range 10 {
		var datum []byte
		var err error
		if i < 5 {
			datum, err = avro.Marshal(avro.MustParse(v1), map[string]any{"note": map[string]any{"string": fmt.Sprintf("n%d", i)}, "price": ratOf(i), "id": i})
			datum = framed(id1, datum)
			want = append(want, fmt.Sprintf("n%d,%d.25,,%d", i, i, i))
		} else {
			datum, err = avro.Marshal(avro.MustParse(v2), map[string]any{"note": nil, "price": ratOf(i), "tags": []string{"a", "b"}, "id": int64(i)})
			datum = framed(id2, datum)
			want = append(want, fmt.Sprintf(",%d.25,\"[a, b]\",%d", i, i))
		}
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, kafka.Message{Value: datum})
		if i == 3 {
			msgs = append(msgs, kafka.Message{Value: []byte("{\"not\":\"avro\"}")})
		}
	}
	w := &kafka.Writer{Addr: kafka.TCP(brokers), Topic: in, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	// The table's last column is id, so that the sink's datum of id 5
	// ends in 0x0a (5 in zigzag), which no sink may take for a line end.
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	w.Close()

	dir := t.TempDir()
	csv, dlq := filepath.Join(dir, "out.csv"), filepath.Join(dir, "dlq.jsonl")
	pipefile.Run(t, ctx, pipeline.Env{Registry: builtin.Registry()}, dir, fmt.Sprintf(`version: 1
name: avro-to-file
sources:
  - name: orders
    type: kafka
    brokers: %s
    topic: %s
    stop: latest
    format: {type: avro-confluent, url: '%s'}
    schema:
      - note STRING
      - price DECIMAL(10,2)
      - tags ARRAY<STRING>
      - id BIGINT
    on_error: dead-letter
    dead_letter: %s
sinks:
  - name: file
    from: orders
    type: file
    path: %s
  - name: topic
    from: orders
    type: kafka
    brokers: %s
    topic: %s
    format: {type: avro-confluent, url: '%s'}
`, brokers, in, reg, dlq, csv, brokers, out, reg))

	data, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSpace(string(data)), "\n"); !slices.Equal(got, want) {
		t.Fatalf("file:\n%s\nwant:\n%s", data, strings.Join(want, "\n"))
	}
	if dl, _ := os.ReadFile(dlq); !bytes.Contains(dl, []byte("not the zero byte")) || bytes.Count(dl, []byte("\n")) != 1 {
		t.Fatalf("dead letters:\n%s", dl)
	}

	// The second topic, read by the independent side.
	var schemaText string
	var readID int
	for i, m := range testenv.ReadTopic(t, brokers, out) {
		if m.Value[0] != 0 {
			t.Fatalf("message %d: no framing: % x", i, m.Value)
		}
		id := int(binary.BigEndian.Uint32(m.Value[1:5]))
		if schemaText == "" {
			schemaText, readID = schemaByID(t, reg, id), id
		}
		if id != readID {
			t.Fatalf("message %d framed with id %d, then %d", i, readID, id)
		}
		var got map[string]any
		if err := avro.Unmarshal(avro.MustParse(schemaText), m.Value[5:], &got); err != nil {
			t.Fatalf("message %d: %v (% x)", i, err, m.Value)
		}
		if got["id"] != int64(i) || got["price"] == nil {
			t.Fatalf("message %d: %v", i, got)
		}
	}
	if latest := latestID(t, reg, out+"-value"); latest != readID {
		t.Fatalf("subject %s-value holds id %d; messages carry %d", out, latest, readID)
	}
}

func ratOf(i int) *big.Rat {
	return mustRat(fmt.Sprintf("%d.25", i))
}

func framed(id int, datum []byte) []byte {
	out := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(id))
	return append(out, datum...)
}

func register(t *testing.T, base, subject, schema string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"schema": schema})
	var out struct {
		ID int `json:"id"`
	}
	call(t, http.MethodPost, base+"/subjects/"+url.PathEscape(subject)+"/versions", body, &out)
	return out.ID
}

func schemaByID(t *testing.T, base string, id int) string {
	var out struct {
		Schema string `json:"schema"`
	}
	call(t, http.MethodGet, fmt.Sprintf("%s/schemas/ids/%d", base, id), nil, &out)
	return out.Schema
}

func latestID(t *testing.T, base, subject string) int {
	var out struct {
		ID int `json:"id"`
	}
	call(t, http.MethodGet, base+"/subjects/"+url.PathEscape(subject)+"/versions/latest", nil, &out)
	return out.ID
}

func call(t *testing.T, method, u string, body []byte, out any) {
	t.Helper()
	req, _ := http.NewRequest(method, u, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(out); err != nil || res.StatusCode != 200 {
		t.Fatalf("%s %s: HTTP %d, %v", method, u, res.StatusCode, err)
	}
}

func mustRat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

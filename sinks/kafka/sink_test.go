package kafka

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

func sensorRows(from, to int) []row.Row {
	var rows []row.Row
	for i := from; i < to; i++ {
		rows = append(rows, row.Row{row.BigIntValue(int64(i)), row.StringValue(fmt.Sprintf("s%d", i%7)), row.DoubleValue(float64(i) + 0.5)})
	}
	return rows
}

func sensorSchema(t testing.TB) row.Schema {
	return testenv.Schema(t, "id BIGINT", "name STRING", "temp DOUBLE")
}

// TestAppendRoundTrip writes rows in append mode, without and with key
// columns, and reads them back with a plain kafka-go reader.
func TestAppendRoundTrip(t *testing.T) {
	addr := testenv.Kafka(t)
	for _, tc := range []struct {
		name        string
		keyFields   []string
		format      string
		compression string
	}{
		{name: "json keyless", format: "json"},
		{name: "json keyed", format: "json", keyFields: []string{"id"}},
		{name: "csv keyed gzip", format: "csv", keyFields: []string{"name", "id"}, compression: "gzip"},
		{name: "json snappy", format: "json", compression: "snappy"},
		{name: "json keyed lz4", format: "json", keyFields: []string{"id"}, compression: "lz4"},
		{name: "json zstd", format: "json", compression: "zstd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := createTopic(t, addr, 1)
			cfg := Config{Topic: topic, KeyFields: tc.keyFields, Format: connector.FormatSpec{Type: tc.format}, Compression: tc.compression}
			ctx := testenv.Context(t, 60*time.Second)
			s, h := newSink(t, addr, cfg, connector.SinkInput{Schema: sensorSchema(t), Mode: connector.Append})
			if err := s.Open(ctx); err != nil {
				t.Fatal(err)
			}
			const n = 2500
			// Two writes and a flush, then more: both flushes deliver.
			// The rows of each batch are overwritten once Write returned,
			// as a batch given back to its source is: the sink keeps none
			// (connector.RowCopier), so what it sends does not change.
			write := func(b *row.Batch) {
				t.Helper()
				if err := s.Write(ctx, b); err != nil {
					t.Fatal(err)
				}
				for _, c := range b.Changes {
					for j := range c.Row {
						c.Row[j] = row.StringValue("recycled")
					}
				}
			}
			if !s.CopiesRows() {
				t.Fatal("the sink does not say it copies rows")
			}
			write(batchOf(row.Insert, sensorRows(0, 1000)...))
			write(batchOf(row.Insert, sensorRows(1000, 2000)...))
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := len(readTopic(t, addr, topic)); got != 2000 {
				t.Fatalf("after the first flush the topic has %d messages, want 2000", got)
			}
			write(batchOf(row.Insert, sensorRows(2000, n)...))
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			msgs := readTopic(t, addr, topic)
			if len(msgs) != n {
				t.Fatalf("read %d messages, want %d", len(msgs), n)
			}
			var wantBytes int64
			for i, m := range msgs {
				var wantVal, wantKey string
				switch tc.format {
				case "json":
					wantVal = fmt.Sprintf(`{"id":%d,"name":"s%d","temp":%d.5}`, i, i%7, i)
				case "csv":
					wantVal = fmt.Sprintf(`%d,s%d,%d.5`, i, i%7, i)
				}
				switch strings.Join(tc.keyFields, ",") {
				case "id":
					wantKey = fmt.Sprintf(`{"id":%d}`, i)
				case "name,id":
					wantKey = fmt.Sprintf(`{"name":"s%d","id":%d}`, i%7, i)
				}
				if string(m.Value) != wantVal {
					t.Fatalf("message %d value %q, want %q", i, m.Value, wantVal)
				}
				if tc.keyFields == nil && m.Key != nil {
					t.Fatalf("message %d has key %q, want none", i, m.Key)
				}
				if tc.keyFields != nil && string(m.Key) != wantKey {
					t.Fatalf("message %d key %q, want %q", i, m.Key, wantKey)
				}
				wantBytes += int64(len(m.Key) + len(m.Value))
			}
			if got := s.Bytes(); got != wantBytes {
				t.Errorf("Bytes() = %d, want %d", got, wantBytes)
			}
			if r := h.rejects.all(); len(r) != 0 {
				t.Errorf("rejected %v", r)
			}
		})
	}
}

// TestUpsertTombstones writes +I, +U, -U and -D in upsert mode: the key is
// the upsert key as a JSON object, -D is a tombstone, -U writes nothing.
func TestUpsertTombstones(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := createTopic(t, addr, 1)
	ctx := testenv.Context(t, 60*time.Second)
	schema := testenv.Schema(t, "region STRING", "n BIGINT")
	s, _ := newSink(t, addr, Config{Topic: topic}, connector.SinkInput{Schema: schema, Mode: connector.Upsert, Key: []int{0}})
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	b := &row.Batch{}
	b.Append(row.Insert, row.Row{row.StringValue("eu"), row.BigIntValue(1)})
	b.Append(row.Insert, row.Row{row.StringValue("us"), row.BigIntValue(1)})
	b.Append(row.UpdateBefore, row.Row{row.StringValue("eu"), row.BigIntValue(1)})
	b.Append(row.UpdateAfter, row.Row{row.StringValue("eu"), row.BigIntValue(2)})
	b.Append(row.Delete, row.Row{row.StringValue("us"), row.BigIntValue(1)})
	if err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range readTopic(t, addr, topic) {
		v := "null"
		if m.Value != nil {
			v = string(m.Value)
		}
		got = append(got, string(m.Key)+" => "+v)
	}
	want := []string{
		`{"region":"eu"} => {"region":"eu","n":1}`,
		`{"region":"us"} => {"region":"us","n":1}`,
		`{"region":"eu"} => {"region":"eu","n":2}`,
		`{"region":"us"} => null`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("topic holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestKeyHashPartitioning writes keyed messages to a topic of 3
// partitions: every key lands in one partition only, the one the Java
// client's murmur2 partitioner picks, with its messages in write order;
// keyless messages spread over the partitions.
func TestKeyHashPartitioning(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := createTopic(t, addr, 3)
	ctx := testenv.Context(t, 60*time.Second)
	schema := testenv.Schema(t, "k STRING", "seq BIGINT")
	s, _ := newSink(t, addr, Config{Topic: topic, KeyFields: []string{"k"}, BatchSize: 50},
		connector.SinkInput{Schema: schema, Mode: connector.Append})
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	const keys, perKey = 40, 50
	for round := range perKey {
		b := &row.Batch{}
		for k := range keys {
			b.Append(row.Insert, row.Row{row.StringValue(fmt.Sprintf("key-%d", k)), row.BigIntValue(int64(round))})
		}
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := readTopic(t, addr, topic)
	if len(msgs) != keys*perKey {
		t.Fatalf("read %d messages, want %d", len(msgs), keys*perKey)
	}
	partOf := map[string]int{}
	next := map[string]int64{}
	used := map[int]bool{}
	for _, m := range msgs {
		k := string(m.Key)
		if p, seen := partOf[k]; seen && p != m.Partition {
			t.Fatalf("key %s in partitions %d and %d", k, p, m.Partition)
		}
		partOf[k] = m.Partition
		used[m.Partition] = true
		if want := (kafka.Murmur2Balancer{Consistent: true}).Balance(kafka.Message{Key: m.Key}, 0, 1, 2); want != m.Partition {
			t.Fatalf("key %s in partition %d, the Java partitioner picks %d", k, m.Partition, want)
		}
		var v struct{ Seq int64 }
		if err := json.Unmarshal(m.Value, &v); err != nil {
			t.Fatal(err)
		}
		if v.Seq != next[k] {
			t.Fatalf("key %s: seq %d after %d: out of order", k, v.Seq, next[k]-1)
		}
		next[k]++
	}
	if len(used) != 3 {
		t.Errorf("40 keys used partitions %v, want all 3", used)
	}

	// Keyless: batches move from partition to partition.
	topic2 := createTopic(t, addr, 3)
	s2, _ := newSink(t, addr, Config{Topic: topic2, BatchSize: 100}, connector.SinkInput{Schema: sensorSchema(t), Mode: connector.Append})
	if err := s2.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s2.Write(ctx, batchOf(row.Insert, sensorRows(0, 900)...)); err != nil {
		t.Fatal(err)
	}
	if err := s2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, m := range readTopic(t, addr, topic2) {
		count[m.Partition]++
	}
	if count[0] != 300 || count[1] != 300 || count[2] != 300 {
		t.Errorf("keyless messages per partition %v, want 300 each", count)
	}
}

// TestRefusedMessagesGoToOnError: a message larger than the topic allows
// and a keyless message to a compacted topic are refused by the broker for
// good; they go to the on_error policy with topic and partition, and the
// messages around them are delivered in order.
func TestRefusedMessagesGoToOnError(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 60*time.Second)
	schema := testenv.Schema(t, "id BIGINT", "text STRING")
	rows := func() *row.Batch {
		b := &row.Batch{}
		for i := range 20 {
			text := "small"
			if i == 7 {
				text = strings.Repeat("x", 5000)
			}
			b.Append(row.Insert, row.Row{row.BigIntValue(int64(i)), row.StringValue(text)})
		}
		return b
	}

	t.Run("too large", func(t *testing.T) {
		topic := createTopic(t, addr, 1, kafka.ConfigEntry{ConfigName: "max.message.bytes", ConfigValue: "2000"})
		s, h := newSink(t, addr, Config{Topic: topic}, connector.SinkInput{Schema: schema, Mode: connector.Append})
		if err := s.Open(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, rows()); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range readTopic(t, addr, topic) {
			var v struct{ ID int }
			if err := json.Unmarshal(m.Value, &v); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, fmt.Sprint(v.ID))
		}
		if got, want := strings.Join(ids, ","), "0,1,2,3,4,5,6,8,9,10,11,12,13,14,15,16,17,18,19"; got != want {
			t.Errorf("delivered ids %s, want %s", got, want)
		}
		r := h.rejects.all()
		if len(r) != 1 || !strings.Contains(r[0].Position, "topic "+topic+", partition 0") ||
			!strings.Contains(r[0].Err.Error(), "Message Size Too Large") || !strings.Contains(string(r[0].Raw), `"id":7`) {
			t.Fatalf("rejected %+v", r)
		}
	})

	t.Run("keyless to compacted", func(t *testing.T) {
		topic := createTopic(t, addr, 1, kafka.ConfigEntry{ConfigName: "cleanup.policy", ConfigValue: "compact"})
		s, h := newSink(t, addr, Config{Topic: topic}, connector.SinkInput{Schema: schema, Mode: connector.Append})
		if err := s.Open(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, rows()); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if n := len(readTopic(t, addr, topic)); n != 0 {
			t.Errorf("a compacted topic took %d keyless messages", n)
		}
		r := h.rejects.all()
		if len(r) != 20 || !strings.Contains(r[0].Err.Error(), "Invalid Record") {
			t.Fatalf("rejected %d: %+v", len(r), r)
		}
	})
}

// TestMissingTopic: without create_topic a missing topic is a clear error
// at Open; with it the topic is created with the partitions asked for.
func TestMissingTopic(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 60*time.Second)
	topic := testenv.UniqueName(t, "missing")
	in := connector.SinkInput{Schema: sensorSchema(t), Mode: connector.Append}
	s, _ := newSink(t, addr, Config{Topic: topic}, in)
	err := s.Open(ctx)
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "create_topic: true") {
		t.Fatalf("Open of a missing topic: %v", err)
	}

	deleteAtEnd(t, addr, topic)
	s2, h := newSink(t, addr, Config{Topic: topic, CreateTopic: true, Partitions: 2}, in)
	if err := s2.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s2.parts) != 2 || !strings.Contains(h.logs.String(), "created the topic") {
		t.Fatalf("created topic has %d partitions; logs: %s", len(s2.parts), h.logs)
	}
	// Creating the topic is what create_topic asks for, not a failure.
	if logs := h.logs.String(); strings.Contains(logs, "level=WARN") || strings.Contains(logs, "will retry") {
		t.Errorf("creating the topic logged a warning or a retry:\n%s", logs)
	}
	// A second sink finds it and leaves it as it is.
	s3, h3 := newSink(t, addr, Config{Topic: topic, CreateTopic: true, Partitions: 4}, in)
	if err := s3.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s3.parts) != 2 || !strings.Contains(h3.logs.String(), "another partition count") {
		t.Fatalf("existing topic: %d partitions; logs: %s", len(s3.parts), h3.logs)
	}
}

// TestBrokerUnavailableAtStart points the sink at a port that resets
// connections (a testenv.Proxy that is down): Open keeps retrying with a
// clear log and no error; once the port forwards to the broker, Open succeeds and the rows arrive. (Kafka
// advertises its own address in metadata, so after bootstrap the sink
// talks to the broker directly; the proxy stands for a broker that is not
// up yet.)
func TestBrokerUnavailableAtStart(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 90*time.Second)
	topic := createTopic(t, addr, 1)
	px := testenv.NewProxy(t, addr)
	s, h := newSink(t, addr, Config{Topic: topic, Kafka: kafkaconf.Config{Brokers: []string{px.Addr()}, DialTimeout: time.Second}},
		connector.SinkInput{Schema: sensorSchema(t), Mode: connector.Append})
	opened := make(chan error, 1)
	go func() { opened <- s.Open(ctx) }()
	testenv.Eventually(t, 30*time.Second, "a retry log", func() error {
		if !strings.Contains(h.logs.String(), "will retry") {
			return fmt.Errorf("logs so far: %q", h.logs.String())
		}
		return nil
	})
	select {
	case err := <-opened:
		t.Fatalf("Open returned %v while the broker was unreachable", err)
	default:
	}
	logs := h.logs.String()
	if !strings.Contains(logs, "metadata of topic") || !strings.Contains(logs, px.Addr()) || !strings.Contains(logs, "connection reset by peer") {
		t.Errorf("the retry log does not say what failed where: %s", logs)
	}
	px.Up()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("Open did not succeed once the broker was reachable")
	}
	if err := s.Write(ctx, batchOf(row.Insert, sensorRows(0, 100)...)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(readTopic(t, addr, topic)); n != 100 {
		t.Errorf("read %d messages, want 100", n)
	}
}

// TestCreateTopicRace: a topic another client created between the
// metadata lookup and the create request is not reported as created by
// this sink, nor with the partition count this sink asked for.
func TestCreateTopicRace(t *testing.T) {
	addr := testenv.Kafka(t)
	ctx := testenv.Context(t, 60*time.Second)
	topic := createTopic(t, addr, 1)
	in := connector.SinkInput{Schema: sensorSchema(t), Mode: connector.Append}
	s, h := newSink(t, addr, Config{Topic: topic, CreateTopic: true, Partitions: 4}, in)
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	// What topicPartitions does when the metadata it read was older than
	// the other client's create.
	err := s.createTopic(ctx)
	if err == nil {
		t.Fatal("createTopic of an existing topic returned nil; the caller must read the metadata again")
	}
	logs := h.logs.String()
	if strings.Contains(logs, "created the topic") {
		t.Errorf("an existing topic was logged as created:\n%s", logs)
	}
	if !strings.Contains(logs, "already exists") {
		t.Errorf("the race is not logged:\n%s", logs)
	}
}

package kafka

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// createTopic makes a fresh topic with n partitions and the given topic
// configs, deleted when the test ends.
func createTopic(t testing.TB, addr string, n int, configs ...kafka.ConfigEntry) string {
	t.Helper()
	ctx := testenv.Context(t, 60*time.Second)
	topic := testenv.UniqueName(t, "sink")
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
	res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: n, ReplicationFactor: 1, ConfigEntries: configs}},
	})
	if err == nil {
		err = res.Errors[topic]
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	deleteAtEnd(t, addr, topic)
	return topic
}

func deleteAtEnd(t testing.TB, addr, topic string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
		if _, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}}); err != nil {
			t.Logf("delete topic %s: %v", topic, err)
		}
	})
}

// message is what the tests read back: a nil Value is a tombstone.
type message struct {
	Partition int
	Offset    int64
	Key       []byte
	Value     []byte
}

// readTopic reads every message of topic up to the end offsets it has now,
// partition by partition, each partition in offset order.
func readTopic(t testing.TB, addr, topic string) []message {
	t.Helper()
	ctx := testenv.Context(t, 60*time.Second)
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(md.Topics) != 1 || md.Topics[0].Error != nil {
		t.Fatalf("metadata of %s: %v %+v", topic, err, md)
	}
	var reqs []kafka.OffsetRequest
	for _, p := range md.Topics[0].Partitions {
		reqs = append(reqs, kafka.LastOffsetOf(p.ID))
	}
	offs, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		t.Fatalf("list offsets: %v", err)
	}
	var out []message
	for _, po := range offs.Topics[topic] {
		if po.Error != nil {
			t.Fatalf("offsets of partition %d: %v", po.Partition, po.Error)
		}
		end := po.LastOffset
		if end == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers: []string{addr}, Topic: topic, Partition: po.Partition,
			MinBytes: 1, MaxBytes: 10 << 20, MaxWait: 100 * time.Millisecond,
		})
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				r.Close()
				t.Fatalf("read partition %d: %v", po.Partition, err)
			}
			out = append(out, message{Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value})
			if m.Offset+1 >= end {
				break
			}
		}
		r.Close()
	}
	return out
}

func testRegistry() *connector.Registry {
	r := connector.NewRegistry()
	formats.Register(r)
	return r
}

// schemaOf parses "name TYPE" pairs.
func schemaOf(t testing.TB, cols ...string) row.Schema {
	t.Helper()
	var fields []row.Field
	for i := 0; i+1 < len(cols); i += 2 {
		typ, err := row.ParseType(cols[i+1])
		if err != nil {
			t.Fatal(err)
		}
		fields = append(fields, row.Field{Name: cols[i], Type: typ})
	}
	return row.NewSchema(fields...)
}

// rejects collects what the sink hands to its on_error policy.
type rejects struct {
	mu  sync.Mutex
	got []connector.BadRecord
}

func (r *rejects) reject(b connector.BadRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, b)
	return nil
}

func (r *rejects) all() []connector.BadRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]connector.BadRecord(nil), r.got...)
}

type harness struct {
	rejects *rejects
	logs    *testenv.Buffer
}

// newSink builds and binds a sink to the broker at addr; cfg.Kafka's
// brokers default to addr. Close runs when the test ends.
func newSink(t testing.TB, addr string, cfg Config, in connector.SinkInput) (*Sink, harness) {
	t.Helper()
	if len(cfg.Kafka.Brokers) == 0 {
		cfg.Kafka = kafkaconf.Config{Brokers: []string{addr}}
	}
	h := harness{rejects: &rejects{}, logs: &testenv.Buffer{}}
	s, err := New(cfg, connector.SinkEnv{
		Name:    "out",
		Logger:  slog.New(slog.NewTextHandler(h.logs, nil)),
		Formats: testRegistry(),
		Reject:  h.rejects.reject,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Bind(in); err != nil {
		t.Fatalf("Bind: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, h
}

// batchOf builds a batch from kinds and rows of values.
func batchOf(kind row.Kind, rows ...row.Row) *row.Batch {
	b := &row.Batch{}
	for _, r := range rows {
		b.Append(kind, r)
	}
	return b
}

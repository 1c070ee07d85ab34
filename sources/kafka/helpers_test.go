package kafka

import (
	"context"
	"log/slog"
	"sort"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// msg is a message for produce: WriterData carries the partition.
func msg(partition int, key, value string) kafka.Message {
	m := kafka.Message{Value: []byte(value), WriterData: partition}
	if key != "" {
		m.Key = []byte(key)
	}
	return m
}

// produce writes msgs, each to the partition its WriterData names, in
// order, and waits for every acknowledgement.
func produce(t *testing.T, addr, topic string, msgs ...kafka.Message) {
	t.Helper()
	w := &kafka.Writer{
		Addr:         kafka.TCP(addr),
		Topic:        topic,
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond,
		Balancer: kafka.BalancerFunc(func(m kafka.Message, partitions ...int) int {
			return m.WriterData.(int)
		}),
	}
	defer w.Close()
	if err := w.WriteMessages(testenv.Context(t, 60*time.Second), msgs...); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func testRegistry() *connector.Registry {
	r := connector.NewRegistry()
	formats.Register(r)
	return r
}

type testSource struct {
	schema row.Schema
	meta   []string
	reject func(connector.BadRecord) error
	logger *slog.Logger
}

// open builds and opens a source; Close runs when the test ends.
func (ts testSource) open(t *testing.T, cfg Config, restore []byte) *Source {
	t.Helper()
	s := ts.build(t, cfg)
	if restore != nil {
		if err := s.Restore(restore); err != nil {
			t.Fatalf("Restore: %v", err)
		}
	}
	if err := s.Open(testenv.Context(t, 60*time.Second)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { closeSource(t, s) })
	return s
}

func (ts testSource) build(t *testing.T, cfg Config) *Source {
	t.Helper()
	logger := ts.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s, err := New(cfg, connector.SourceEnv{
		Name: "src", Schema: ts.schema, Metadata: ts.meta, Logger: logger,
		Reject: ts.reject, Formats: testRegistry(),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func closeSource(t *testing.T, s *Source) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// readN reads until it has n changes, with batches of at most max.
func readN(t *testing.T, s *Source, n, max int) []row.Change {
	t.Helper()
	ctx := testenv.Context(t, 60*time.Second)
	var out []row.Change
	for len(out) < n {
		b, err := s.Read(ctx, min(max, n-len(out)))
		if b != nil {
			if b.Len() > max {
				t.Fatalf("Read(%d) returned %d changes", max, b.Len())
			}
			out = append(out, b.Changes...)
		}
		if err != nil {
			t.Fatalf("Read after %d of %d changes: %v", len(out), n, err)
		}
	}
	return out
}

// printed renders changes as +I[...] strings, sorted, for comparisons that
// do not depend on the interleaving of partitions.
func printed(cs []row.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	sort.Strings(out)
	return out
}

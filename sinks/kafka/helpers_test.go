package kafka

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

func testRegistry() *connector.Registry {
	r := connector.NewRegistry()
	formats.Register(r)
	return r
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

package kafka

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
)

// TestConformance runs the connector kit on the Kafka sink writing JSON
// to a topic of two partitions. Every connection the sink makes, to the
// bootstrap address and to the broker that metadata names, goes to the
// address the kit gives, so that a proxy there stands for the broker.
func TestConformance(t *testing.T) {
	addr := testenv.Kafka(t)
	conntest.RunSink(t, conntest.Sink{
		Mode:        connector.Append,
		Server:      addr,
		AtLeastOnce: true,
		Target: func(t *testing.T) conntest.Target {
			topic := createTopic(t, addr, 2)
			return conntest.Target{
				Sink: func(t *testing.T, via string) connector.Sink {
					s, err := New(Config{Topic: topic, Kafka: kafkaconf.Config{Brokers: []string{via}, DialTimeout: time.Second}},
						connector.SinkEnv{Name: "out", Logger: slog.New(slog.DiscardHandler), Formats: testRegistry()})
					if err != nil {
						t.Fatal(err)
					}
					var d net.Dialer
					s.dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
						return d.DialContext(ctx, network, via)
					}
					return s
				},
				Landed: func(t *testing.T) []row.Row { return jsonRows(t, addr, topic) },
			}
		},
		// A killed process took the produce requests the brokers answered;
		// flushing them first is the worst case for duplicates.
		Crash: func(t *testing.T, s connector.Sink) {
			if err := s.Flush(testenv.Context(t, time.Minute)); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		},
	})
}

// jsonRows reads the messages {"id":..,"v":..} of conntest.Schema in
// topic back into rows.
func jsonRows(t *testing.T, addr, topic string) []row.Row {
	t.Helper()
	var rows []row.Row
	for _, m := range readTopic(t, addr, topic) {
		var v struct {
			ID int64
			V  string
		}
		if err := json.Unmarshal(m.Value, &v); err != nil {
			t.Fatalf("message %s: %v", m.Value, err)
		}
		rows = append(rows, conntest.Row(v.ID, v.V))
	}
	return rows
}

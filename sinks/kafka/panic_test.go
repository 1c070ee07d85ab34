package kafka

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// panickingTransport stands for a bug below a sender: the client's
// round trip panics on the sender's goroutine.
type panickingTransport struct{}

func (panickingTransport) RoundTrip(context.Context, net.Addr, protocol.Message) (protocol.Message, error) {
	panic("transport bug")
}

// TestPanicInASenderFailsTheSink: a panic on a sender's goroutine is the
// sink's error, returned by Flush with its stack; it never takes the
// process down.
func TestPanicInASenderFailsTheSink(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := createTopic(t, addr, 1)
	ctx := testenv.Context(t, 60*time.Second)
	s, _ := newSink(t, addr, Config{Topic: topic, Format: connector.FormatSpec{Type: "json"}},
		connector.SinkInput{Schema: sensorSchema(t), Mode: connector.Append})
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	// The senders read the client only once Write kicks them.
	s.client.Transport = panickingTransport{}
	if err := s.Write(ctx, batchOf(row.Insert, sensorRows(0, 10)...)); err != nil {
		t.Fatal(err)
	}
	err := s.Flush(ctx)
	if err == nil || !strings.Contains(err.Error(), "transport bug") {
		t.Fatalf("Flush = %v, want the panic as the sink's error", err)
	}
	if _, ok := panics.Stack(err); !ok {
		t.Errorf("Flush's error %v carries no stack", err)
	}
}

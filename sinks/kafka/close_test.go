package kafka

import (
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// TestCloseDeliversWhatWasWritten: rows written and not yet flushed are
// in the topic once Close returned nil. The linger is an hour, so only a
// flush sends them; a Close that only stopped the senders dropped all 500.
func TestCloseDeliversWhatWasWritten(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := createTopic(t, addr, 2)
	hour := time.Hour
	s, _ := newSink(t, addr, Config{Topic: topic, Linger: &hour, KeyFields: []string{"id"}},
		connector.SinkInput{Schema: sensorSchema(t), Mode: connector.Append})
	ctx := testenv.Context(t, time.Minute)
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, batchOf(row.Insert, sensorRows(0, 500)...)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(readTopic(t, addr, topic)); n != 500 {
		t.Fatalf("the topic holds %d messages after Close, want the 500 written", n)
	}
}

// TestCloseFailsWhenItCannotDeliver: when the brokers do not acknowledge
// what was written (its produce request is held on its way) within the
// write timeout, Close says how many messages it could not deliver
// instead of returning nil as if they were written.
func TestCloseFailsWhenItCannotDeliver(t *testing.T) {
	addr := testenv.Kafka(t)
	topic := createTopic(t, addr, 1)
	proxy := testenv.NewHoldProxy(t, addr, testenv.KafkaFraming)
	hour := time.Hour
	cfg := Config{Topic: topic, Linger: &hour, WriteTimeout: 500 * time.Millisecond,
		Kafka: kafkaconf.Config{Brokers: []string{proxy.Addr()}}}
	s, _ := newSink(t, addr, cfg, connector.SinkInput{Schema: sensorSchema(t), Mode: connector.Append})
	ctx := testenv.Context(t, time.Minute)
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	held := proxy.Hold(testenv.KafkaProduce)
	if err := s.Write(ctx, batchOf(row.Insert, sensorRows(0, 50)...)); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close(ctx) }()
	var err error
	select {
	case <-held:
		select {
		case err = <-closed:
		case <-ctx.Done():
			t.Fatal("Close did not return within a minute of a held produce request")
		}
	case err = <-closed: // it never tried to send them
	}
	if err == nil || !strings.Contains(err.Error(), "50 messages") || !strings.Contains(err.Error(), "not acknowledged") {
		t.Fatalf("Close returned %v, want an error that 50 messages were not acknowledged", err)
	}
}

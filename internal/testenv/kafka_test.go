package testenv_test

import (
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/testenv"
)

// TestReadTopicMadeElsewhere reads, right after it was written, a topic
// that another client created: the code under test, in this process or
// a child. The process's clients have already seen the broker (a topic
// of the test's own), so a reader that trusted their metadata, refreshed
// only every few seconds, would not find the topic.
func TestReadTopicMadeElsewhere(t *testing.T) {
	addr := testenv.Kafka(t)
	testenv.KafkaTopic(t, addr, 1)

	own := &kafka.Transport{}
	defer own.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second, Transport: own}
	topic := testenv.UniqueName(t, "elsewhere")
	res, err := client.CreateTopics(testenv.Context(t, time.Minute), &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}},
	})
	if err == nil {
		err = res.Errors[topic]
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	testenv.DeleteTopicAtEnd(t, addr, topic)
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Transport: own, Balancer: &kafka.RoundRobin{}, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	want := []kafka.Message{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}}
	if err := w.WriteMessages(testenv.Context(t, time.Minute), want...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	got := testenv.ReadTopic(t, addr, topic)
	if len(got) != len(want) {
		t.Fatalf("read %d messages of %s, want %d", len(got), topic, len(want))
	}
}

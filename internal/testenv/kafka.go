package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// KafkaTopic creates a topic of the given partitions and topic configs on
// the broker at addr (Kafka(t)), and deletes it when the test ends.
func KafkaTopic(t testing.TB, addr string, partitions int, configs ...kafka.ConfigEntry) string {
	t.Helper()
	return KafkaTopicVia(t, &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}, partitions, configs...)
}

// KafkaTopicVia is KafkaTopic through client: a client of the SASL
// listener, whose transport authenticates.
func KafkaTopicVia(t testing.TB, client *kafka.Client, partitions int, configs ...kafka.ConfigEntry) string {
	t.Helper()
	topic := UniqueName(t, "topic")
	res, err := client.CreateTopics(Context(t, 60*time.Second), &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1, ConfigEntries: configs}},
	})
	if err == nil {
		err = res.Errors[topic]
	}
	if err != nil {
		t.Fatalf("create topic %s at %s: %v", topic, client.Addr, err)
	}
	deleteTopicAtEnd(t, client, topic)
	return topic
}

// DeleteTopicAtEnd deletes topic from the broker at addr when the test
// ends: a topic the code under test created.
func DeleteTopicAtEnd(t testing.TB, addr, topic string) {
	deleteTopicAtEnd(t, &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}, topic)
}

// deleteTopicAtEnd fails the test when the topic cannot be deleted: a
// topic left behind is a leak on the shared broker.
func deleteTopicAtEnd(t testing.TB, client *kafka.Client, topic string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
		if err == nil {
			err = res.Errors[topic]
		}
		if err != nil {
			t.Errorf("delete topic %s: %v", topic, err)
		}
	})
}

// ReadTopic reads every message of topic from the broker at addr, up to
// the end offsets the topic has now: partition by partition, each in
// offset order. A tombstone has a nil Value.
func ReadTopic(t testing.TB, addr, topic string) []kafka.Message {
	t.Helper()
	ctx := Context(t, 60*time.Second)
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
		t.Fatalf("list offsets of %s: %v", topic, err)
	}
	var out []kafka.Message
	for _, po := range offs.Topics[topic] {
		if po.Error != nil {
			t.Fatalf("offsets of partition %d: %v", po.Partition, po.Error)
		}
		if po.LastOffset > 0 {
			out = append(out, readPartition(t, ctx, addr, topic, po.Partition, po.LastOffset)...)
		}
	}
	return out
}

// readPartition reads one partition from its start up to end.
func readPartition(t testing.TB, ctx context.Context, addr, topic string, partition int, end int64) []kafka.Message {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{addr}, Topic: topic, Partition: partition,
		MinBytes: 1, MaxBytes: 10 << 20, MaxWait: 100 * time.Millisecond,
	})
	defer r.Close()
	var out []kafka.Message
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("read partition %d of %s: %v", partition, topic, err)
		}
		out = append(out, m)
		if m.Offset+1 >= end {
			return out
		}
	}
}

package testenv

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/internal/kafkarecords"
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
// offset order, as Kafka's consumers see them (the transaction markers of
// the Kafka sink's fencing are not messages). A tombstone has a nil
// Value.
func ReadTopic(t testing.TB, addr, topic string) []kafka.Message {
	t.Helper()
	ctx := Context(t, 60*time.Second)
	// A transport of its own: the shared one answers metadata from what it
	// last fetched, up to seconds old, which lacks a topic the code under
	// test has just created.
	own := &kafka.Transport{}
	defer own.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second, Transport: own}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(md.Topics) != 1 || md.Topics[0].Error != nil {
		t.Fatalf("metadata of %s: %v %+v", topic, err, md)
	}
	// Two requests: brokers refuse a partition named twice in one.
	offsets := func(of func(int) kafka.OffsetRequest, pick func(kafka.PartitionOffsets) int64) map[int]int64 {
		var reqs []kafka.OffsetRequest
		for _, p := range md.Topics[0].Partitions {
			reqs = append(reqs, of(p.ID))
		}
		res, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
		if err != nil {
			t.Fatalf("list offsets of %s: %v", topic, err)
		}
		out := map[int]int64{}
		for _, po := range res.Topics[topic] {
			if po.Error != nil {
				t.Fatalf("offsets of partition %d: %v", po.Partition, po.Error)
			}
			out[po.Partition] = pick(po)
		}
		return out
	}
	first := offsets(kafka.FirstOffsetOf, func(po kafka.PartitionOffsets) int64 { return po.FirstOffset })
	end := offsets(kafka.LastOffsetOf, func(po kafka.PartitionOffsets) int64 { return po.LastOffset })
	parts := slices.Sorted(maps.Keys(end))
	var out []kafka.Message
	for _, p := range parts {
		out = append(out, readPartition(t, ctx, client, topic, p, first[p], end[p])...)
	}
	return out
}

// readPartition reads one partition from offset from up to end, stepping
// over transaction markers.
func readPartition(t testing.TB, ctx context.Context, client *kafka.Client, topic string, partition int, from, end int64) []kafka.Message {
	t.Helper()
	var out []kafka.Message
	for from < end {
		res, err := client.Fetch(ctx, &kafka.FetchRequest{
			Topic: topic, Partition: partition, Offset: from,
			MinBytes: 1, MaxBytes: 10 << 20, MaxWait: 100 * time.Millisecond,
		})
		if err == nil {
			err = res.Error
		}
		if err != nil {
			t.Fatalf("read partition %d of %s from offset %d: %v", partition, topic, from, err)
		}
		start := from
		err = kafkarecords.EachRecord(res.Records, func(rec *kafka.Record, marker bool) {
			if rec.Offset < from || rec.Offset >= end {
				return
			}
			from = rec.Offset + 1
			if marker {
				return
			}
			out = append(out, kafka.Message{
				Topic: topic, Partition: partition, Offset: rec.Offset, Time: rec.Time,
				Key: readBytes(t, rec.Key), Value: readBytes(t, rec.Value), Headers: rec.Headers,
				HighWaterMark: res.HighWatermark,
			})
		})
		if err != nil {
			t.Fatalf("read partition %d of %s from offset %d: %v", partition, topic, start, err)
		}
		if from == start {
			t.Fatalf("partition %d of %s: nothing readable at offset %d of %d", partition, topic, from, end)
		}
	}
	return out
}

// readBytes reads a record's key or value; nil stays nil.
func readBytes(t testing.TB, b kafka.Bytes) []byte {
	if b == nil {
		return nil
	}
	defer b.Close()
	data, err := io.ReadAll(b)
	if err != nil {
		t.Fatalf("read a record: %v", err)
	}
	return data
}

// KafkaMarkers writes a transaction marker to each of the first
// partitions of topic, as the Kafka sink's fencing does when it starts: a
// transaction on them, aborted without a message. It returns once the
// markers are in the partitions.
func KafkaMarkers(t testing.TB, addr, topic string, partitions int) {
	t.Helper()
	ctx := Context(t, 60*time.Second)
	client := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second}
	txn := "markers/" + topic
	// until is the call repeated while the coordinator is busy (loading,
	// or writing the markers of the transaction before).
	until := func(what string, call func() error) {
		for {
			err := call()
			var ke kafka.Error
			if err == nil {
				return
			}
			if ctx.Err() == nil && (errors.Is(err, kafka.ConcurrentTransactions) || errors.As(err, &ke) && ke.Temporary()) {
				continue
			}
			t.Fatalf("markers on %s: %s: %v", topic, what, err)
		}
	}
	var prod kafka.ProducerSession
	epoch := func() error {
		res, err := client.InitProducerID(ctx, &kafka.InitProducerIDRequest{TransactionalID: txn, TransactionTimeoutMs: 60000, ProducerID: -1, ProducerEpoch: -1})
		if err == nil {
			err = res.Error
		}
		if err == nil {
			prod = *res.Producer
		}
		return err
	}
	until("producer epoch", epoch)
	parts := make([]kafka.AddPartitionToTxn, partitions)
	for i := range parts {
		parts[i].Partition = i
	}
	until("add the partitions", func() error {
		res, err := client.AddPartitionsToTxn(ctx, &kafka.AddPartitionsToTxnRequest{
			TransactionalID: txn, ProducerID: prod.ProducerID, ProducerEpoch: prod.ProducerEpoch,
			Topics: map[string][]kafka.AddPartitionToTxn{topic: parts},
		})
		if err != nil {
			return err
		}
		for _, p := range res.Topics[topic] {
			if p.Error != nil {
				return p.Error
			}
		}
		return nil
	})
	until("abort", func() error {
		res, err := client.EndTxn(ctx, &kafka.EndTxnRequest{TransactionalID: txn, ProducerID: prod.ProducerID, ProducerEpoch: prod.ProducerEpoch})
		if err == nil {
			err = res.Error
		}
		return err
	})
	// The coordinator gives the next epoch once the markers are written.
	until("the markers written", epoch)
}

package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkarecords"
	"github.com/etld/etld/internal/retry"
)

// Transaction markers. A topic written by a transactional producer, or
// by etld's Kafka sink, which fences a killed run's late writes with an
// aborted empty transaction at every start, holds control records: one
// per partition per transaction. Kafka's consumers never show them;
// kafka-go's Reader returns them as messages, whose key is the marker's
// version and type (00 00 00 00 abort, 00 00 00 01 commit) and whose value
// its version and coordinator epoch (6 bytes). Nothing else in the
// message tells a marker from a message that looks the same, so the
// reader goroutine asks the broker about such a message: a fetch at its
// offset, whose record stream says whether it belongs to a control batch.
// Read then steps over it as it would over a compacted gap.

// looksLikeMarker reports whether m has the shape kafka-go's Reader gives
// a transaction marker.
func looksLikeMarker(m *kafka.Message) bool {
	k, v := m.Key, m.Value
	return len(k) == 4 && k[0] == 0 && k[1] == 0 && k[2] == 0 && k[3] <= 1 &&
		len(v) >= 6 && v[0] == 0 && v[1] == 0 && len(m.Headers) == 0
}

// isMarker asks the broker whether the record at offset of tp is a
// transaction marker, retrying until it answers or ctx ends.
func (s *Source) isMarker(ctx context.Context, tp topicPartition, offset int64) (bool, error) {
	var marker bool
	what := fmt.Sprintf("kafka source: is the record at %s offset %d a transaction marker", tp, offset)
	err := retry.Do(ctx, setupBackoff, s.log, what, func(ctx context.Context) error {
		res, err := s.client.Fetch(ctx, &kafka.FetchRequest{
			Topic: tp.topic, Partition: tp.partition, Offset: offset,
			MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond,
		})
		if err == nil {
			err = res.Error
		}
		if err != nil {
			return err
		}
		found := false
		err = kafkarecords.EachRecord(res.Records, func(rec *kafka.Record, m bool) {
			if rec.Offset == offset {
				found, marker = true, m
			}
		})
		if err == nil && !found {
			err = fmt.Errorf("the fetch at offset %d did not return it", offset)
		}
		return err
	})
	return marker, err
}

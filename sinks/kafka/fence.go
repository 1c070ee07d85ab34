package kafka

// Fencing a dead life's late writes.
//
// A produce request that a killed (or frozen) process had sent can reach
// the broker after the restarted run wrote: in exactly-once mode its
// messages are then duplicates the restarted run did not see when it read
// the partitions' ends at Open, and in upsert mode they put an older
// value after a newer one. Kafka fences such writes by producer epoch:
// InitProducerID with a transactional id gives the id's producer a new
// epoch, and a partition that has had a batch of the new epoch refuses
// every later batch of an older one (INVALID_PRODUCER_EPOCH). So in a run
// with a state directory the sink asks, at Open and before reading the
// partitions' ends, for the producer of the transactional id
// "etld/<pipeline>/<sink>@<instance>" (the instance being the state
// directory's), and stamps every batch with that producer id, the new
// epoch and per-partition sequence numbers, as Kafka's idempotent
// producer does. It opens no transaction: the messages are plain ones,
// visible at once, and no control records are written (kafka-go's
// consumers, etld's Kafka source among them, would read those as empty
// messages and do not filter aborted transactions).
//
// What it covers: a late batch of an earlier life is refused once the
// current life has written to its partition. One that arrives after the
// current life's InitProducerID and before its first write to the
// partition is still appended (Kafka learns of the epoch per partition,
// from a batch or a transaction marker). The sequence numbers also make
// the broker drop a retried batch it had appended already (an answer
// lost to a broken connection), which otherwise duplicated it.
//
// Without a state directory, with acks: leader (the leader may lose
// acknowledged batches, and their sequence numbers with them), or when
// the cluster refuses InitProducerID (no WRITE on the transactional id),
// batches carry no producer, as before.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/retry"
)

// fenceTxnTimeout is the transaction timeout InitProducerID is given: the
// sink opens no transaction, but the request needs one the broker takes.
const fenceTxnTimeout = time.Minute

// transactionalID names the sink's producer across the runs of a state
// directory.
func (s *Sink) transactionalID() string {
	return "etld/" + s.run.Pipeline + "/" + s.name + "@" + s.run.Instance
}

// initProducer takes a new epoch of the sink's producer (see above), or
// leaves the sink unfenced when it cannot; an error only when ctx ends.
func (s *Sink) initProducer(ctx context.Context) error {
	s.prod = noProducer
	if !s.run.Resumable || s.run.Instance == "" || s.acks != kafka.RequireAll {
		return nil
	}
	txn := s.transactionalID()
	var prod producer
	var refused error
	err := retry.Do(ctx, retry.Backoff{Initial: 100 * time.Millisecond, Max: 2 * time.Second}, s.log,
		fmt.Sprintf("kafka sink %q: producer epoch of %s", s.name, txn),
		func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, s.timeout)
			defer cancel()
			res, err := s.client.InitProducerID(ctx, &kafka.InitProducerIDRequest{
				TransactionalID:      txn,
				TransactionTimeoutMs: int(fenceTxnTimeout / time.Millisecond),
				ProducerID:           -1,
				ProducerEpoch:        -1,
			})
			if err == nil {
				err = res.Error
			}
			var ke kafka.Error
			switch {
			case err == nil:
				prod = producer{id: int64(res.Producer.ProducerID), epoch: int16(res.Producer.ProducerEpoch)}
				return nil
			case kafkaconf.Refused(err):
				refused = err
				return nil
			case errors.As(err, &ke) && !ke.Temporary() && ke != kafka.ConcurrentTransactions:
				refused = err
				return nil
			}
			// Not yet: the coordinator loads, moves, or is aborting the
			// transaction of the epoch before.
			return err
		})
	if err != nil {
		return s.errorf("producer epoch of %s: %w", txn, err)
	}
	if refused != nil {
		s.log.Warn("kafka sink: the cluster refused a producer epoch; a late write of a killed run may land after this run's writes",
			"topic", s.topic, "transactional_id", txn, "error", refused.Error())
		return nil
	}
	s.prod = prod
	s.log.Info("kafka sink fences earlier runs' late writes", "topic", s.topic, "producer_id", prod.id, "epoch", prod.epoch)
	return nil
}

// fenced reports whether batches carry the sink's producer.
func (s *Sink) fenced() bool { return s.prod.id >= 0 }

// nextSeq is the sequence number after n records from seq; Kafka's wrap
// from the largest int32 to 0.
func nextSeq(seq int32, n int) int32 {
	return int32((int64(seq) + int64(n)) % (1 << 31))
}

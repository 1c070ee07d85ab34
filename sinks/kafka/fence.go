package kafka

// Fencing a dead life's late writes.
//
// A produce request that a killed (or frozen) process had sent can reach
// the broker after the restarted run started: in exactly-once mode its
// messages are then duplicates the restarted run did not see when it read
// the partitions' ends at Open, and in upsert mode they put an older
// value after a newer one. Kafka fences such writes by producer epoch:
// InitProducerID with a transactional id gives the id's producer a new
// epoch, and a partition that knows of the new epoch refuses every later
// batch of an older one (INVALID_PRODUCER_EPOCH). A partition learns of
// an epoch from a batch of it or from a transaction marker. So in a run
// with a state directory the sink, at Open and before it reads the
// partitions' ends:
//
//  1. asks for a new epoch of the producer of the transactional id
//     "etld/<pipeline>/<sink>@<instance>" (the instance being the state
//     directory's);
//  2. opens a transaction of that epoch on every partition of the topic
//     (AddPartitionsToTxn) and aborts it at once (EndTxn), writing no
//     message: the coordinator writes an abort marker of the new epoch
//     to every partition, which from then on refuses the older epochs;
//  3. asks for the next epoch, which the coordinator gives once the
//     markers are written, and stamps every batch with the producer id,
//     that epoch and per-partition sequence numbers, as Kafka's
//     idempotent producer does.
//
// The messages themselves are plain ones, outside any transaction,
// visible at once: consumers need no read_committed, and there are no
// aborted messages for kafka-go's consumers (which do not filter them)
// to return. The markers are control records, one per partition per
// start, which Kafka's consumers skip; kafka-go's Reader returns them as
// messages (a 4-byte key, a 6-byte value), which etld's Kafka source
// recognises and skips. A life killed between the two steps leaves its
// empty transaction open until the next life's InitProducerID aborts it,
// or the coordinator does after fenceTxnTimeout; meanwhile a
// read_committed consumer of the topic waits.
//
// The sequence numbers also make the broker drop a retried batch it had
// appended already (an answer lost to a broken connection), which
// otherwise duplicated it.
//
// Without a state directory, with acks: leader (the leader may lose
// acknowledged batches, and their sequence numbers with them), or when
// the cluster refuses InitProducerID (no WRITE on the transactional id),
// batches carry no producer, as before. When only the markers fail, the
// batches carry the epoch and a partition refuses older ones from this
// life's first batch to it on; the sink says so in a warning.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/retry"
)

// fenceTxnTimeout is the transaction timeout InitProducerID is given: it
// bounds how long the empty transaction of a life killed before aborting
// it stays open.
const fenceTxnTimeout = time.Minute

// fenceBackoff paces the retries of the fencing requests: the second
// InitProducerID waits for the coordinator to finish writing the markers,
// which takes milliseconds.
var fenceBackoff = retry.Backoff{Initial: 20 * time.Millisecond, Max: 2 * time.Second}

// transactionalID names the sink's producer across the runs of a state
// directory.
func (s *Sink) transactionalID() string {
	return "etld/" + s.run.Pipeline + "/" + s.name + "@" + s.run.Instance
}

// initProducer fences the earlier lives' late writes off every partition
// and takes the producer the batches carry (see above), or leaves the
// sink unfenced when the cluster does not allow it; an error only when
// ctx ends or a later life has the producer already.
func (s *Sink) initProducer(ctx context.Context) error {
	s.prod = noProducer
	if !s.run.Resumable || s.run.Instance == "" || s.acks != kafka.RequireAll {
		return nil
	}
	txn := s.transactionalID()
	prod, refused, err := s.newEpoch(ctx, txn)
	if err != nil || refused != nil {
		return err
	}
	refused, err = s.markPartitions(ctx, txn, prod)
	if err != nil {
		return err
	}
	if refused == nil {
		if prod, refused, err = s.newEpoch(ctx, txn); err != nil || refused != nil {
			return err
		}
	} else {
		s.log.Warn("kafka sink: the cluster refused to mark the partitions with the producer epoch; a late write of a killed run that reaches a partition before this run's first write to it lands",
			"topic", s.topic, "transactional_id", txn, "error", refused.Error())
	}
	s.prod = prod
	s.log.Info("kafka sink fences earlier runs' late writes", "topic", s.topic, "producer_id", prod.id, "epoch", prod.epoch)
	return nil
}

// newEpoch asks for a new epoch of txn's producer. refused is the
// cluster's refusal, logged: the sink then writes unfenced.
func (s *Sink) newEpoch(ctx context.Context, txn string) (prod producer, refused, err error) {
	err = s.txnCall(ctx, "producer epoch of "+txn, &refused, func(ctx context.Context) error {
		res, err := s.client.InitProducerID(ctx, &kafka.InitProducerIDRequest{
			TransactionalID:      txn,
			TransactionTimeoutMs: int(fenceTxnTimeout / time.Millisecond),
			ProducerID:           -1,
			ProducerEpoch:        -1,
		})
		if err == nil {
			err = res.Error
		}
		if err == nil {
			prod = producer{id: int64(res.Producer.ProducerID), epoch: int16(res.Producer.ProducerEpoch)}
		}
		return err
	})
	if err == nil && refused != nil {
		s.log.Warn("kafka sink: the cluster refused a producer epoch; a late write of a killed run may land after this run's writes",
			"topic", s.topic, "transactional_id", txn, "error", refused.Error())
	}
	return prod, refused, err
}

// markPartitions writes an abort marker of prod's epoch to every
// partition: a transaction on all of them, aborted without a message.
func (s *Sink) markPartitions(ctx context.Context, txn string, prod producer) (refused, err error) {
	parts := make([]kafka.AddPartitionToTxn, len(s.parts))
	for i := range parts {
		parts[i].Partition = i
	}
	err = s.txnCall(ctx, "add the partitions to a transaction of "+txn, &refused, func(ctx context.Context) error {
		res, err := s.client.AddPartitionsToTxn(ctx, &kafka.AddPartitionsToTxnRequest{
			TransactionalID: txn, ProducerID: int(prod.id), ProducerEpoch: int(prod.epoch),
			Topics: map[string][]kafka.AddPartitionToTxn{s.topic: parts},
		})
		if err != nil {
			return err
		}
		for _, p := range res.Topics[s.topic] {
			if p.Error != nil {
				return fmt.Errorf("partition %d: %w", p.Partition, p.Error)
			}
		}
		return nil
	})
	if err != nil || refused != nil {
		return refused, err
	}
	err = s.txnCall(ctx, "abort the transaction of "+txn, &refused, func(ctx context.Context) error {
		res, err := s.client.EndTxn(ctx, &kafka.EndTxnRequest{
			TransactionalID: txn, ProducerID: int(prod.id), ProducerEpoch: int(prod.epoch), Committed: false,
		})
		if err == nil {
			err = res.Error
		}
		return err
	})
	return refused, err
}

// txnCall runs a request to the transaction coordinator, retrying while
// the coordinator loads, moves or finishes the transaction of the epoch
// before. A refusal is put in refused and ends the call without an error;
// a newer epoch than the request's is an error: a later life writes the
// topic.
func (s *Sink) txnCall(ctx context.Context, what string, refused *error, call func(ctx context.Context) error) error {
	err := retry.Do(ctx, fenceBackoff, s.log, fmt.Sprintf("kafka sink %q: %s", s.name, what), func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		err := call(ctx)
		var ke kafka.Error
		switch {
		case err == nil:
			return nil
		case errors.Is(err, kafka.InvalidProducerEpoch) || errors.Is(err, kafka.ProducerFenced):
			return retry.Permanent(fmt.Errorf("a later run of this pipeline took the producer (two processes on one state directory?): %w", err))
		case errors.Is(err, kafka.ConcurrentTransactions):
			return retry.Expected(err)
		case kafkaconf.Refused(err), errors.As(err, &ke) && !ke.Temporary():
			*refused = err
			return nil
		}
		return err // the network, a coordinator loading or moving
	})
	if err != nil {
		return s.errorf("%s: %w", what, err)
	}
	return nil
}

// fenced reports whether batches carry the sink's producer.
func (s *Sink) fenced() bool { return s.prod.id >= 0 }

// nextSeq is the sequence number after n records from seq; Kafka's wrap
// from the largest int32 to 0.
func nextSeq(seq int32, n int) int32 {
	return int32((int64(seq) + int64(n)) % (1 << 31))
}

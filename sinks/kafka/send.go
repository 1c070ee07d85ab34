package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
)

// sendBackoff is the schedule for produce retries: quick at first (a
// leader election takes well under a second), capped at a second so that
// a broker back from an outage is written to again within about that;
// deliver adds a metadata probe that notices it sooner.
var sendBackoff = retry.Sink

// sender sends p's batches, one produce request at a time, oldest first,
// until Close. A sealed batch goes at once; the open one goes when it has
// waited linger since its first message, so that an idle partition does
// not send one message per request.
func (s *Sink) sender(p *part) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-p.kick:
		case <-s.ctx.Done():
			return
		}
		for {
			s.mu.Lock()
			var b *batch
			var wait time.Duration
			switch {
			case len(p.queue) > 0:
				b = p.queue[0]
				p.queue[0] = nil
				p.queue = p.queue[1:]
			case p.cur != nil && len(p.cur.recs) > 0:
				if age := time.Since(p.cur.start); age >= s.linger {
					b, p.cur = p.cur, nil
					if s.sticky == p.id {
						// Keyless messages move on, as Kafka's sticky
						// partitioner does once a batch is sent.
						s.sticky = (p.id + 1) % len(s.parts)
					}
				} else {
					wait = s.linger - age
				}
			}
			s.mu.Unlock()
			if b == nil {
				if wait <= 0 {
					break
				}
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-p.kick:
					timer.Stop()
				case <-s.ctx.Done():
					return
				}
				continue
			}
			// A panic below (the client, our response handling) fails the
			// sink with its stack, as an error would, not the process.
			err := panics.Call(func() error { return s.deliver(p, b, 0, len(b.recs)) })
			s.mu.Lock()
			p.acked += int64(len(b.recs))
			if err != nil && s.failed == nil {
				s.failed = err
			}
			if len(p.free) < 1 {
				b.reset()
				p.free = append(p.free, b)
			}
			close(s.progress)
			s.progress = make(chan struct{})
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// deliver produces messages lo to hi of b to p, retrying transient errors
// until Close. Messages the broker refuses for good are set aside for the
// on_error policy: a request refused as a whole for its size is split in
// halves, in order, until the one message too large is alone. It returns
// only errors that stop the sink.
func (s *Sink) deliver(p *part, b *batch, lo, hi int) error {
	var refused error
	var recordErrs map[int]error
	var base int64
	what := fmt.Sprintf("kafka sink %q: produce %d messages to topic %s partition %d", s.name, hi-lo, s.topic, p.id)
	seq := int32(-1)
	if s.fenced() {
		seq = p.seq
	}
	// Encoded once: a retry sends the same batch with the same sequence
	// numbers, which the broker drops if it appended it already.
	wire, err := appendRecordSet(p.wire[:0], b, lo, hi, s.prod, seq, s.compression, s.eoID())
	if err != nil {
		return s.errorf("partition %d: %w", p.id, err)
	}
	p.wire = wire
	restarted := false
	err = retry.Do(s.ctx, sendBackoff.WithProbe(s.probe), s.log, what, func(ctx context.Context) error {
		refused, recordErrs = nil, nil
		ctx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		res, err := s.client.RawProduce(ctx, &kafka.RawProduceRequest{
			Topic:        s.topic,
			Partition:    p.id,
			RequiredAcks: s.acks,
			RawRecords:   protocol.RawRecordSet{Reader: bytes.NewReader(wire)},
		})
		if err != nil {
			if s.ctx.Err() != nil || kafkaconf.Refused(err) {
				return retry.Permanent(err)
			}
			return err // the network, a dial, a timeout: try again
		}
		if res == nil || res.Error == nil {
			if res != nil {
				base = res.BaseOffset
			}
			return nil
		}
		var ke kafka.Error
		switch {
		case len(res.RecordErrors) > 0:
			// The broker names the records it refused and writes none of
			// the request: refuse those, send the others again.
			refused, recordErrs = res.Error, res.RecordErrors
			return nil
		case errors.As(res.Error, &ke) && refusesRecords(ke):
			refused = res.Error
			return nil
		case s.fenced() && errors.Is(res.Error, kafka.DuplicateSequenceNumber):
			base = -1 // appended by an earlier try; the offset is not told
			return nil
		case s.fenced() && !restarted && (errors.Is(res.Error, kafka.UnknownProducerId) || errors.Is(res.Error, kafka.OutOfOrderSequenceNumber)):
			// The partition forgot the producer (it expired after a long
			// idle time, or the log was truncated): start its sequence
			// again from 0, which a partition that still knows it refuses.
			restarted, seq = true, 0
			if wire, err = appendRecordSet(p.wire[:0], b, lo, hi, s.prod, seq, s.compression, s.eoID()); err != nil {
				return retry.Permanent(err)
			}
			p.wire = wire
			return retry.Expected(fmt.Errorf("partition %d forgot the producer (%w); its sequence starts again", p.id, res.Error))
		case s.fenced() && (errors.Is(res.Error, kafka.InvalidProducerEpoch) || errors.Is(res.Error, kafka.ProducerFenced)):
			return retry.Permanent(fmt.Errorf("topic %s partition %d: a later run of this pipeline writes to the topic under a newer producer epoch (two processes on one state directory?); this one stops: %w", s.topic, p.id, res.Error))
		case errors.As(res.Error, &ke) && !ke.Temporary():
			return retry.Permanent(fmt.Errorf("topic %s partition %d: %w", s.topic, p.id, res.Error))
		}
		return res.Error
	})
	if err != nil {
		return s.errorf("partition %d: %w", p.id, err)
	}
	switch {
	case refused == nil:
		n := 0
		for i := lo; i < hi; i++ {
			n += len(b.key(i)) + len(b.value(i))
		}
		s.written.Add(int64(n))
		if s.fenced() {
			p.seq = nextSeq(seq, hi-lo)
		}
		s.mu.Lock()
		p.next = max(p.next, base+int64(hi-lo))
		s.mu.Unlock()
		return nil
	case len(recordErrs) > 0:
		from := lo
		for i := lo; i < hi; i++ {
			rerr, bad := recordErrs[i-lo]
			if !bad {
				continue
			}
			if from < i {
				if err := s.deliver(p, b, from, i); err != nil {
					return err
				}
			}
			s.refuse(p, b, i, fmt.Errorf("%w: %v", refused, rerr))
			from = i + 1
		}
		if from < hi {
			return s.deliver(p, b, from, hi)
		}
		return nil
	case hi-lo == 1:
		s.refuse(p, b, lo, refused)
		return nil
	}
	mid := lo + (hi-lo)/2
	if err := s.deliver(p, b, lo, mid); err != nil {
		return err
	}
	return s.deliver(p, b, mid, hi)
}

// refusesRecords tells the broker's errors about the records themselves,
// which no retry can change.
func refusesRecords(e kafka.Error) bool {
	switch e {
	case kafka.MessageSizeTooLarge, kafka.RecordListTooLarge, kafka.InvalidRecord,
		kafka.InvalidTimestamp, kafka.InvalidMessageSize:
		return true
	}
	return false
}

// refuse sets message i of b aside for the on_error policy, which Write or
// Flush calls from the pipeline's goroutine.
func (s *Sink) refuse(p *part, b *batch, i int, err error) {
	raw := b.value(i)
	if raw == nil {
		raw = b.key(i)
	}
	bad := connector.BadRecord{
		Position: fmt.Sprintf("sink %q, topic %s, partition %d", s.name, s.topic, p.id),
		Raw:      bytes.Clone(raw),
		Err:      fmt.Errorf("the broker refused the message (key %q, %d bytes): %w", shortKey(b.key(i)), len(raw), err),
	}
	s.log.Warn("kafka sink: the broker refused a message", "topic", s.topic, "partition", p.id, "error", err.Error())
	s.mu.Lock()
	s.rejected = append(s.rejected, bad)
	s.mu.Unlock()
}

// eoID is the etld-sink header value in exactly-once mode, nil otherwise.
// The senders read it; Open sets it before they start.
func (s *Sink) eoID() []byte {
	if s.eo == nil {
		return nil
	}
	return s.eo.id
}

func shortKey(k []byte) string {
	if len(k) > 100 {
		return string(k[:100]) + "..."
	}
	return string(k)
}

// probe asks a broker for the topic's metadata: a small request that
// succeeds once the cluster is back, so that a produce waiting to be
// tried again goes at once.
func (s *Sink) probe(ctx context.Context) error {
	res, err := s.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{s.topic}})
	if err != nil {
		return err
	}
	for _, t := range res.Topics {
		if t.Error != nil {
			return t.Error
		}
	}
	return nil
}

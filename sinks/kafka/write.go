package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Write encodes the changes of b into their partitions' batches. It waits
// when a partition already has queuedBatches sealed batches waiting.
func (s *Sink) Write(ctx context.Context, b *row.Batch) error {
	if s.parts == nil {
		return s.errorf("write before open or after close")
	}
	if err := s.takeBack(); err != nil {
		return err
	}
	now := time.Now()
	eo := s.eo
	var origin row.RecordOrigin
	if eo != nil {
		origin, _ = b.Origin.(row.RecordOrigin)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range b.Changes {
		c := &b.Changes[i]
		if s.failed != nil {
			return s.failed
		}
		var input string
		var at pos
		var placed bool // the change names its record: exactly once
		if eo != nil {
			input, at, placed = eo.recordOf(origin, i)
			if !placed && !eo.warnedNone {
				eo.warnedNone = true
				s.log.Warn("kafka sink: a change names no source record; it and its like are written at least once", "topic", s.topic)
			}
		}
		var tombstone bool
		switch s.mode {
		case connector.Append:
			if c.Kind != row.Insert {
				return s.errorf("change %d of the batch is %s in append mode; only +I can be written", i, c.Kind)
			}
		case connector.Upsert:
			switch c.Kind {
			case row.UpdateBefore:
				continue // the +U that follows overwrites the key
			case row.Delete:
				tombstone = true
			}
		}
		// Encode into scratch first: the partition depends on the key.
		buf, keyEnd, valEnd, bad := s.encode(c, tombstone)
		if bad != nil {
			if errors.As(bad.err, new(*connector.UnavailableError)) {
				// Not the change's fault (the schema registry is away):
				// the run fails and writes it again after a restart.
				return s.errorf("encode the message %s: %w", bad.what, bad.err)
			}
			if err := s.rejectNow(i, c, bad.what, bad.err); err != nil {
				return err
			}
			continue
		}
		var p *part
		switch {
		case keyEnd >= 0 && s.partitioner == byHash:
			p = s.parts[s.balancer.Balance(kafka.Message{Key: buf[:keyEnd]}, s.ids...)]
		case placed:
			p = s.parts[eo.keyless(input, at.num, len(s.parts), s.partitioner == roundRobin)]
		default:
			p = s.parts[s.sticky]
		}
		posEnd := -1
		if placed {
			waiting := eo.pending > 0
			if eo.skip(p.id, input, at) {
				s.scratch = buf[:0]
				continue
			}
			if waiting && eo.pending == 0 {
				s.log.Info("kafka sink: past every message a crashed run had written", "topic", s.topic, "skipped", eo.skipped)
			}
			buf = appendPos(buf, input, at)
			posEnd = len(buf)
		}
		s.scratch = buf
		if err := s.add(ctx, p, buf, keyEnd, valEnd, posEnd, now); err != nil {
			return err
		}
	}
	return nil
}

// encodeError is a change's key or value that its encoder refused.
type encodeError struct {
	what string // key or value
	err  error
}

// encode encodes c's key, when the sink writes keys, and its value, unless
// tombstone, into s.scratch: the key is buf[:keyEnd] (keyEnd -1 without
// one), the value buf[keyEnd or 0:valEnd] (valEnd -1 for a tombstone).
func (s *Sink) encode(c *row.Change, tombstone bool) (buf []byte, keyEnd, valEnd int, _ *encodeError) {
	buf = s.scratch[:0]
	keyEnd = -1
	var err error
	if s.keyEnc != nil {
		for j, k := range s.key {
			s.keyRow[j] = c.Row[k]
		}
		buf, err = s.keyEnc.Encode(buf, row.Insert, s.keyRow)
		if err != nil {
			s.scratch = buf[:0]
			return nil, 0, 0, &encodeError{"key", err}
		}
		if _, binary := s.keyEnc.(connector.BinaryEncoder); !binary {
			buf = trimNewline(buf)
		}
		keyEnd = len(buf)
	}
	valEnd = -1
	if !tombstone {
		buf, err = s.enc.Encode(buf, c.Kind, c.Row)
		if err != nil {
			s.scratch = buf[:0]
			return nil, 0, 0, &encodeError{"value", err}
		}
		if _, binary := s.enc.(connector.BinaryEncoder); !binary {
			buf = trimNewline(buf)
		}
		valEnd = len(buf)
	}
	return buf, keyEnd, valEnd, nil
}

// add appends one encoded message (key buf[:keyEnd], value
// buf[keyEnd or 0:valEnd], etld-pos header from there to posEnd) to p's
// open batch, sealing it when full. Called with s.mu held; it may release
// it while waiting for room.
func (s *Sink) add(ctx context.Context, p *part, buf []byte, keyEnd, valEnd, posEnd int, now time.Time) error {
	size := recordOverhead + len(buf)
	if posEnd >= 0 {
		size += headerOverhead + len(s.eo.id)
	}
	if p.cur != nil && len(p.cur.recs) > 0 && p.cur.bytes+size > s.batchBytes {
		if err := s.seal(ctx, p); err != nil {
			return err
		}
	}
	if p.cur == nil {
		p.cur = s.newBatch(p, now)
		select {
		case p.kick <- struct{}{}: // start the linger clock
		default:
		}
	}
	b := p.cur
	base := int32(len(b.buf))
	sp := span{keyOff: -1, keyEnd: -1, valOff: -1, valEnd: -1, posOff: -1, posEnd: -1}
	valStart := 0
	if keyEnd >= 0 {
		sp.keyOff, sp.keyEnd = base, base+int32(keyEnd)
		valStart = keyEnd
	}
	if valEnd >= 0 {
		sp.valOff, sp.valEnd = base+int32(valStart), base+int32(valEnd)
	}
	if posEnd >= 0 {
		sp.posOff, sp.posEnd = base+int32(max(valStart, valEnd)), base+int32(posEnd)
	}
	b.buf = append(b.buf, buf...)
	b.recs = append(b.recs, sp)
	b.bytes += size
	p.sent++
	if len(b.recs) >= s.batchSize || b.bytes >= s.batchBytes {
		return s.seal(ctx, p)
	}
	return nil
}

// seal queues p's open batch for its sender, waiting while the queue is
// full. Called with s.mu held.
func (s *Sink) seal(ctx context.Context, p *part) error {
	for len(p.queue) >= queuedBatches {
		if s.failed != nil {
			return s.failed
		}
		wait := s.progress
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			s.mu.Lock()
			return context.Cause(ctx)
		}
		s.mu.Lock()
	}
	if p.cur == nil {
		return nil
	}
	p.queue = append(p.queue, p.cur)
	p.cur = nil
	if s.partitioner == roundRobin || s.sticky == p.id {
		s.sticky = (p.id + 1) % len(s.parts)
	}
	select {
	case p.kick <- struct{}{}:
	default:
	}
	return nil
}

func (s *Sink) newBatch(p *part, now time.Time) *batch {
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		b.start = now
		return b
	}
	return &batch{
		buf:   make([]byte, 0, min(s.batchBytes+s.batchBytes/8, 4<<20)),
		recs:  make([]span, 0, min(s.batchSize, 1<<16)),
		start: now,
	}
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// rejectNow hands a change that cannot be encoded to the on_error policy.
// Called with s.mu held, from Write's goroutine.
func (s *Sink) rejectNow(i int, c *row.Change, what string, err error) error {
	bad := connector.BadRecord{
		Position: fmt.Sprintf("sink %q, topic %s, change %d of the batch", s.name, s.topic, i),
		Raw:      []byte(c.String()),
		Err:      fmt.Errorf("encode the message %s: %w", what, err),
	}
	if s.reject == nil {
		return s.errorf("%v", bad)
	}
	return s.reject(bad)
}

// takeBack hands the messages the brokers refused for good to the on_error
// policy, from the goroutine that calls Write and Flush, and returns a
// sender's fatal error.
func (s *Sink) takeBack() error {
	s.mu.Lock()
	rejected, failed := s.rejected, s.failed
	s.rejected = nil
	s.mu.Unlock()
	if failed != nil {
		return failed
	}
	for _, bad := range rejected {
		if s.reject == nil {
			return s.errorf("%v", bad)
		}
		if err := s.reject(bad); err != nil {
			return err
		}
	}
	return nil
}

// Flush seals every open batch and waits until the brokers acknowledged
// every message written before.
func (s *Sink) Flush(ctx context.Context) error {
	if s.parts == nil {
		return s.errorf("flush before open or after close")
	}
	s.mu.Lock()
	target := make([]int64, len(s.parts))
	for i, p := range s.parts {
		if p.cur != nil {
			if err := s.seal(ctx, p); err != nil {
				s.mu.Unlock()
				return err
			}
		}
		target[i] = p.sent
	}
	for {
		if s.failed != nil {
			break
		}
		done := true
		for i, p := range s.parts {
			if p.acked < target[i] {
				done = false
				break
			}
		}
		if done {
			break
		}
		wait := s.progress
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return fmt.Errorf("flush to topic %s: %w", s.topic, context.Cause(ctx))
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	return s.takeBack()
}

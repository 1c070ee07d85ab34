package mysql

import (
	"context"
	"errors"
	"hash/maphash"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// MaxParallelism bounds the parallelism option: each lane holds a
// connection and a batch in memory.
const MaxParallelism = 64

// lane is one connection's share of the changes. In upsert mode a key
// always goes to the same lane, and a lane has at most one batch in
// flight, so the batches holding one key commit in the order they were
// written: the table ends as with one connection. Lanes on disjoint keys
// do not wait for each other's row locks.
type lane struct {
	buf buffer
	// spare is the buffer of the batch in flight (empty when none), kept
	// to be reused.
	spare buffer
	// pending receives the result of the batch in flight; nil when none.
	pending chan error
}

func newLanes(n int, upsert bool, key []int) []*lane {
	lanes := make([]*lane, n)
	for i := range lanes {
		lanes[i] = &lane{buf: newBuffer(upsert, key), spare: newBuffer(upsert, key)}
	}
	return lanes
}

// wait returns the result of the lane's batch in flight, if any.
func (l *lane) wait() error {
	if l.pending == nil {
		return nil
	}
	err := <-l.pending
	l.pending = nil
	l.spare.reset()
	return err
}

// laneOf is the lane a change goes to: by its key's hash in upsert mode;
// in append mode, where no order between rows is kept, the lane being
// filled (submit moves on to the next).
func (s *Sink) laneOf(c row.Change) *lane {
	if len(s.lanes) == 1 {
		return s.lanes[0]
	}
	if s.mode != connector.Upsert {
		return s.lanes[s.next]
	}
	s.kb = row.KeyOf(s.kb[:0], c.Row, s.key)
	return s.lanes[maphash.Bytes(s.seed, s.kb)%uint64(len(s.lanes))]
}

// submit writes out l's buffer: at once with one lane; else on a
// goroutine of its own, after the lane's previous batch committed, so
// that Write goes on filling the other lanes meanwhile. ctx is the
// pipeline's, which outlives the call.
func (s *Sink) submit(ctx context.Context, l *lane) error {
	if err := l.wait(); err != nil {
		return err
	}
	if l.buf.len() == 0 {
		return nil
	}
	if len(s.lanes) == 1 {
		if err := s.writeBatch(ctx, l.buf.changes); err != nil {
			return err
		}
		l.buf.reset()
		return nil
	}
	l.buf, l.spare = l.spare, l.buf
	changes := l.spare.changes
	l.pending = make(chan error, 1)
	go func() { l.pending <- s.writeBatch(ctx, changes) }()
	if s.mode != connector.Upsert {
		s.next = (s.next + 1) % len(s.lanes)
	}
	return nil
}

// writeOld submits every lane whose oldest change is flush_interval old.
func (s *Sink) writeOld(ctx context.Context) error {
	for _, l := range s.lanes {
		if l.buf.len() > 0 && time.Since(l.buf.since) >= s.interval {
			if err := s.submit(ctx, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeAll writes every lane's buffer and waits until all are committed.
func (s *Sink) writeAll(ctx context.Context) error {
	var errs []error
	for _, l := range s.lanes {
		errs = append(errs, s.submit(ctx, l))
	}
	for _, l := range s.lanes {
		errs = append(errs, l.wait())
	}
	return errors.Join(errs...)
}

// buffered is the number of changes not yet handed to the server.
func (s *Sink) buffered() int {
	n := 0
	for _, l := range s.lanes {
		n += l.buf.len()
	}
	return n
}

// drain waits for the batches in flight, for Close: their goroutines use
// the connection pool that Close shuts.
func (s *Sink) drain() error {
	var errs []error
	for _, l := range s.lanes {
		errs = append(errs, l.wait())
	}
	return errors.Join(errs...)
}

package postgres

import (
	"context"
	"errors"
	"hash/maphash"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

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
	// conn is the lane's connection, nil until the first write and after
	// it broke; used by one batch at a time.
	conn *pgx.Conn
	enc  encoder
}

func newLanes(n int, upsert bool, key []int) []*lane {
	lanes := make([]*lane, n)
	for i := range lanes {
		lanes[i] = &lane{buf: newBuffer(upsert, key), spare: newBuffer(upsert, key)}
	}
	return lanes
}

// connect returns the lane's connection, making it when there is none or
// the last one broke.
func (l *lane) connect(ctx context.Context, s *Sink) (*pgx.Conn, error) {
	if l.conn != nil && !l.conn.IsClosed() {
		return l.conn, nil
	}
	l.conn = nil
	c, err := connectConn(ctx, s.cc)
	if err != nil {
		return nil, err
	}
	l.conn = c
	return c, nil
}

// close ends the lane's connection.
func (l *lane) close(ctx context.Context) error {
	if l.conn == nil {
		return nil
	}
	c := l.conn
	l.conn = nil
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return c.Close(cctx)
}

// connectConn opens a connection with the sink's settings.
func connectConn(ctx context.Context, cc *pgx.ConnConfig) (*pgx.Conn, error) {
	return pgx.ConnectConfig(ctx, cc)
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
		if err := s.writeBatch(ctx, l, l.buf.changes); err != nil {
			return err
		}
		l.buf.reset()
		return nil
	}
	l.buf, l.spare = l.spare, l.buf
	changes := l.spare.changes
	l.pending = make(chan error, 1)
	go func() { l.pending <- s.writeBatch(ctx, l, changes) }()
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
// the connections that Close ends.
func (s *Sink) drain() error {
	var errs []error
	for _, l := range s.lanes {
		errs = append(errs, l.wait())
	}
	return errors.Join(errs...)
}

// buffer holds the changes not yet written. In upsert mode it keeps one
// change per key, the last, at the place of the key's first change: no
// statement touches a key twice (ON CONFLICT DO UPDATE refuses that), and
// the table ends the same whatever order a batch's statements run in.
type buffer struct {
	upsert  bool
	key     []int
	changes []row.Change
	index   map[string]int
	kb      []byte
	// since is when the oldest buffered change arrived.
	since time.Time
}

func newBuffer(upsert bool, key []int) buffer {
	b := buffer{upsert: upsert, key: key}
	if upsert {
		b.index = map[string]int{}
	}
	return b
}

func (b *buffer) len() int { return len(b.changes) }

func (b *buffer) add(c row.Change) {
	if !b.upsert {
		b.changes = append(b.changes, c)
		return
	}
	b.kb = row.KeyOf(b.kb[:0], c.Row, b.key)
	if i, ok := b.index[string(b.kb)]; ok {
		b.changes[i] = c
		return
	}
	b.index[string(b.kb)] = len(b.changes)
	b.changes = append(b.changes, c)
}

func (b *buffer) reset() {
	clear(b.changes) // drop the references to the runtime's rows
	b.changes = b.changes[:0]
	clear(b.index)
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

const (
	// statusEvery is how often the stream tells the server how far it
	// has confirmed, and asks (with stop: latest) where the WAL ends.
	statusEvery = time.Second
	// statusAtLeast is the longest the server goes without a status:
	// well within wal_sender_timeout (60s by default).
	statusAtLeast = 10 * time.Second
)

type itemKind uint8

const (
	itemChange   itemKind = iota + 1
	itemBad               // a change whose values did not parse
	itemCommit            // a transaction's end
	itemAdvance           // the server sent every transaction before lsn
	itemRelation          // a table's definition as the stream now has it
	itemError             // the stream ended for good
)

// streamItem is one thing the stream hands Read, in the stream's order.
type streamItem struct {
	kind   itemKind
	change row.Change
	bad    *connector.BadRecord
	// txn is the commit LSN of a change's transaction, n the change's
	// number in it (from 1).
	txn pglogrepl.LSN
	n   int
	lsn pglogrepl.LSN
	// table and def: a relation item.
	table int
	def   []string
	err   error
}

// streamer reads the slot's changes on a goroutine of its own and
// queues them, reconnecting with backoff when the connection or the
// server goes away.
type streamer struct {
	s *Source
	q *queue[streamItem]
	// What was queued: the end of the last whole transaction (or a WAL
	// position past it), the transaction in progress and how many of its
	// changes.
	done pglogrepl.LSN
	txn  pglogrepl.LSN
	n    int
	// What to skip, as queued before a reconnect or handed on before a
	// restore: transactions that committed before skipDone, and the first
	// skipN changes of skipTxn.
	skipDone pglogrepl.LSN
	skipTxn  pglogrepl.LSN
	skipN    int
	// The transaction being read.
	skipping   bool
	skipUpTo   int
	commitTime time.Time
	// confirm is the LSN Commit confirmed, which the server may free WAL
	// up to; stopAt (stop: latest) the WAL position where the run ends.
	confirm atomic.Uint64
	stopAt  pglogrepl.LSN
	rels    map[uint32]*capture
	byName  map[string]int
	texts   []string
	present []bool
	// pending are items not yet queued: queued a transaction's end, a
	// keepalive or pendingMax at a time, so that a change costs no lock.
	pending []streamItem
}

// pendingMax is the most items the stream holds before queuing them.
const pendingMax = 256

func newStreamer(s *Source, done, txn pglogrepl.LSN, handed int) *streamer {
	st := &streamer{s: s, q: newQueue[streamItem](4 * s.fetch), done: done, txn: txn, n: handed, stopAt: s.stopAt,
		rels: map[uint32]*capture{}, byName: map[string]int{}}
	for i, c := range s.caps {
		st.byName[c.name] = i
	}
	return st
}

// run streams until ctx ends or the stream fails for good.
func (st *streamer) run(ctx context.Context) {
	s := st.s
	err := retry.Do(ctx, s.backoff, s.logger.With("slot", s.slot, "target", s.target), "postgres replication stream", func(ctx context.Context) error {
		err := st.session(ctx)
		if err != nil && (pgconf.Classify(err) != pgconf.Transient || isFatal(err)) {
			return retry.Permanent(err)
		}
		return err
	})
	if err != nil && ctx.Err() == nil {
		st.pending = append(st.pending, streamItem{kind: itemError, err: err})
		st.flush(ctx)
	}
}

// fatal marks an error that ends the stream for good (the slot's changes
// are gone, the table changed): no retry. It adds nothing to the message.
type fatal struct{ err error }

func (f fatal) Error() string { return f.err.Error() }
func (f fatal) Unwrap() error { return f.err }

func fatalf(format string, args ...any) error { return fatal{fmt.Errorf(format, args...)} }

func isFatal(err error) bool {
	var f fatal
	return errors.As(err, &f)
}

// session is one replication connection: from what was queued, skipping
// what is queued already.
func (st *streamer) session(ctx context.Context) error {
	s := st.s
	rc, err := s.replicationConn(ctx)
	if err != nil {
		return err
	}
	defer rc.Close(context.WithoutCancel(ctx))
	// The transaction in progress is sent again whole: its changes up
	// to st.n are queued (or handed on) already. st.txn stays until its
	// Begin comes again, so that no keepalive moves the position past it
	// meanwhile, and for a session that fails before.
	st.skipDone, st.skipTxn, st.skipN = st.done, st.txn, st.n
	args := []string{"proto_version '1'", "publication_names '" + strings.ReplaceAll(pgconf.Quote(s.publication), "'", "''") + "'"}
	err = pglogrepl.StartReplication(ctx, rc, s.slot, st.done, pglogrepl.StartReplicationOptions{Mode: pglogrepl.LogicalReplication, PluginArgs: args})
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42704" {
			return fatalf("%w", s.slotGone(st.done))
		}
		return fmt.Errorf("start replication from slot %s at %s: %w", s.slot, st.done, err)
	}
	s.logger.Debug("streaming", "slot", s.slot, "from", st.done.String())
	// Close ends a read in progress at once.
	defer context.AfterFunc(ctx, func() { _ = rc.Conn().SetReadDeadline(time.Now()) })()
	var sent time.Time
	sentConfirm := pglogrepl.LSN(0)
	for {
		confirm := pglogrepl.LSN(st.confirm.Load())
		ask := st.stopAt != 0 && st.done < st.stopAt
		if time.Since(sent) >= statusAtLeast || confirm != sentConfirm || (ask && time.Since(sent) >= statusEvery) {
			// Nothing confirmed yet: 0/1, which the slot is past (a 0
			// would stand for the write position).
			flush := max(confirm, 1)
			err := pglogrepl.SendStandbyStatusUpdate(ctx, rc, pglogrepl.StandbyStatusUpdate{
				WALWritePosition: max(st.done, flush), WALFlushPosition: flush, WALApplyPosition: flush, ReplyRequested: ask})
			if err != nil {
				return fmt.Errorf("send the stream's status: %w", err)
			}
			sent, sentConfirm = time.Now(), confirm
		}
		// A read deadline on the socket rather than a context per
		// message (a context's watcher costs an allocation and a timer
		// each time); a timeout leaves the connection usable.
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := rc.Conn().SetReadDeadline(time.Now().Add(statusEvery)); err != nil {
			return err
		}
		msg, err := rc.ReceiveMessage(context.Background())
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				if !st.flush(ctx) {
					return ctx.Err()
				}
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("read the replication stream: %w", err)
		}
		switch msg := msg.(type) {
		case *pgproto3.CopyData:
			reply, err := st.copyData(ctx, msg.Data)
			if err != nil {
				return err
			}
			if reply {
				sent = time.Time{} // the server asked: answer at once
			}
		case *pgproto3.ErrorResponse:
			return st.streamError(pgconn.ErrorResponseToPgError(msg))
		case *pgproto3.CopyDone:
			return errors.New("the server ended the replication stream")
		}
	}
}

// add holds an item for the queue, queuing what is held once it is
// full; false when ctx ended.
func (st *streamer) add(ctx context.Context, it streamItem) bool {
	st.pending = append(st.pending, it)
	if len(st.pending) >= pendingMax {
		return st.flush(ctx)
	}
	return true
}

// flush queues the items held.
func (st *streamer) flush(ctx context.Context) bool {
	if len(st.pending) == 0 {
		return true
	}
	ok := st.q.put(ctx, st.pending...)
	clear(st.pending)
	st.pending = st.pending[:0]
	return ok
}

// streamError names what an error the server sends mid-stream means.
func (st *streamer) streamError(pe *pgconn.PgError) error {
	if strings.Contains(pe.Message, "publication") && pe.Code == "42704" {
		return fatalf("publication %s was dropped while the source read it: %w", st.s.publication, pe)
	}
	return pe
}

// copyData handles one message of the stream; reply says the server
// asked for a status at once.
func (st *streamer) copyData(ctx context.Context, data []byte) (bool, error) {
	if len(data) == 0 {
		return false, nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return false, err
		}
		// Between transactions the server has sent every one that
		// committed before its WAL end: the position may pass it, so
		// that the slot frees WAL while the captured tables are quiet.
		if st.txn == 0 && ka.ServerWALEnd > st.done {
			st.done = ka.ServerWALEnd
			if !st.add(ctx, streamItem{kind: itemAdvance, lsn: ka.ServerWALEnd}) {
				return false, ctx.Err()
			}
		}
		if !st.flush(ctx) {
			return false, ctx.Err()
		}
		return ka.ReplyRequested, nil
	case pglogrepl.XLogDataByteID:
		xld, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return false, err
		}
		return false, st.message(ctx, xld.WALData)
	}
	return false, nil
}

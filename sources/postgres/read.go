package postgres

import (
	"context"
	"encoding/json"
	"io"

	"github.com/etld/etld/pipeline/row"
)

// readSnapshot hands on snapshot rows, tracking each table's segments;
// once every table is read it starts the stream (or ends a snapshot-only
// source). A run of a chunk's rows is handed on as it is, without a
// copy.
func (s *Source) readSnapshot(ctx context.Context, max int) (*row.Batch, error) {
	var b *row.Batch
	for {
		if len(s.chunks) == 0 {
			if s.allRead() {
				return s.snapshotEnd(b)
			}
			s.chunks, s.at = s.snapQ.take(s.chunks), snapCursor{}
			if len(s.chunks) == 0 {
				if b != nil {
					return b, nil
				}
				if err := s.snapQ.wait(ctx); err != nil {
					return nil, err
				}
				continue
			}
		}
		ch := &s.chunks[0]
		if ch.err != nil {
			if b != nil {
				return b, nil
			}
			return nil, s.errorf("%w", ch.err)
		}
		if ch.stale {
			// In a batch of its own, each +I/-D pair whole: a checkpoint
			// between its halves would keep the row.
			if b != nil {
				return b, nil
			}
			n := len(ch.changes) - s.at.change
			if lim := max &^ 1; lim >= 2 && n > lim {
				n = lim
			}
			b = &row.Batch{Changes: ch.changes[s.at.change : s.at.change+n : s.at.change+n]}
			if s.at.change += n; s.at.change == len(ch.changes) {
				s.chunks, s.at = s.chunks[1:], snapCursor{}
			}
			return b, nil
		}
		ts := &s.tables[ch.table]
		if ts.lsn != ch.lsn {
			// A new snapshot for the rest of the table: the rows handed on
			// under the last one form a segment.
			if ts.lsn != 0 && ts.last != nil {
				ts.segments = append(ts.segments, segment{UpTo: ts.last, LSN: ts.lsn.String()})
			}
			ts.lsn = ch.lsn
		}
		nk := len(s.caps[ch.table].key)
		for s.at.record < len(ch.changes)+len(ch.bad) {
			if s.at.bad < len(ch.bad) && ch.bad[s.at.bad].at == s.at.change {
				if err := s.reject(ch.bad[s.at.bad].rec); err != nil {
					return b, err
				}
				s.at.bad++
			} else {
				end := len(ch.changes)
				if s.at.bad < len(ch.bad) {
					end = ch.bad[s.at.bad].at
				}
				n := end - s.at.change
				if b != nil {
					n = min(n, max-b.Len())
				}
				n = min(n, max)
				if n == 0 {
					return b, nil
				}
				run := ch.changes[s.at.change : s.at.change+n : s.at.change+n]
				if b == nil {
					b = &row.Batch{Changes: run}
				} else {
					b.Changes = append(b.Changes, run...)
				}
				s.at.change += n
				s.at.record += n - 1
			}
			s.at.record++
			if ch.keys != nil {
				ts.last = ch.keys[(s.at.record-1)*nk : s.at.record*nk]
			}
		}
		if ch.done {
			ts.segments = append(ts.segments, segment{LSN: ts.lsn.String()})
			ts.lsn, ts.last, ts.done = 0, nil, true
			s.logger.Info("snapshot read", "table", s.caps[ch.table].name)
		}
		s.chunks, s.at = s.chunks[1:], snapCursor{}
	}
}

// snapCursor is how far Read is in the first chunk: records (rows and
// bad ones), rows, bad ones.
type snapCursor struct{ record, change, bad int }

func (s *Source) allRead() bool {
	for _, ts := range s.tables {
		if !ts.done {
			return false
		}
	}
	return true
}

// snapshotEnd ends the snapshot phase with the batch b: the stream
// starts, or a snapshot-only source ends.
func (s *Source) snapshotEnd(b *row.Batch) (*row.Batch, error) {
	s.chunks = nil
	if s.startup == startupSnapshot {
		s.phase = phaseEnded
		return b, io.EOF
	}
	if s.reread == rereadSnapshot {
		// A backfill's snapshot ends at its LSN: a stream position from
		// which a range read goes on.
		for _, ts := range s.tables {
			for _, sg := range ts.segments {
				if l, _ := parseLSN(sg.LSN); s.handed.done == 0 || l < s.handed.done {
					s.handed.done = l
				}
			}
		}
		s.phase, s.rereadEnd = phaseEnded, true
		return b, io.EOF
	}
	// The snapshot's reader goroutine has ended with its last chunk; the
	// stream runs on the source's own context, not Read's.
	if err := s.startStream(s.readerCtx); err != nil {
		return b, err
	}
	return b, nil
}

// readStream hands on the stream's changes and tracks the position.
func (s *Source) readStream(ctx context.Context, max int) (*row.Batch, error) {
	var b *row.Batch
	for {
		if s.stopped() && s.reread == "" || s.reread == rereadRange && s.rangeEnd(nil) {
			s.phase = phaseEnded
			return b, io.EOF
		}
		if s.itemAt >= len(s.items) {
			s.items, s.itemAt = s.stream.q.take(s.items), 0
			if len(s.items) == 0 {
				if b != nil {
					return b, nil
				}
				if err := s.stream.q.wait(ctx); err != nil {
					return nil, err
				}
				continue
			}
		}
		it := s.items[s.itemAt]
		if s.reread == rereadRange && s.rangeEnd(&it) {
			s.phase = phaseEnded
			return b, io.EOF
		}
		switch it.kind {
		case itemChange, itemBad:
			if b != nil && b.Len() >= max {
				return b, nil
			}
			if it.kind == itemBad {
				if err := s.reject(*it.bad); err != nil {
					return b, err
				}
			} else {
				if b == nil {
					b = row.NewBatch(max, 0)
				}
				b.Append(it.change.Kind, it.change.Row)
			}
			s.handed.txn, s.handed.n = it.txn, it.n
		case itemCommit:
			s.handed = handed{done: it.lsn}
		case itemAdvance:
			if s.handed.txn == 0 && it.lsn > s.handed.done {
				s.handed.done = it.lsn
			}
		case itemRelation:
			s.tables[it.table].def = it.def
		case itemError:
			if b != nil {
				return b, nil
			}
			return nil, s.errorf("%w", it.err)
		}
		s.items[s.itemAt] = streamItem{}
		s.itemAt++
	}
}

// stopped reports whether a stop: latest source has handed on every
// transaction that committed before it opened.
func (s *Source) stopped() bool {
	return s.stopAt != 0 && s.handed.txn == 0 && s.handed.done >= s.stopAt
}

// Position implements connector.Positioner (see position).
func (s *Source) Position() ([]byte, error) {
	p := position{Phase: phaseSnapshot, Slot: s.slot}
	if s.stream != nil || s.rereadEnd {
		p.Phase = phaseStream
		if s.handed.done != 0 {
			p.Done = s.handed.done.String()
		}
		if s.handed.txn != 0 {
			p.Txn, p.Handed = s.handed.txn.String(), s.handed.n
		}
	}
	for i, c := range s.caps {
		ts := s.tables[i]
		tp := tablePos{Name: c.name, Segments: ts.segments, Done: ts.done, Columns: ts.def}
		if ts.lsn != 0 {
			tp.LSN, tp.Last = ts.lsn.String(), ts.last
		}
		p.Tables = append(p.Tables, tp)
	}
	return json.Marshal(p)
}

// Commit confirms to the server, once the checkpoint holding it has
// completed, the stream position of that checkpoint: the slot then keeps
// only the changes after it.
func (s *Source) Commit(ctx context.Context, state []byte) error {
	p, err := decodePosition(state)
	if err != nil {
		return s.errorf("commit: %w", err)
	}
	if p.Phase != phaseStream {
		return nil
	}
	lsn, _ := parseLSN(p.Done)
	if lsn <= s.confirm {
		return nil
	}
	s.confirm = lsn
	if s.stream != nil {
		s.stream.confirm.Store(uint64(lsn))
	}
	return nil
}

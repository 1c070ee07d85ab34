package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/etld/etld/pipeline/connector"
)

// A backfill (connector.SnapshotRereader) cannot read the slot's past:
// the pipeline's slot holds only what its running version has not
// confirmed. It reads a fresh snapshot instead, then the changes from
// the snapshot's LSN, from a slot of the backfill's own:
//
//   - BeginReread creates the slot `<slot>_backfill` (dropping one that
//     a backfill killed before its end left: it is named after the
//     pipeline's slot, so one backfill of a pipeline runs at a time). Its
//     consistent point comes before any snapshot the replays take next,
//     so it holds every change after each of them;
//   - RereadSnapshot reads every table in a snapshot exported by a
//     temporary slot, as a first run does, and ends: its position is a
//     stream position of the backfill's slot at the snapshot's LSN S,
//     whose segments say the snapshot holds every transaction committed
//     before S;
//   - RereadRange streams the backfill's slot from such a position up
//     to one of the running version's (of the pipeline's slot: the same
//     WAL, so its LSNs compare) and ends; it confirms nothing, so the
//     slot keeps the changes for the next range;
//   - EndReread drops the slot: when the backfill ends, fails or is
//     cancelled, and at the pipeline's next start after a process died
//     mid-backfill.

// backfillSuffix ends the name of a backfill's slot.
const backfillSuffix = "_backfill"

// The reread modes.
const (
	rereadSnapshot = "snapshot"
	rereadRange    = "range"
)

// backfillSlot is the name of the slot of the pipeline's backfills.
func (s *Source) backfillSlot() string {
	return truncate(s.cfg.Slot, 63-len(backfillSuffix)) + backfillSuffix
}

// rereadable says why a backfill cannot replay the source, nil when it
// can.
func (s *Source) rereadable() error {
	switch {
	case s.startup == startupSnapshot:
		return errors.New("startup: snapshot reads no slot: a snapshot-only source is read again by a plain run")
	case s.startup == startupLatest:
		return errors.New("startup: latest took no snapshot: the running version's results hold only the changes since the slot's position, which no snapshot gives")
	case s.stop != "":
		return errors.New("stop: latest ended at the WAL position of its run: a snapshot now would hold later changes")
	}
	return nil
}

// BeginReread implements connector.SnapshotRereader: it creates the
// backfill's slot, dropping a stale one first.
func (s *Source) BeginReread(ctx context.Context) error {
	if err := s.rereadable(); err != nil {
		return s.errorf("backfill: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, s.cc)
	if err != nil {
		return s.errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	slot := s.backfillSlot()
	dropped, err := dropSlot(ctx, conn, slot, 0)
	if err != nil {
		return s.errorf("backfill: %w", err)
	}
	if dropped {
		s.logger.Info("dropped the replication slot a backfill that did not end left", "slot", slot)
	}
	var lsn string
	if err := conn.QueryRow(ctx, "SELECT lsn::text FROM pg_create_logical_replication_slot($1, 'pgoutput')", slot).Scan(&lsn); err != nil {
		return s.errorf("backfill: create replication slot %s: %w", slot, err)
	}
	s.logger.Info("created the backfill's replication slot", "slot", slot, "lsn", lsn)
	return nil
}

// EndReread implements connector.SnapshotRereader: it drops the
// backfill's slot, if there is one, waiting a little for a stream that
// just closed to let go of it.
func (s *Source) EndReread(ctx context.Context) error {
	if s.rereadable() != nil {
		return nil
	}
	conn, err := pgx.ConnectConfig(ctx, s.cc)
	if err != nil {
		return s.errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	slot := s.backfillSlot()
	dropped, err := dropSlot(ctx, conn, slot, 10*time.Second)
	if err != nil {
		return s.errorf("backfill: %w", err)
	}
	if dropped {
		s.logger.Info("dropped the backfill's replication slot", "slot", slot)
	}
	return nil
}

// dropSlot drops slot if it exists; one in use is an error, once wait
// has passed.
func dropSlot(ctx context.Context, conn *pgx.Conn, slot string, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	for {
		var active bool
		var pid *int32
		err := conn.QueryRow(ctx, "SELECT active, active_pid FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&active, &pid)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read replication slot %s: %w", slot, err)
		}
		if !active {
			_, err = conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", slot)
			var pe *pgconn.PgError
			switch {
			case err == nil:
				return true, nil
			case errors.As(err, &pe) && pe.Code == "42704":
				return false, nil // dropped meanwhile
			case !errors.As(err, &pe) || pe.Code != "55006":
				return false, fmt.Errorf("drop replication slot %s: %w", slot, err)
			}
		}
		if time.Now().After(deadline) {
			held := "a session"
			if pid != nil {
				held = fmt.Sprintf("the session of pid %d", *pid)
			}
			return false, fmt.Errorf("replication slot %s is being read by %s: another backfill of this pipeline runs", slot, held)
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
	}
}

// RereadSnapshot implements connector.SnapshotRereader: Read returns a
// fresh snapshot of every table, then io.EOF.
func (s *Source) RereadSnapshot(pos []byte) error {
	if s.opened {
		return errors.New("reread after open")
	}
	if err := s.rereadable(); err != nil {
		return err
	}
	p, err := decodePosition(pos)
	if err != nil {
		return err
	}
	if err := s.sameTables(p); err != nil {
		return err
	}
	s.reread, s.slot = rereadSnapshot, s.backfillSlot()
	return nil
}

// RereadRange implements connector.SnapshotRereader: Read returns the
// changes after from (a position a reread ended at) up to to (the
// running version's), then io.EOF.
func (s *Source) RereadRange(from, to []byte) error {
	if s.opened {
		return errors.New("reread after open")
	}
	if err := s.rereadable(); err != nil {
		return err
	}
	f, err := decodePosition(from)
	if err != nil {
		return err
	}
	t, err := decodePosition(to)
	if err != nil {
		return err
	}
	switch {
	case f.Phase != phaseStream || f.Slot != s.backfillSlot():
		return fmt.Errorf("the range starts at a position not of a backfill's reread (slot %q, phase %s)", f.Slot, f.Phase)
	case t.Phase != phaseStream:
		return errors.New("the running version's checkpoint is still in its snapshot: it has not reached the backfill's snapshot")
	}
	if err := s.sameTables(t); err != nil {
		return err
	}
	if c, _ := s.ComparePositions(from, to); c > 0 {
		return fmt.Errorf("the running version's checkpoint (%s) is before the backfill's position (%s)", describe(t), describe(f))
	}
	s.reread, s.slot, s.restored = rereadRange, s.backfillSlot(), f
	s.toDone, _ = parseLSN(t.Done)
	s.toTxn, _ = parseLSN(t.Txn)
	s.toN = t.Handed
	if s.toTxn == 0 {
		// The stream asks the server where the WAL ends, so that a
		// quiet stretch after the last transaction ends the range.
		s.stopAt = s.toDone
	}
	return nil
}

// sameTables checks that a position is of the tables the source names.
func (s *Source) sameTables(p *position) error {
	if len(p.Tables) != len(s.caps) {
		return fmt.Errorf("the checkpoint captured %d tables and the source names %d", len(p.Tables), len(s.caps))
	}
	for i, t := range p.Tables {
		if t.Name != s.caps[i].name {
			return fmt.Errorf("the checkpoint captured table %s where the source names %s", t.Name, s.caps[i].name)
		}
	}
	return nil
}

// describe is a position for people.
func describe(p *position) string {
	if p.Phase != phaseStream {
		return "in its snapshot"
	}
	if p.Txn != "" {
		return fmt.Sprintf("%d changes into the transaction committed at %s", p.Handed, p.Txn)
	}
	return "at " + p.Done
}

// ComparePositions implements connector.PositionComparer: two stream
// positions compare by the transactions they cover (those that
// committed before Done, and Handed changes of Txn); a position in its
// snapshot comes before every stream position.
func (s *Source) ComparePositions(a, b []byte) (int, error) {
	pa, err := decodePosition(a)
	if err != nil {
		return 0, err
	}
	pb, err := decodePosition(b)
	if err != nil {
		return 0, err
	}
	if len(pa.Tables) != len(pb.Tables) {
		return 0, errors.New("positions of different tables")
	}
	for i := range pa.Tables {
		if pa.Tables[i].Name != pb.Tables[i].Name {
			return 0, errors.New("positions of different tables")
		}
	}
	ka, kb := order(pa), order(pb)
	switch {
	case ka.lsn < kb.lsn || ka.lsn == kb.lsn && ka.n < kb.n:
		return -1, nil
	case ka == kb:
		return 0, nil
	}
	return 1, nil
}

// positionOrder is where a position is in the log: a transaction's
// commit LSN and how many of its changes, or a point between
// transactions (n 0). No transaction commits between Done and Txn: a
// position with Txn covers what one at Done does and more.
type positionOrder struct {
	lsn pglogrepl.LSN
	n   int
}

func order(p *position) positionOrder {
	if p.Phase != phaseStream {
		return positionOrder{}
	}
	if p.Txn != "" {
		txn, _ := parseLSN(p.Txn)
		return positionOrder{lsn: txn, n: p.Handed}
	}
	done, _ := parseLSN(p.Done)
	return positionOrder{lsn: done}
}

// rangeEnd reports whether a range read reached its end before handing
// on it (nil: the check between items).
func (s *Source) rangeEnd(it *streamItem) bool {
	h := s.handed
	if s.toTxn == 0 {
		if h.txn == 0 && h.done >= s.toDone {
			return true
		}
		switch {
		case it == nil:
		case it.kind == itemChange || it.kind == itemBad:
			return it.txn >= s.toDone
		case it.kind == itemAdvance && it.lsn >= s.toDone && h.txn == 0:
			// Every transaction before the end was sent: the range
			// ends there, not at the WAL's end.
			s.handed.done = s.toDone
			return true
		}
		return false
	}
	if h.txn == s.toTxn && h.n >= s.toN {
		return true
	}
	if it != nil && (it.kind == itemChange || it.kind == itemBad) {
		return it.txn > s.toTxn || it.txn == s.toTxn && it.n > s.toN
	}
	return h.txn == 0 && h.done > s.toTxn
}

var _ connector.SnapshotRereader = (*Source)(nil)

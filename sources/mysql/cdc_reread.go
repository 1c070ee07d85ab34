package mysql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// A backfill (connector.SnapshotRereader) cannot read the binlog's past
// up to an old position (the server may have purged it, and it holds
// only changes, not the rows before them): it reads a fresh snapshot,
// consistent at a binlog position S (as a first run's snapshot is), then
// the binlog from S up to the running version's positions. The server
// keeps the binlog by its own retention (binlog_expire_logs_seconds):
// the backfill holds nothing on it, so BeginReread and EndReread have
// nothing to do. Its binlog reads register with a server id of their
// own (6500 to 7500), never the running version's, which the server
// would disconnect.

// The reread modes.
const (
	rereadSnapshot = "snapshot"
	rereadRange    = "range"
)

// rereadable says why a backfill cannot replay the source, nil when it
// can.
func (s *CDC) rereadable() error {
	switch {
	case s.startup != startInitial:
		return fmt.Errorf("scan.startup.mode %s: the running version's results are not those of a snapshot and the binlog after it, which a backfill replays", s.startup)
	case s.given.Stop != "":
		return errors.New("stop: latest ended at the binlog position of its first run: a snapshot now would hold later changes")
	}
	return nil
}

// BeginReread implements connector.SnapshotRereader: nothing to ready.
func (s *CDC) BeginReread(context.Context) error { return s.rereadable() }

// EndReread implements connector.SnapshotRereader: nothing to end.
func (s *CDC) EndReread(context.Context) error { return nil }

// RereadSnapshot implements connector.SnapshotRereader: Read returns a
// fresh snapshot of the tables, then io.EOF; Position then says the
// snapshot's binlog position.
func (s *CDC) RereadSnapshot(pos []byte) error {
	if s.db != nil {
		return errors.New("reread after open")
	}
	if err := s.rereadable(); err != nil {
		return err
	}
	st, err := s.decodeState(pos)
	if err != nil {
		return err
	}
	if !slices.Equal(st.Captured, s.tableList()) {
		return fmt.Errorf("the checkpoint captured %s; the source names %s", strings.Join(st.Captured, ", "), strings.Join(s.tableList(), ", "))
	}
	s.reread = rereadSnapshot
	s.serverID = 6500 + rand.Uint32N(1001)
	return nil
}

// RereadRange implements connector.SnapshotRereader: Read returns the
// binlog's changes after from up to to, then io.EOF.
func (s *CDC) RereadRange(from, to []byte) error {
	if s.db != nil {
		return errors.New("reread after open")
	}
	if err := s.rereadable(); err != nil {
		return err
	}
	f, err := s.decodeState(from)
	if err != nil {
		return err
	}
	t, err := s.decodeState(to)
	if err != nil {
		return err
	}
	switch {
	case f.Snapshot:
		return errors.New("the range starts at a position in a snapshot")
	case t.Snapshot:
		return errors.New("the running version's checkpoint is still in its snapshot: it has not reached the backfill's snapshot")
	case !slices.Equal(f.Captured, t.Captured) || !slices.Equal(t.Captured, s.tableList()):
		return fmt.Errorf("the positions captured %s and %s; the source names %s", strings.Join(f.Captured, ", "), strings.Join(t.Captured, ", "), strings.Join(s.tableList(), ", "))
	case comparePos(f, t) > 0:
		return fmt.Errorf("the running version's checkpoint (%s, %d changes in) is before the backfill's position (%s, %d changes in)", t.Binlog, t.Skip, f.Binlog, f.Skip)
	}
	s.st, s.restored = *f, true
	s.reread, s.rangeTo = rereadRange, t
	s.serverID = 6500 + rand.Uint32N(1001)
	return nil
}

func (s *CDC) decodeState(pos []byte) (*cdcState, error) {
	var st cdcState
	if err := json.Unmarshal(pos, &st); err != nil {
		return nil, fmt.Errorf("not a binlog capture's position: %w", err)
	}
	return &st, nil
}

// ComparePositions implements connector.PositionComparer: binlog
// positions compare by place (a transaction's start and how many of
// its row changes, or the event after the last one read); a position
// in its snapshot comes before every binlog position.
func (s *CDC) ComparePositions(a, b []byte) (int, error) {
	pa, err := s.decodeState(a)
	if err != nil {
		return 0, err
	}
	pb, err := s.decodeState(b)
	if err != nil {
		return 0, err
	}
	if !slices.Equal(pa.Captured, pb.Captured) {
		return 0, errors.New("positions of different tables")
	}
	return comparePos(pa, pb), nil
}

func comparePos(a, b *cdcState) int {
	switch {
	case a.Snapshot && b.Snapshot:
		return 0
	case a.Snapshot:
		return -1
	case b.Snapshot:
		return 1
	}
	if c := a.Binlog.compare(b.Binlog); c != 0 {
		return c
	}
	return cmpInt(a.Skip, b.Skip)
}

// rangeDone reports whether a range read handed on everything up to its
// end: with no changes of a transaction in it, once the read is past
// it between transactions; else once it handed on that many of the
// transaction's.
func (s *CDC) rangeDone() bool {
	to, bl := s.rangeTo, s.bl
	if to == nil || bl == nil || bl.cur.File == "" {
		return false
	}
	if to.Skip == 0 {
		return !bl.inTxn && bl.cur.compare(to.Binlog) >= 0
	}
	if bl.inTxn && bl.txnStart == to.Binlog {
		return bl.txnRows >= to.Skip
	}
	return !bl.inTxn && bl.cur.compare(to.Binlog) > 0
}

var _ connector.SnapshotRereader = (*CDC)(nil)

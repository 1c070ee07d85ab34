package joinop

// The batch interval hash join's state: its counters, sizes, and a
// snapshot in the sorted interval join's layout.

import (
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Dropped implements Counters: rows whose time attribute is NULL (the
// inner join's count).
func (j *IntervalHashJoin) Dropped() (int64, string) {
	if c, ok := j.inner.(operator.Counters); ok {
		return c.Dropped()
	}
	return 0, ""
}

// WidenRestore implements operator.Widener, for the rows held and the
// inner join's state.
func (j *IntervalHashJoin) WidenRestore(w map[row.TypeID]row.TypeID) {
	j.Widening.WidenRestore(w)
	if in, ok := j.inner.(operator.Widener); ok {
		in.WidenRestore(w)
	}
}

// StateEntries implements StateSizer: the rows held.
func (j *IntervalHashJoin) StateEntries() int64 {
	if s, ok := j.fallback.(operator.StateSizer); ok {
		return s.StateEntries()
	}
	return int64(len(j.rows) + len(j.lrows))
}

// StateBytes implements StateMemory.
func (j *IntervalHashJoin) StateBytes() int64 {
	if s, ok := j.fallback.(operator.StateMemory); ok {
		return s.StateBytes()
	}
	return int64(cap(j.arena)+cap(j.left)) + int64(cap(j.rows)+cap(j.sorted))*16 +
		int64(cap(j.lrows))*8 + int64(cap(j.kids)+cap(j.lkids)+cap(j.start))*4 + j.index.MemBytes() + int64(cap(j.ints.slots))*16
}

// timeSortedStateVersion is sortop.TimeSorted's snapshot version byte.
const timeSortedStateVersion = 0x5a

// Snapshot implements Snapshotter in TimeSorted's layout: the rows held
// (side, row) then an empty IntervalJoin's state with the NULL times'
// count.
func (j *IntervalHashJoin) Snapshot() ([]byte, error) {
	if j.fallback != nil {
		return j.fallback.(operator.Snapshotter).Snapshot()
	}
	buf := []byte{timeSortedStateVersion}
	buf = binary.AppendUvarint(buf, uint64(len(j.rows)+len(j.lrows)))
	view := make(row.Row, j.spec.RightWidth)
	for _, h := range j.rows {
		j.layout.Decode(view, j.arena[h.off:], nil)
		buf = append(buf, 1)
		buf = row.AppendRow(buf, view)
	}
	for _, off := range j.lrows {
		j.llay.Decode(j.lview, j.left[off:], nil)
		buf = append(buf, 0)
		buf = row.AppendRow(buf, j.lview)
	}
	clear(view)
	clear(j.lview)
	sn, ok := j.inner.(operator.Snapshotter)
	if !ok {
		return buf, nil
	}
	in, err := sn.Snapshot()
	if err != nil {
		return nil, err
	}
	return append(buf, in...), nil
}

// Restore implements Snapshotter: a snapshot of its own, or of the
// TimeSorted interval join that ran batch interval joins before.
func (j *IntervalHashJoin) Restore(snap []byte) error {
	if len(snap) == 0 || snap[0] != timeSortedStateVersion {
		return fmt.Errorf("batch interval join: restore: not a snapshot of a batch interval join (version %d)", firstByte(snap))
	}
	r := NewIntervalHashJoin(j.spec, j.inner)
	r.Widening, r.sortedJoin, r.budget = j.Widening, j.sortedJoin, j.budget
	d := j.Decoder(snap[1:])
	n := d.Uvarint()
	widths := [2]int{j.spec.LeftWidth, j.spec.RightWidth}
	for range n {
		side := int(d.Byte())
		cr := d.Row()
		if d.Err() != nil {
			break
		}
		if side > 1 || len(cr) != widths[side] {
			return fmt.Errorf("batch interval join: restore: row of side %d with %d columns", side, len(cr))
		}
		if cr[[2]int{j.spec.LeftTime, j.spec.RightTime}[side]].IsNull() {
			return fmt.Errorf("batch interval join: restore: a held row of side %d has no time", side)
		}
		_ = r.hold(side, cr)
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("batch interval join: restore: %w", err)
	}
	if sn, ok := j.inner.(operator.Snapshotter); ok {
		if err := sn.Restore(snap[len(snap)-d.Len():]); err != nil {
			return fmt.Errorf("batch interval join: restore: %w", err)
		}
	}
	if sz, ok := j.inner.(operator.StateSizer); ok && sz.StateEntries() != 0 {
		return fmt.Errorf("batch interval join: restore: its interval join holds %d rows, which a batch run's holds none of before its input ends", sz.StateEntries())
	}
	*j = *r
	return nil
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

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

// StateEntries implements StateSizer: the rows held, a self-join's
// counted on each side that holds them (as its snapshot writes them).
func (j *IntervalHashJoin) StateEntries() int64 {
	if s, ok := j.fallback.(operator.StateSizer); ok {
		return s.StateEntries()
	}
	n := int64(j.sides[0].n + j.sides[1].n)
	if j.self {
		n += int64(j.sides[0].n - j.nullKeys)
	}
	return n
}

// StateBytes implements StateMemory.
func (j *IntervalHashJoin) StateBytes() int64 {
	if s, ok := j.fallback.(operator.StateMemory); ok {
		return s.StateBytes()
	}
	return j.sides[0].bytes() + j.sides[1].bytes() + j.index.MemBytes() + j.ints.MemBytes()
}

// timeSortedStateVersion is sortop.TimeSorted's snapshot version byte.
const timeSortedStateVersion = 0x5a

// Snapshot implements Snapshotter in TimeSorted's layout: the rows held
// (side, row; the right ones first) then an empty IntervalJoin's state
// with the NULL times' count.
func (j *IntervalHashJoin) Snapshot() ([]byte, error) {
	if j.fallback != nil {
		return j.fallback.(operator.Snapshotter).Snapshot()
	}
	if !j.aligned() {
		return nil, fmt.Errorf("batch interval join: a self-join's inputs passed %d and %d rows at a checkpoint, whose barriers align them", j.seen[0], j.seen[1])
	}
	buf := []byte{timeSortedStateVersion}
	buf = binary.AppendUvarint(buf, uint64(j.StateEntries()))
	for _, side := range []int{1, 0} {
		_ = j.eachHeld(side, func(r row.Row) error {
			buf = append(buf, byte(side))
			buf = row.AppendRow(buf, r)
			return nil
		})
	}
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
// TimeSorted interval join that ran batch interval joins before. A
// self-join restores rows held by side as any join does, each side's
// apart: a snapshot written elsewhere need not hold the same rows on
// both.
func (j *IntervalHashJoin) Restore(snap []byte) error {
	if len(snap) == 0 || snap[0] != timeSortedStateVersion {
		return fmt.Errorf("batch interval join: restore: not a snapshot of a batch interval join (version %d)", firstByte(snap))
	}
	r := NewIntervalHashJoin(j.spec, j.inner)
	r.Widening, r.sortedJoin, r.budget = j.Widening, j.sortedJoin, j.budget
	d := j.Decoder(snap[1:])
	n := d.Uvarint()
	if j.same {
		r.SetSameInputs()
		if n > 0 {
			r.setSelf(false)
		}
	}
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

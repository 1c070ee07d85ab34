package joinop

import (
	"bytes"
	"fmt"
	"math"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
)

// StateEntries implements StateSizer: the distinct rows kept on both
// sides (and a batch join's held left changes).
func (j *Join) StateEntries() int64 {
	n := j.sides[0].size + j.sides[1].size + j.leftNulls.size + int64(len(j.held)+len(j.nullRight))
	if j.direct {
		n += j.hash.recs // the right side's rows
	}
	return n
}

// StateBytes implements StateMemory: both sides' arrays (the key
// index once: the sides share it), the null-aware side's and a batch
// join's held changes (their slices; their rows are the input's), and a
// batch hash join's probe table.
func (j *Join) StateBytes() int64 {
	held := int64(cap(j.held)+cap(j.nullRight)) * int64(unsafe.Sizeof(row.Change{}))
	return j.sides[0].memBytes(true) + j.sides[1].memBytes(false) + j.leftNulls.memBytes(true) + held + j.hash.memBytes()
}

// JoinStateVersion is the first byte of a snapshot of a Join without a
// state TTL (joinTTLStateVersion with one).
const JoinStateVersion = 1

// Snapshot implements Snapshotter: SnapshotTo's bytes (join_stream.go).
func (j *Join) Snapshot() ([]byte, error) {
	var b bytes.Buffer
	err := j.SnapshotTo(&b)
	return b.Bytes(), err
}

// Restore implements Snapshotter.
func (j *Join) Restore(snap []byte) error { return j.restore(row.NewDecoder(snap)) }

// restore reads a snapshot from d, the bytes of one or a stream of them.
func (j *Join) restore(d *row.Decoder) error {
	j.Widen(d)
	// By column: each section of rows is of one side's columns, the
	// keys are rebuilt from the rows.
	cols := j.narrowedColumns(j.Columns())
	side := func(left bool) {
		if cols == nil {
			return
		}
		if left {
			d.SetWidenCols(cols[:min(j.spec.LeftWidth, len(cols))], nil)
		} else {
			d.SetWidenCols(cols[min(j.spec.LeftWidth, len(cols)):], nil)
		}
	}
	v := d.Byte()
	if v != JoinStateVersion && v != joinTTLStateVersion {
		return fmt.Errorf("join: state version %d, want %d or %d", v, JoinStateVersion, joinTTLStateVersion)
	}
	timed := v == joinTTLStateVersion
	settled := d.Byte() == 1
	widths := [3]int{j.spec.LeftWidth, j.spec.RightWidth, j.spec.LeftWidth}
	types := [3][]row.TypeID{j.spec.LeftTypes, j.spec.RightTypes, j.spec.LeftTypes}
	var restored [3]*joinSide
	// A direct join's right rows go to a new probe table (join_hash.go).
	var table *hashTable
	if j.direct {
		table = newHashTable(&j.spec, j.sides[1].layout)
	}
	for i, old := range []*joinSide{j.sides[0], j.sides[1], j.leftNulls} {
		var index *joinIndex // the right side's is its pair's (pairJoinSides)
		switch i {
		case 0:
			index = newJoinIndex(&j.spec)
		case 2:
			index = newBytesIndex()
		}
		s := newJoinSide(old.keys, old.unique, widths[i], types[i], index)
		if i == 1 {
			pairJoinSides(restored[0], s)
		}
		s.appendOnly = old.appendOnly
		s.noMatches = old.noMatches
		s.nullSafe = old.nullSafe
		s.onExpire = old.onExpire
		rt := j.restoreTimes(s)
		side(i != 1)
		n := d.Count(1)
		for range n {
			r := d.Row()
			count, assoc := d.Uvarint(), d.Uvarint()
			at := int64(0)
			if timed {
				at = d.Varint()
			}
			if d.Err() != nil {
				break
			}
			keep, err := j.keeps(i != 1, r) // of the row as saved
			if err != nil {
				d.Fail("%v", err)
				break
			}
			if r = j.narrowSaved(d, r, i != 1); len(r) != widths[i] {
				d.Fail("row of %d columns on side %d, want %d", len(r), i, widths[i])
				break
			}
			if count == 0 || count > math.MaxInt32 || assoc > math.MaxInt32 {
				d.Fail("row count %d, match count %d", count, assoc)
				break
			}
			if s.key(r) {
				d.Fail("row with a NULL join key in the state")
				break
			}
			if !keep {
				continue
			}
			if i == 1 && table != nil {
				table.add(r, nil, int32(count))
				continue
			}
			rid, err := s.restoreRow(r, int32(count), int32(assoc))
			if err != nil {
				d.Fail("%v", err)
				break
			}
			rt.note(rid, at)
		}
		rt.apply(timed)
		restored[i] = s
	}
	rightRows, rightNulls := d.Varint(), d.Varint()
	changes := func() []row.Change {
		n := d.Count(2)
		out := make([]row.Change, 0, n)
		for range n {
			k := row.Kind(d.Byte())
			r := d.Row()
			if d.Err() != nil {
				break
			}
			out = append(out, row.Change{Kind: k, Row: r})
		}
		return out
	}
	side(true)
	held := changes() // left changes
	side(false)
	nullRight := changes() // right changes
	var err error
	if held, err = j.keptChanges(true, held); err != nil {
		return err
	}
	if nullRight, err = j.keptChanges(false, nullRight); err != nil {
		return err
	}
	// Filtered as saved, then cut to the columns a narrowed join keeps.
	for k := range held {
		held[k].Row = j.narrowSaved(d, held[k].Row, true)
	}
	for k := range nullRight {
		nullRight[k].Row = j.narrowSaved(d, nullRight[k].Row, false)
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	j.sides[0], j.sides[1], j.leftNulls = restored[0], restored[1], restored[2]
	j.rightRows, j.rightNulls = rightRows, rightNulls
	j.held, j.nullRight, j.settled = held, nullRight, settled
	j.hash = table
	return nil
}

// restoreRow stores a snapshot's row, whose key is s's current one, count
// times with assoc matches, and returns it (the last copy, on an
// append-only side, which stores each copy apart).
func (s *joinSide) restoreRow(r row.Row, count, assoc int32) (rowRef, error) {
	if s.appendOnly {
		kid := s.keyID()
		for range count {
			s.appendRun(kid, r, assoc)
		}
		return 0, nil // no TTL, so no time to note
	}
	for range count {
		if err := s.add(r, int(assoc)); err != nil {
			return 0, err
		}
		if s.unique != nil {
			break
		}
	}
	kid, _ := s.index.find(s.cur())
	rid, _ := s.idents.Find(s.identOf(kid, r))
	s.ents[rid].assoc = assoc
	return rowRef(rid), nil
}

// narrowSaved cuts a saved row of the left or right input's whole width
// to the columns the side keeps (JoinSpec.Narrowed): a snapshot written
// before the planner narrowed the join's rows. A row of another width
// is returned as it is.
func (j *Join) narrowSaved(d *row.Decoder, r row.Row, left bool) row.Row {
	side := 1
	if left {
		side = 0
	}
	cols := j.spec.Narrowed[side]
	if cols == nil || r == nil || len(r) != j.spec.WholeWidth[side] || len(cols) == len(r) {
		return r
	}
	if j.Columns() != nil {
		// Its values were retagged by the narrowed columns' types.
		d.Fail("a snapshot of whole rows cannot be narrowed and widened at once")
		return r
	}
	out := make(row.Row, len(cols))
	for k, c := range cols {
		out[k] = r[c]
	}
	return out
}

// narrowedColumns is the types of the whole inputs' columns (the
// compatibility check's, by the join's fingerprint, which names its
// whole inputs) at the columns the sides keep (JoinSpec.Narrowed).
func (j *Join) narrowedColumns(cols []row.TypeID) []row.TypeID {
	n, w := j.spec.Narrowed, j.spec.WholeWidth
	if n[0] == nil || cols == nil || len(cols) != w[0]+w[1] {
		return cols
	}
	out := make([]row.TypeID, 0, len(n[0])+len(n[1]))
	for side, off := range [2]int{0, w[0]} {
		for _, c := range n[side] {
			out = append(out, cols[off+c])
		}
	}
	return out
}

// keeps reports whether a restored row of the left (or right) input
// passes the filter the planner moved below the join (JoinSpec.LeftKeep,
// RightKeep): a checkpoint of the plan before the move holds rows the
// join would not have been given.
func (j *Join) keeps(left bool, r row.Row) (bool, error) {
	keep := j.spec.RightKeep
	if left {
		keep = j.spec.LeftKeep
	}
	if keep == nil || len(r) != j.wholeWidth(left) {
		// A row of a narrowed join's checkpoint passed the filter:
		// the plan that wrote it had it below the join too.
		return true, nil
	}
	ok, err := keep(r)
	if err != nil {
		return false, fmt.Errorf("join: restoring a row: %w", err)
	}
	return ok, nil
}

// keptChanges is cs without the changes keeps drops.
func (j *Join) keptChanges(left bool, cs []row.Change) ([]row.Change, error) {
	if (left && j.spec.LeftKeep == nil) || (!left && j.spec.RightKeep == nil) {
		return cs, nil
	}
	out := cs[:0]
	for _, c := range cs {
		ok, err := j.keeps(left, c.Row)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// wholeWidth is the width of the left (or right) input's whole rows,
// which JoinSpec.LeftKeep and RightKeep read.
func (j *Join) wholeWidth(left bool) int {
	side, w := 1, j.spec.RightWidth
	if left {
		side, w = 0, j.spec.LeftWidth
	}
	if j.spec.Narrowed[side] != nil {
		w = j.spec.WholeWidth[side]
	}
	return w
}

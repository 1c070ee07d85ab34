package joinop

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// A batch hash join (JoinSpec.RightFirst with an insert-only left
// side): every right change comes before the first left one, so the
// right side is built once into a probe table (hashTable,
// join_hash_table.go) and each left batch probed through it.
//
// An insert-only right side is added to the table as it comes and kept
// nowhere else (Join.direct): the table is the side's state, which
// snapshots write and restores read in the side's section (the same
// bytes as a side held in joinSide). Another right side (retractions,
// an upsert key) stays in joinSide, the truth for its changes, and the
// table is derived from it at the first left batch and dropped when
// anything could change it (a right change, a restore).
//
// A batch of left rows is probed in passes (probeBatch): every row's
// slot first, then a read of every matched record's first byte, then
// the joined rows; the loads within a pass do not wait for each other.

// usesHash reports whether left changes probe a hashTable: a batch hash
// join whose left side is not stored (Join.probes), whose right rows
// are never outer (nothing marks them matched) and whose keys are all
// compared with = (a NULL matches nothing).
func (j *Join) usesHash() bool {
	if !j.probes(0) || j.spec.NullAware || j.outer[1] || j.settled || len(j.spec.LeftKeys) == 0 {
		return false
	}
	for _, ns := range j.spec.NullSafe {
		if ns {
			return false
		}
	}
	return true
}

// buildHash lays the right side's rows out as a hashTable.
func (j *Join) buildHash() *hashTable {
	right := j.sides[1]
	t := newHashTable(&j.spec, right.layout)
	keys := len(right.lists)
	if right.appendOnly {
		keys = len(right.runs)
	}
	view := make(row.Row, j.spec.RightWidth)
	var enc []byte
	for kid := range int32(keys) {
		if !right.holds(kid) {
			continue
		}
		for it := right.iter(kid); ; {
			ref, ok := it.row()
			if !ok {
				break
			}
			count, _ := right.counts(ref)
			b := right.bytes(ref)
			if right.appendOnly {
				t.layout.Decode(view, b, nil)
			} else {
				state.DecodeRowInto(view, b)
				enc = t.layout.Append(enc[:0], view)
				b = enc
			}
			t.add(view, b, count)
			clear(view) // its strings may point into the side's pages
		}
	}
	return t
}

// buildBatch adds a batch of right changes to a direct join's table:
// a row with a NULL key never matches (no right row is outer), and an
// insert-only side has no retraction (one is ignored, as the side's
// state ignores a row it does not hold).
func (j *Join) buildBatch(in *row.Batch) {
	t := j.hash
	for i := range in.Changes {
		c := &in.Changes[i]
		if c.Kind.IsAdd() && !hasNull(c.Row, j.spec.RightKeys) {
			t.add(c.Row, nil, 1)
		}
	}
}

// hasNull reports whether any of r's columns cols is NULL.
func hasNull(r row.Row, cols []int) bool {
	for _, c := range cols {
		if r[c].IsNull() {
			return true
		}
	}
	return false
}

// probeBatch joins a batch of left changes through the probe table,
// building it first when there is none. The changes it emits are
// change's, in the same order.
func (j *Join) probeBatch(in *row.Batch, out operator.Emitter) error {
	if j.hash == nil {
		j.hash = j.buildHash()
	}
	t := j.hash
	cs := in.Changes
	t.find(j.spec.LeftKeys, cs)
	t.touch()
	tr := operator.TrackerOf(in, out)
	lw := j.spec.LeftWidth
	w := lw + j.spec.RightWidth
	outer := j.outer[0]
	semi, anti := j.semi(), j.spec.Kind == AntiJoin
	// Without a residual, a join that emits some columns builds those
	// alone: the right row decoded aside, the columns picked.
	pick := j.spec.Output
	if j.spec.Residual != nil || semi {
		pick = nil
	}
	if pick != nil && len(j.rightRow) != j.spec.RightWidth {
		j.rightRow = make(row.Row, j.spec.RightWidth)
	}
	// The picked rows go out at once, one by one: they may be cut from
	// the output batch's slabs (operator.RowCarver).
	carver := operator.CarverOf(out)
	pout := j.project(out)
	for i := range cs {
		if tr != nil {
			tr.At(i)
		}
		c := &cs[i]
		off := t.offs[i]
		matched := 0
		if off != 0 {
			for rs := t.rows(off); ; {
				count, enc, ok := rs.next()
				if !ok {
					break
				}
				if semi && j.spec.Residual == nil {
					matched += int(count)
					break // one match decides
				}
				if pick != nil {
					t.layout.Decode(j.rightRow, enc, &j.text)
					var pr row.Row
					if carver != nil {
						pr = carver.CarveRow(len(pick))
					} else {
						pr = j.slab.get(len(pick))
					}
					pickJoined(pr, pick, c.Row, j.rightRow, lw)
					matched += int(count)
					emitCopies(out, joinedKind(c.Kind, outer, false), pr, count)
					continue
				}
				jr := j.slab.get(w)
				copy(jr, c.Row)
				t.layout.Decode(jr[lw:], enc, &j.text)
				if j.spec.Residual != nil {
					ok, err := j.spec.Residual(jr)
					if err != nil {
						j.slab.unget(jr)
						return operator.ChangeError("join", in, i, err)
					}
					if !ok {
						j.slab.unget(jr)
						continue
					}
				}
				matched += int(count)
				if semi {
					j.slab.unget(jr)
					break
				}
				emitCopies(pout, joinedKind(c.Kind, outer, false), jr, count)
			}
		}
		switch {
		case semi:
			if (matched > 0) != anti {
				out.Emit(c.Kind, c.Row)
			}
		case outer && matched == 0:
			pout.Emit(padKind(c.Kind.IsAdd()), j.padded(0, c.Row))
		}
	}
	return nil
}

// CarvesRows implements operator.Carving: a join that emits some
// columns (a batch hash join's probe, a streaming change without a
// residual) builds the picked columns of its joined rows in its
// emitter's memory.
func (j *Join) CarvesRows() bool {
	return j.spec.Output != nil
}

var _ operator.Carving = (*Join)(nil)

// project returns out, or when the join emits some columns only
// (JoinSpec.Output) an emitter that projects each joined row into out.
func (j *Join) project(out operator.Emitter) operator.Emitter {
	if j.spec.Output == nil {
		return out
	}
	return &projecting{j: j, out: out}
}

// projecting emits the columns JoinSpec.Output of each joined row, in
// rows of the join's slab.
type projecting struct {
	j   *Join
	out operator.Emitter
}

func (p *projecting) Emit(k row.Kind, r row.Row) {
	cols := p.j.spec.Output
	pr := p.j.slab.get(len(cols))
	for i, c := range cols {
		if c < 0 {
			pr[i] = row.NullValue // read by no one (JoinSpec.Output)
			continue
		}
		pr[i] = r[c]
	}
	p.out.Emit(k, pr)
}

// At implements operator.Tracker for the emitter it wraps.
func (p *projecting) At(i int) {
	if t, ok := p.out.(operator.Tracker); ok {
		t.At(i)
	}
}

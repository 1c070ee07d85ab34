package joinop

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// A batch hash join's probe table (JoinSpec.RightFirst with an
// insert-only left side): once the left rows start, the right side can
// no longer change, so its rows are laid out again for probing alone.
//
// The right side's own state (joinSide) stays the truth for snapshots,
// restores and the unmatched right rows of Finish; the probe table is
// derived from it at the first left batch and dropped when anything
// could change it (a right change, a restore). Probing the side's own
// state costs four dependent cache misses an event on a large build
// side: the key index's slot, the key's entry (its bytes compared), the
// key's run and the run's block. Here a key's rows are one record in one
// byte arena (groups, below), so an event costs the table's slot and the
// record. For a single integer-like key (BIGINT, INT, DATE, TIME,
// TIMESTAMP, BOOLEAN) the slot holds the key's value itself: no encoded
// key bytes, no hash of them, no comparison in another array. Another
// key (STRING, composite) finds its key id through the shared index a
// batch at a time (state.KeyTable.FindAll: the loads of many keys in
// flight at once) and its record by key id.
//
// A batch of left rows is probed in passes (probeBatch): every row's
// slot first, then a read of every matched record's first byte, then
// the joined rows; the loads within a pass do not wait for each other.

// hashTable is the probe table of a batch hash join's right side.
type hashTable struct {
	layout *row.Layout // the right side's (its rows' encoding here)
	// arena holds a record per key: its row count (uvarint), then each
	// row's count (uvarint: a side that is not insert-only keeps equal
	// rows once, counted), its encoding's length (uvarint) and its
	// encoding (layout). Offset 0 is no record. The arena is never
	// written after the build: the strings of the rows decoded from it
	// alias it (the Go heap keeps it alive for them).
	arena []byte
	// byKid is a key's record offset by key id (of the join's index).
	byKid []uint64
	// intKey: the single key is integer-like (keyType, its values'
	// payload its identity): slots is an open-addressing table of
	// (value, record) with linear probing, 1<<(64-shift) slots, at most
	// half full.
	intKey  bool
	keyType row.TypeID
	shift   uint
	seed    uint64
	slots   []hashSlot
	// The probe passes' buffers, by change of the batch.
	offs   []uint64
	keys   []byte
	ends   []int32
	hashes []uint32
	ids    []int32
	// touched keeps touch's sum, so that the compiler keeps its loads.
	touched byte
}

// hashSlot is one key of an integer-keyed table: its value and its
// record's offset (0: an empty slot).
type hashSlot struct {
	key, off uint64
}

// probeSlow marks a change that takes Join.change instead (a key value
// of another type than the table's, a retraction).
const probeSlow = ^uint64(0)

// intKeyType reports whether keys of type id are compared by their
// payload alone (row.AppendKey writes the type, a zero scale and the
// payload for them).
func intKeyType(id row.TypeID) bool {
	switch id {
	case row.Boolean, row.Int, row.BigInt, row.Date, row.Time, row.Timestamp, row.TimestampLTZ:
		return true
	}
	return false
}

// plainInt reports whether v is a value of type id with nothing but its
// payload: its key is that payload.
func plainInt(v row.Value, id row.TypeID) bool {
	return v.Type() == id && v.Scale() == 0 && v.Str() == ""
}

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
	t := &hashTable{layout: right.layout, arena: []byte{0}}
	lk, rk := j.spec.LeftKeys, j.spec.RightKeys
	if len(lk) == 1 && len(j.spec.LeftTypes) > lk[0] && len(j.spec.RightTypes) > rk[0] &&
		j.spec.LeftTypes[lk[0]] == j.spec.RightTypes[rk[0]] && intKeyType(j.spec.RightTypes[rk[0]]) {
		t.intKey, t.keyType = true, j.spec.RightTypes[rk[0]]
	}
	keys := len(right.lists)
	if right.appendOnly {
		keys = len(right.runs)
	}
	t.byKid = make([]uint64, keys)
	var intKeys []uint64 // by record: its key, for the int table
	var recs []uint64
	view := make(row.Row, j.spec.RightWidth)
	var enc []byte
	for kid := range int32(keys) {
		if !right.holds(kid) {
			continue
		}
		n := 0
		for it := right.iter(kid); ; n++ {
			if _, ok := it.row(); !ok {
				break
			}
		}
		off := uint64(len(t.arena))
		t.arena = binary.AppendUvarint(t.arena, uint64(n))
		first := true
		for it := right.iter(kid); ; {
			ref, ok := it.row()
			if !ok {
				break
			}
			count, _ := right.counts(ref)
			b := right.bytes(ref)
			if !right.appendOnly {
				state.DecodeRowInto(view, b)
				enc = t.layout.Append(enc[:0], view)
				b = enc
			}
			if first && t.intKey {
				if right.appendOnly {
					t.layout.Decode(view, b, nil)
				}
				if v := view[rk[0]]; plainInt(v, t.keyType) {
					intKeys = append(intKeys, uint64(v.Int64()))
				} else {
					t.intKey = false
				}
				clear(view) // its strings may point into the side's pages
			}
			first = false
			t.arena = binary.AppendUvarint(t.arena, uint64(count))
			t.arena = binary.AppendUvarint(t.arena, uint64(len(b)))
			t.arena = append(t.arena, b...)
		}
		t.byKid[kid] = off
		recs = append(recs, off)
	}
	if t.intKey {
		t.seed = maphash.Comparable(maphash.MakeSeed(), 0) | 1
		size := 16
		for size < 2*len(recs) {
			size *= 2
		}
		t.shift = uint(64 - bits.TrailingZeros(uint(size)))
		t.slots = make([]hashSlot, size)
		mask := uint64(size - 1)
		for i, off := range recs {
			k := intKeys[i]
			for s := t.slot(k); ; s = (s + 1) & mask {
				if t.slots[s].off == 0 {
					t.slots[s] = hashSlot{key: k, off: off}
					break
				}
			}
		}
	}
	return t
}

// slot is the home slot of integer key k.
func (t *hashTable) slot(k uint64) uint64 { return (k ^ t.seed) * 0x9e3779b97f4a7c15 >> t.shift }

// findInt returns the record of integer key k, 0 for none.
func (t *hashTable) findInt(k uint64) uint64 {
	mask := uint64(len(t.slots) - 1)
	for s := t.slot(k); ; s = (s + 1) & mask {
		sl := &t.slots[s]
		if sl.key == k || sl.off == 0 {
			return sl.off
		}
	}
}

// memBytes is the table's memory.
func (t *hashTable) memBytes() int64 {
	if t == nil {
		return 0
	}
	return int64(cap(t.arena)) + int64(cap(t.byKid))*8 + int64(cap(t.slots))*16 +
		int64(cap(t.offs))*8 + int64(cap(t.keys)) + int64(cap(t.ends)+cap(t.hashes)+cap(t.ids))*4
}

// find sets t.offs[i] to the record of change i's key: 0 for none (a
// NULL key, or one the right side lacks), probeSlow for a change that
// the table does not answer.
func (t *hashTable) find(j *Join, cs []row.Change) {
	t.offs = t.offs[:0]
	lk := j.spec.LeftKeys
	if t.intKey {
		k := lk[0]
		for i := range cs {
			c := &cs[i]
			v := c.Row[k]
			switch {
			case !c.Kind.IsAdd():
				t.offs = append(t.offs, probeSlow)
			case plainInt(v, t.keyType):
				t.offs = append(t.offs, t.findInt(uint64(v.Int64())))
			case v.IsNull():
				t.offs = append(t.offs, 0)
			default:
				t.offs = append(t.offs, probeSlow)
			}
		}
		return
	}
	// Encode every key with a probe; then find them all at once.
	t.keys, t.ends = t.keys[:0], t.ends[:0]
	for i := range cs {
		c := &cs[i]
		off := uint64(1) // probed
		switch {
		case !c.Kind.IsAdd():
			off = probeSlow
		case hasNull(c.Row, lk):
			off = 0
		default:
			t.keys = row.KeyOf(t.keys, c.Row, lk)
			t.ends = append(t.ends, int32(len(t.keys)))
		}
		t.offs = append(t.offs, off)
	}
	n := len(t.ends)
	if n == 0 {
		return
	}
	t.hashes, t.ids = grow(t.hashes, n), grow(t.ids, n)
	j.sides[1].index.FindAll(t.keys, t.ends, t.hashes, t.ids)
	p := 0
	for i, off := range t.offs {
		if off != 1 {
			continue
		}
		t.offs[i] = 0
		if id := t.ids[p]; id >= 0 && int(id) < len(t.byKid) {
			t.offs[i] = t.byKid[id]
		}
		p++
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

// grow returns s with length n, reusing its array when it can.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// touch reads the first byte of every record found, so that their
// cache misses overlap before the joined rows are built. Their sum is
// kept (touched): loads whose value nothing uses would be dropped.
func (t *hashTable) touch() {
	var sum byte
	for _, off := range t.offs {
		if off != 0 && off != probeSlow {
			sum += t.arena[off]
		}
	}
	t.touched += sum
}

// hashRows walks a record's rows.
type hashRows struct {
	b    []byte
	at   int
	left uint64
}

// rows returns the rows of the record at off.
func (t *hashTable) rows(off uint64) hashRows {
	n, w := binary.Uvarint(t.arena[off:])
	return hashRows{b: t.arena, at: int(off) + w, left: n}
}

// next returns the next row's count and encoding, ok false after the
// last.
func (r *hashRows) next() (count int32, enc []byte, ok bool) {
	if r.left == 0 {
		return 0, nil, false
	}
	r.left--
	c, w := binary.Uvarint(r.b[r.at:])
	r.at += w
	n, w := binary.Uvarint(r.b[r.at:])
	r.at += w
	enc = r.b[r.at : r.at+int(n)]
	r.at += int(n)
	return int32(c), enc, true
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
	t.find(j, cs)
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
	pout := j.project(out)
	for i := range cs {
		if tr != nil {
			tr.At(i)
		}
		c := &cs[i]
		off := t.offs[i]
		if off == probeSlow {
			if err := j.change(0, c.Kind, c.Row, pout); err != nil {
				return operator.ChangeError("join", in, i, err)
			}
			continue
		}
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
					pr := j.slab.get(len(pick))
					for k, col := range pick {
						if col < lw {
							pr[k] = c.Row[col]
						} else {
							pr[k] = j.rightRow[col-lw]
						}
					}
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
			pout.Emit(row.Insert, j.padded(0, c.Row))
		}
	}
	return nil
}

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

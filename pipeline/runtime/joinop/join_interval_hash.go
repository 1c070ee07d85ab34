package joinop

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// IntervalHashJoin is a batch run's INNER or LEFT interval join as a
// hash join, as Flink's batch planner runs an interval join (a regular
// join with the time bounds as a non-equi condition): both inputs are
// bounded, so every pair within the bounds joins and no row is late.
// Both inputs' rows are held as they come, encoded (row.Layout) in an
// arena per side, the right ones with their key's id and time. At the
// end of the input (the final watermark, or Finish) each key's right
// rows are laid out in time order; each left row then finds its key
// and, by binary search, the first right row of its key within the
// bounds, and joins the rows up to the last one. No timers, no cache
// cleanup and no sort of the input: a row costs a key lookup and its
// matches, whatever the bounds or the number of rows a key holds.
//
// The left rows are held rather than joined as they come after a right
// input read first (a regular batch join's runtime.UnionNode.BuildFirst):
// a self-join's two inputs share one source, whose left rows the union
// would then hold as rows until the right input ends, several times
// the memory of their encoding here.
//
// Its snapshot is that of the sortop.TimeSorted interval join that ran
// batch interval joins before: the rows held (side, row.AppendRow),
// then the state of the streaming join it wraps (inner), which sees only
// the rows of a NULL time (it drops and counts them, or pads a left one)
// and so holds no rows. A checkpoint of either restores into the other:
// both hold the rows that no output came of yet.
type IntervalHashJoin struct {
	operator.Widening
	spec   IntervalJoinSpec
	inner  operator.TwoInput
	layout *row.Layout // the right rows' encoding
	index  *state.KeyIDs
	// The right rows as they came: each one's key id, time and
	// encoding's offset in arena.
	kids  []int32
	rows  []ihRow
	arena []byte
	// The left rows as they came: their key's id (-1: a NULL in it) and
	// their encodings' offsets in left.
	lkids  []int32
	lrows  []int
	left   []byte
	llay   *row.Layout
	lview  row.Row
	rview  row.Row // a right row decoded, for Output's columns
	joined bool    // the end came: every row held was joined
	// start[kid]..start[kid+1] are key kid's right rows in sorted, in
	// time order (ties in arrival order), at the end.
	start  []int32
	sorted []ihRow
	kbuf   []byte
	nkeys  int32 // key ids handed out
	// intKey: the single key is of an integer-like type on both sides
	// (intKeyType): its values' ids are in ints, no key encoded.
	intKey  bool
	keyType row.TypeID
	ints    intIDs
	one     row.Batch // a row of NULL time, for inner
	// sorted builds the sorted join over inner (sortop.TimeSorted),
	// which spills to disk: past half the state budget the rows held
	// go to it, and so does everything after (fallback).
	sortedJoin func(inner operator.TwoInput, budget int64) operator.TwoInput
	budget     int64
	fallback   operator.TwoInput
	slab       rowSlab
	text       row.Text
}

// ihRow is a right row: its time and its encoding's offset.
type ihRow struct {
	at  int64
	off int
}

var (
	_ operator.TwoInput    = (*IntervalHashJoin)(nil)
	_ operator.Snapshotter = (*IntervalHashJoin)(nil)
	_ operator.StateMemory = (*IntervalHashJoin)(nil)
	_ operator.Counters    = (*IntervalHashJoin)(nil)
	_ operator.Widener     = (*IntervalHashJoin)(nil)
)

// HashJoinable reports whether a batch interval join of spec can run as
// an IntervalHashJoin: one whose right rows are never emitted padded.
func (s *IntervalJoinSpec) HashJoinable() bool {
	return s.Kind == InnerJoin || s.Kind == LeftJoin
}

// NewIntervalHashJoin returns an empty batch interval join of spec (of
// a kind HashJoinable accepts); inner is the streaming interval join
// (an IntervalJoin, or its keyed workers) of the same spec that the
// batch run would otherwise sort its input for: it takes the rows of a
// NULL time and keeps the snapshot's layout.
func NewIntervalHashJoin(spec IntervalJoinSpec, inner operator.TwoInput) *IntervalHashJoin {
	j := &IntervalHashJoin{spec: spec, inner: inner, index: state.NewKeyIDs(),
		layout: row.NewLayout(typesOf(spec.RightTypes, spec.RightWidth)),
		llay:   row.NewLayout(typesOf(spec.LeftTypes, spec.LeftWidth)),
		lview:  make(row.Row, spec.LeftWidth)}
	lk, rk := spec.LeftKeys, spec.RightKeys
	if len(lk) == 1 && len(spec.LeftTypes) > lk[0] && len(spec.RightTypes) > rk[0] &&
		spec.LeftTypes[lk[0]] == spec.RightTypes[rk[0]] && intKeyType(spec.LeftTypes[lk[0]]) {
		j.intKey, j.keyType = true, spec.LeftTypes[lk[0]]
	}
	return j
}

// intIDs is an open-addressing table (linear probing, at most half
// full) of integer keys' ids: a key's id without its encoding, hash or
// comparison of bytes in another array. A value that is not a plain
// integer of the key's type (plainInt) has a key of another encoding,
// which no value here has: it takes the shared index.
type intIDs struct {
	slots []intSlot
	shift uint
	n     int
}

type intSlot struct {
	key  uint64
	id   int32
	used bool
}

// get returns k's id, adding it with the next id of *next.
func (t *intIDs) get(k uint64, next *int32) int32 {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for s := (k * 0x9e3779b97f4a7c15) >> t.shift; ; s = (s + 1) & mask {
		sl := &t.slots[s]
		if !sl.used {
			*sl = intSlot{key: k, id: *next, used: true}
			*next++
			t.n++
			return sl.id
		}
		if sl.key == k {
			return sl.id
		}
	}
}

func (t *intIDs) grow() {
	old := t.slots
	size := max(64, 2*len(old))
	t.slots = make([]intSlot, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := uint64(size - 1)
	for _, o := range old {
		if !o.used {
			continue
		}
		for s := (o.key * 0x9e3779b97f4a7c15) >> t.shift; ; s = (s + 1) & mask {
			if !t.slots[s].used {
				t.slots[s] = o
				break
			}
		}
	}
}

// typesOf is t when it has width columns, else width of no known type.
func typesOf(t []row.TypeID, width int) []row.TypeID {
	if len(t) != width {
		return make([]row.TypeID, width)
	}
	return t
}

// SetSorted gives the join the sorted join it hands its rows to past
// half of the state budget: build returns one over inner with that
// budget. Without it the join holds every row in memory.
func (j *IntervalHashJoin) SetSorted(build func(inner operator.TwoInput, budget int64) operator.TwoInput) {
	j.sortedJoin = build
}

// SetStateBudget takes the operator's state budget (runOp calls it).
func (j *IntervalHashJoin) SetStateBudget(max int64) { j.budget = max }

// ProcessInput implements TwoInput.
func (j *IntervalHashJoin) ProcessInput(input int, in *row.Batch, out operator.Emitter) error {
	if input < 0 || input > 1 {
		return fmt.Errorf("interval join: input %d", input)
	}
	if j.fallback != nil {
		return j.fallback.ProcessInput(input, in, out)
	}
	if err := j.process(input, in, out); err != nil {
		return err
	}
	if j.budget > 0 && j.sortedJoin != nil && j.StateBytes() > j.budget/2 {
		return j.toSorted(out)
	}
	return nil
}

// toSorted hands the rows held to the sorted join, which takes every
// call from now on: it spills the rows it holds past its share of the
// budget, where this join would run out of it.
func (j *IntervalHashJoin) toSorted(out operator.Emitter) error {
	fb := j.sortedJoin(j.inner, j.budget)
	var b row.Batch
	flush := func(side int) error {
		if len(b.Changes) == 0 {
			return nil
		}
		err := fb.ProcessInput(side, &b, out)
		clear(b.Changes)
		b.Changes = b.Changes[:0]
		return err
	}
	for _, h := range j.rows {
		r := make(row.Row, j.spec.RightWidth)
		j.layout.Decode(r, j.arena[h.off:], nil) // the sort copies it before the arena goes
		b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
		if len(b.Changes) == 1024 {
			if err := flush(1); err != nil {
				return err
			}
		}
	}
	if err := flush(1); err != nil {
		return err
	}
	for _, off := range j.lrows {
		r := make(row.Row, j.spec.LeftWidth)
		j.llay.Decode(r, j.left[off:], nil)
		b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
		if len(b.Changes) == 1024 {
			if err := flush(0); err != nil {
				return err
			}
		}
	}
	if err := flush(0); err != nil {
		return err
	}
	*j = IntervalHashJoin{Widening: j.Widening, spec: j.spec, inner: j.inner, index: state.NewKeyIDs(), fallback: fb}
	return nil
}

func (j *IntervalHashJoin) process(input int, in *row.Batch, out operator.Emitter) error {
	tc := [2]int{j.spec.LeftTime, j.spec.RightTime}[input]
	return operator.EachChange("interval join", in, out, func(i int, c *row.Change) error {
		if !c.Kind.IsAdd() {
			return fmt.Errorf("input %d sent %s: an interval join takes insert-only input", input, c.Kind)
		}
		if c.Row[tc].IsNull() {
			return j.toInner(input, in, i, out)
		}
		return j.hold(input, c.Row)
	})
}

// hold keeps r, of side input and of a time, until the end.
func (j *IntervalHashJoin) hold(input int, r row.Row) error {
	if j.joined {
		return errors.New("interval join: input after the end")
	}
	if input == 1 {
		j.addRight(r)
		return nil
	}
	j.lkids = append(j.lkids, j.keyID(r, j.spec.LeftKeys))
	j.lrows = append(j.lrows, len(j.left))
	j.left = j.llay.Append(j.left, r)
	return nil
}

// toInner hands change i of in, of a NULL time, to the inner join,
// which counts it dropped or emits it padded.
func (j *IntervalHashJoin) toInner(input int, in *row.Batch, i int, out operator.Emitter) error {
	j.one.Changes = append(j.one.Changes[:0], in.Changes[i])
	em := out
	if tr, ok := out.(operator.Tracker); ok {
		em = atEmitter{out, tr, i}
	}
	err := j.inner.ProcessInput(input, &j.one, em)
	j.one.Changes[0] = row.Change{}
	return err
}

// atEmitter tells the node that the rows it emits come of change i.
type atEmitter struct {
	operator.Emitter
	tr operator.Tracker
	i  int
}

func (a atEmitter) At(int) { a.tr.At(a.i) }

// addRight keeps right row r, of a time. A row with a NULL key joins no
// row.
func (j *IntervalHashJoin) addRight(r row.Row) {
	kid := j.keyID(r, j.spec.RightKeys)
	if kid < 0 {
		return
	}
	j.kids = append(j.kids, kid)
	j.rows = append(j.rows, ihRow{at: r[j.spec.RightTime].Micros(), off: len(j.arena)})
	j.arena = j.layout.Append(j.arena, r)
}

// keyID returns the id of r's key (its columns cols), adding it: -1
// when a column of it is NULL. Both sides' rows take their key's id as
// they come, so that the end joins key by key.
func (j *IntervalHashJoin) keyID(r row.Row, cols []int) int32 {
	if hasNull(r, cols) {
		return -1
	}
	if j.intKey {
		if v := r[cols[0]]; plainInt(v, j.keyType) {
			return j.ints.get(uint64(v.Int64()), &j.nkeys)
		}
	}
	j.kbuf = row.KeyOf(j.kbuf[:0], r, cols)
	kid, ok := j.index.Find(j.kbuf)
	if !ok {
		kid = j.nkeys
		j.nkeys++
		j.index.Insert(j.kbuf, kid)
	}
	return kid
}

// join lays the right rows out by key and time, then joins the left
// rows held, once, and frees them all.
func (j *IntervalHashJoin) join(out operator.Emitter) error {
	if j.joined {
		return nil
	}
	j.joined = true
	keys := int(j.nkeys)
	j.start = make([]int32, keys+1)
	for _, kid := range j.kids {
		j.start[kid+1]++
	}
	for k := range keys {
		j.start[k+1] += j.start[k]
	}
	j.sorted = make([]ihRow, len(j.rows))
	next := slices.Clone(j.start[:keys])
	for i, kid := range j.kids {
		j.sorted[next[kid]] = j.rows[i]
		next[kid]++
	}
	for k := range keys {
		seg := j.sorted[j.start[k]:j.start[k+1]]
		if !slices.IsSortedFunc(seg, byTime) {
			slices.SortStableFunc(seg, byTime)
		}
	}
	j.kids, j.rows = nil, nil
	// The left rows key by key (a key's in arrival order, those of a
	// NULL key first), so that a key's right rows are read while in
	// cache.
	lstart := make([]int32, keys+2)
	for _, kid := range j.lkids {
		lstart[kid+2]++
	}
	for k := range keys + 1 {
		lstart[k+1] += lstart[k]
	}
	order := make([]int32, len(j.lkids))
	for i, kid := range j.lkids {
		order[lstart[kid+1]] = int32(i)
		lstart[kid+1]++
	}
	for _, i := range order {
		j.llay.Decode(j.lview, j.left[j.lrows[i]:], &j.text)
		if err := j.probe(j.lview, j.lkids[i], out); err != nil {
			return err
		}
	}
	*j = IntervalHashJoin{Widening: j.Widening, spec: j.spec, inner: j.inner, joined: true, index: state.NewKeyIDs()}
	return nil
}

func byTime(a, b ihRow) int {
	switch {
	case a.at < b.at:
		return -1
	case a.at > b.at:
		return 1
	}
	return 0
}

// probe joins left row r, of key id kid, with the right rows of its key within the
// bounds: r[LeftTime] - Upper <= right time <= r[LeftTime] - Lower.
func (j *IntervalHashJoin) probe(r row.Row, kid int32, out operator.Emitter) error {
	s := &j.spec
	outer := s.Kind == LeftJoin
	matched := false
	if s.Lower <= s.Upper && kid >= 0 {
		t := r[s.LeftTime].Micros()
		lo, hi := subSat(t, s.Upper), subSat(t, s.Lower)
		seg := j.sorted[j.start[kid]:j.start[kid+1]]
		i := 0
		if len(seg) > 8 {
			i, _ = slices.BinarySearchFunc(seg, lo, func(e ihRow, lo int64) int { return byTime(e, ihRow{at: lo}) })
		} else {
			for i < len(seg) && seg[i].at < lo {
				i++
			}
		}
		lw, w := s.LeftWidth, s.LeftWidth+s.RightWidth
		for ; i < len(seg) && seg[i].at <= hi; i++ {
			if s.Output != nil && s.Residual == nil {
				// The picked columns alone (IntervalJoinSpec.Output).
				if j.rview == nil {
					j.rview = make(row.Row, s.RightWidth)
				}
				j.layout.Decode(j.rview, j.arena[seg[i].off:], &j.text)
				jr := j.slab.get(len(s.Output))
				for k, c := range s.Output {
					if c < lw {
						jr[k] = r[c]
					} else {
						jr[k] = j.rview[c-lw]
					}
				}
				matched = true
				out.Emit(row.Insert, jr)
				continue
			}
			jr := j.slab.get(w)
			copy(jr, r)
			j.layout.Decode(jr[lw:], j.arena[seg[i].off:], &j.text)
			if s.Residual != nil {
				ok, err := s.Residual(jr)
				if err != nil {
					j.slab.unget(jr)
					return err
				}
				if !ok {
					j.slab.unget(jr)
					continue
				}
			}
			matched = true
			out.Emit(row.Insert, j.project(jr))
		}
	}
	if !matched && outer {
		out.Emit(row.Insert, j.project(padRow(0, r, s.LeftWidth, s.RightWidth)))
	}
	return nil
}

// project returns the columns Output of the joined or padded row jr
// (jr itself without Output): a residual reads the whole row first.
func (j *IntervalHashJoin) project(jr row.Row) row.Row { return j.slab.pick(jr, j.spec.Output) }

// subSat is a - b, held within int64.
func subSat(a, b int64) int64 {
	d := a - b
	if (b > 0 && d > a) || (b < 0 && d < a) {
		if b > 0 {
			return -1 << 63
		}
		return 1<<63 - 1
	}
	return d
}

// Watermark implements Lifecycle: a batch run's only watermark is the
// final one, after which no row may come; the rows held join
// before it passes on.
func (j *IntervalHashJoin) Watermark(wm int64, out operator.Emitter) error {
	if j.fallback != nil {
		return j.fallback.Watermark(wm, out)
	}
	if wm != operator.MaxWatermark {
		return nil
	}
	if err := j.join(out); err != nil {
		return err
	}
	return j.inner.Watermark(wm, out)
}

// Finish implements Lifecycle.
func (j *IntervalHashJoin) Finish(out operator.Emitter) error {
	if j.fallback != nil {
		return j.fallback.Finish(out)
	}
	if err := j.join(out); err != nil {
		return err
	}
	return j.inner.Finish(out)
}

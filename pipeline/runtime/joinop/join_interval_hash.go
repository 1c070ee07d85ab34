package joinop

import (
	"errors"
	"fmt"
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
// arena per side with their key's id and time, narrowed to the columns
// the join reads and emits (holdCols). At the end of the input (the
// final watermark, or Finish) each side's rows are laid out by key and
// time, their encodings copied in that order (ihSide.byKey), and the
// join walks both key by key, front to back: a left row's first match
// is where the one before it started. No timers, no cache cleanup and
// no sort of the input: a row costs a key lookup and its matches,
// whatever the bounds or the number of rows a key holds.
//
// The left rows are held rather than joined as they come after a right
// input read first (a regular batch join's runtime.UnionNode.BuildFirst):
// a self-join's two inputs share one source, whose left rows the union
// would then hold as rows until the right input ends, several times
// the memory of their encoding here. A self-join (SetSameInputs: both
// inputs one node of the graph, so the same rows, the barriers of a
// checkpoint aligned between them) holds each row once, for both sides.
//
// Its snapshot is that of the sortop.TimeSorted interval join that ran
// batch interval joins before: the rows held (side, row.AppendRow; a
// column the join does not hold NULL, which the sorted join reads no
// more than this one does), then the state of the streaming join it
// wraps (inner), which sees only the rows of a NULL time (it drops and
// counts them, or pads a left one) and so holds no rows. A checkpoint
// of either restores into the other: both hold the rows that no output
// came of yet.
type IntervalHashJoin struct {
	operator.Widening
	spec  IntervalJoinSpec
	inner operator.TwoInput
	index *state.KeyIDs
	// sides are the rows held by side; a self-join's are all in
	// sides[0], those of a NULL key joining no right row.
	sides [2]ihSide
	// cols are the columns held and how they are encoded (holdCols).
	cols ihCols
	// same: SetSameInputs was called; self: the rows are held once for
	// both sides (same, and no restore of rows held by side).
	same, self bool
	views      [2]row.Row // a held row decoded, by side
	joined     bool       // the end came: every row held was joined
	narrowRow  row.Row    // a row's held columns, for its encoding
	kbuf       []byte
	nkeys      int32 // key ids handed out
	nullKeys   int   // a self-join's rows held of a NULL key (left only)
	// seen are a self-join's rows come by input: the rows held are
	// those of both sides when both inputs passed as many (aligned).
	seen [2]int64
	// intKey: the single key is of an integer-like type on both sides
	// (intKeyType): its values' ids are in ints, no key encoded. A
	// value that is not a plain integer of the key's type (plainInt)
	// has a key of another encoding, which no value here has: it takes
	// the shared index.
	intKey  bool
	keyType row.TypeID
	ints    state.IntIndex
	touched uint64    // touch's sum
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

// ihRow is a held row: its time and its encoding's offset.
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
	j := &IntervalHashJoin{spec: spec, inner: inner, index: state.NewKeyIDs()}
	lk, rk := spec.LeftKeys, spec.RightKeys
	if len(lk) == 1 && len(spec.LeftTypes) > lk[0] && len(spec.RightTypes) > rk[0] &&
		spec.LeftTypes[lk[0]] == spec.RightTypes[rk[0]] && intKeyType(spec.LeftTypes[lk[0]]) {
		j.intKey, j.keyType = true, spec.LeftTypes[lk[0]]
	}
	j.setSelf(false)
	return j
}

// SetSameInputs tells the join, before its first row, that its two
// inputs are one node of the graph (a self-join: FROM t a JOIN t b):
// each row comes on both, and at a checkpoint both passed the same
// rows. The join then holds the rows of its left input for both sides
// when both sides read them alike (the same keys and time column), and
// of the right input only hands a NULL time's rows to its inner join.
func (j *IntervalHashJoin) SetSameInputs() {
	s := &j.spec
	j.same = s.LeftWidth == s.RightWidth && s.LeftTime == s.RightTime && slices.Equal(s.LeftKeys, s.RightKeys) &&
		slices.Equal(s.LeftTypes, s.RightTypes)
	j.setSelf(j.same)
}

// HoldsOnce reports whether the join holds each row once for both
// sides (SetSameInputs took).
func (j *IntervalHashJoin) HoldsOnce() bool { return j.self }

// setSelf holds the rows once for both sides, or each side's apart.
func (j *IntervalHashJoin) setSelf(self bool) {
	j.self = self
	j.cols = holdCols(&j.spec, self)
	j.narrowRow = make(row.Row, max(len(j.cols.keep[0]), len(j.cols.keep[1])))
	j.views = [2]row.Row{make(row.Row, j.spec.LeftWidth), make(row.Row, j.spec.RightWidth)}
}

// touch reads the slot each row's integer key (column col) starts at,
// before the rows are held one by one: independent loads, which the
// processor overlaps, where a lookup a row waits for each one's cache
// miss in turn (a table of many keys outgrows the cache).
func (j *IntervalHashJoin) touch(col int, cs []row.Change) {
	if j.ints.Len() == 0 {
		return
	}
	sum := uint64(0)
	for i := range cs {
		r := cs[i].Row
		if len(r) <= col || !plainInt(r[col], j.keyType) {
			continue
		}
		sum += j.ints.Touch(uint64(r[col].Int64()))
	}
	j.touched += sum // kept, so that the reads are not optimized away
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
	if j.self {
		j.seen[input] += int64(len(in.Changes))
	}
	if err := j.process(input, in, out); err != nil {
		return err
	}
	if j.budget > 0 && j.sortedJoin != nil && j.StateBytes() > j.budget/2 && j.aligned() {
		return j.toSorted(out)
	}
	return nil
}

// aligned reports whether the rows held are those each side passed: a
// self-join's inputs passed the same rows (a checkpoint's barriers align
// them; between two, either one may be ahead, and the rows the right
// input is ahead by are not held yet). The sorted join takes its rows
// when they are: a batch later, at most, as both inputs go on.
func (j *IntervalHashJoin) aligned() bool { return !j.self || j.seen[0] == j.seen[1] }

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
	for _, side := range []int{1, 0} {
		err := j.eachHeld(side, func(r row.Row) error {
			// A row of its own: the sort keeps it past the arena.
			b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r.Clone()})
			if len(b.Changes) == 1024 {
				return flush(side)
			}
			return nil
		})
		if err == nil {
			err = flush(side)
		}
		if err != nil {
			return err
		}
	}
	*j = IntervalHashJoin{Widening: j.Widening, spec: j.spec, inner: j.inner, index: state.NewKeyIDs(), fallback: fb}
	return nil
}

func (j *IntervalHashJoin) process(input int, in *row.Batch, out operator.Emitter) error {
	tc := [2]int{j.spec.LeftTime, j.spec.RightTime}[input]
	if j.intKey && !(j.self && input == 1) {
		j.touch([2][]int{j.spec.LeftKeys, j.spec.RightKeys}[input][0], in.Changes)
	}
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

// hold keeps r, of side input and of a time, until the end. A right row
// with a NULL key joins no row; a self-join's left input holds its rows
// for both sides.
func (j *IntervalHashJoin) hold(input int, r row.Row) error {
	if j.joined {
		return errors.New("interval join: input after the end")
	}
	if j.self && input == 1 {
		return nil
	}
	keys, tc := j.spec.LeftKeys, j.spec.LeftTime
	if input == 1 {
		keys, tc = j.spec.RightKeys, j.spec.RightTime
	}
	kid := j.keyID(r, keys)
	if kid < 0 {
		if input == 1 {
			return nil
		}
		j.nullKeys++
	}
	held := r
	if keep := j.cols.keep[input]; keep != nil {
		held = j.narrowRow[:len(keep)]
		for k, c := range keep {
			held[k] = r[c]
		}
	}
	j.sides[input].add(kid, r[tc].Micros(), j.cols.lays[input], j.cols.read[input], held)
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

// keyID returns the id of r's key (its columns cols), adding it: -1
// when a column of it is NULL. Both sides' rows take their key's id as
// they come, so that the end joins key by key.
func (j *IntervalHashJoin) keyID(r row.Row, cols []int) int32 {
	if hasNull(r, cols) {
		return -1
	}
	if j.intKey {
		if v := r[cols[0]]; plainInt(v, j.keyType) {
			k := uint64(v.Int64())
			kid, ok := j.ints.Find(k)
			if !ok {
				kid = j.nkeys
				j.nkeys++
				j.ints.Put(k, kid)
			}
			return kid
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

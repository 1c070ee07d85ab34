package joinop

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// IntervalJoinSpec describes an event-time interval join (Flink's
// RowTimeIntervalJoin): a left row l and a right row r of the same key
// join when
//
//	r[RightTime] + Lower <= l[LeftTime] <= r[RightTime] + Upper
//
// (times in microseconds) and the residual holds. The output row is the
// left row followed by the right row.
type IntervalJoinSpec struct {
	Kind                  JoinKind // InnerJoin, LeftJoin, RightJoin or FullJoin
	LeftKeys, RightKeys   []int
	LeftWidth, RightWidth int
	// LeftTypes and RightTypes are the columns' types, for the layout of
	// the cached rows (row.Layout); nil: any (every value tagged).
	LeftTypes, RightTypes []row.TypeID
	LeftTime, RightTime   int
	Lower, Upper          int64
	// Residual, if set, is the rest of the ON condition, evaluated on the
	// joined row.
	Residual func(joined row.Row) (bool, error)
	// Sorted: a batch run whose input comes in time order from a
	// sortop.TimeSorted, whose watermarks say no earlier row follows.
	// The clock is then the watermark itself, not Flink's operator time
	// (never below 0), so rows before 1970 join as the regular join of
	// a batch run joins them.
	Sorted bool
	// Output, if set, is the columns of the joined row (left then
	// right) the join emits, in their order: the projection of a Calc
	// that only picks columns, done by the join (as JoinSpec.Output; the
	// planner sets it for a join whose one reader is such a Calc; a
	// batch IntervalHashJoin projects as this join does). A joined row
	// is then built of those columns only, the other side's cached row
	// decoded into scratch rather than into a whole joined row; a padded
	// row is projected as it is emitted. The state (the input rows) is
	// the same with or without it.
	Output []int
}

// SortedWatermark is the join's watermark once every row before time
// next was seen (sortop.TimeSorted): no later row is behind it.
func (s *IntervalJoinSpec) SortedWatermark(next int64) int64 { return next - 1 }

// OutputDelay is how far the join holds back the watermark it forwards:
// a row may be emitted that long after the watermark passed its time
// (Flink's getMaxOutputDelay with an allowed lateness of 0).
func (s *IntervalJoinSpec) OutputDelay() int64 { return max(-s.Lower, s.Upper) }

// IntervalJoin is an event-time interval join. It follows Flink's
// TimeIntervalJoin step by step, so that late rows join (or not) as they
// do there: a row joins the other side's cached rows within its bounds,
// dropping those the watermark has expired; it is cached while rows of
// the other side may still match it; a key's cache is cleaned by a timer
// at the first cached row's time plus its relative window, half the
// window and 1 µs; an outer side's row that never matched is emitted
// padded with NULLs when it is cleaned, or at once when it arrives too
// late to be cached. The watermark both inputs passed is the clock
// (non-negative, as Flink's operator time); rows are never dropped.
type IntervalJoin struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	spec              IntervalJoinSpec
	outer             [2]bool
	relSize           [2]int64 // Flink's leftRelativeSize, rightRelativeSize
	minClean          int64
	index             *state.KeyIDs // key -> id
	keys              []ijKey       // by id
	// intKey: the single key is of an integer-like type on both sides
	// (intKeyType): ints finds a plain value's id, without encoding it,
	// hashing the bytes and comparing them in another array (a third of
	// a streaming join's CPU went there). It is a cache: index stays the
	// truth (snapshots, key groups), a value missed here takes it and is
	// added, and a key the join forgets leaves both. On the Go heap (no
	// OffHeap): a restore replaces the join by value.
	intKey  bool
	keyType row.TypeID
	ints    state.IntIndex
	touched int64 // touch's sum
	sides   [2]ijSide
	// timers are per side the key ids by the time of their cleanup
	// timer: a side's are set mostly in time order, as its rows come.
	timers [2]ijTimers
	wm     int64
	// expiration is Flink's leftExpirationTime and rightExpirationTime:
	// shared by all keys, an approximation of each cache's oldest time.
	expiration [2]int64
	size       int64
	nullTimes  int64
	kbuf, fbuf []byte
	slab       rowSlab // the joined rows'
	// view is per side a cached row decoded (match with Output), full
	// a whole joined row the residual reads before it is projected.
	view [2]row.Row
	full row.Row
	// read is per side how many of a cached row's leading columns a
	// match with Output reads (those up to its last one Output picks);
	// 0 without Output or with a residual, which reads the whole row.
	read [2]int
	text row.Text // the strings of rows decoded from heads
	hbuf [8]byte  // a head's bytes, decoded
	// As a worker of several (join_interval_groups.go): seen is, by
	// change of the whole batch, the other side's expiration time one
	// instance had before it, when seenOn; moved says which expiration
	// times the last watermark moved.
	seen   []int64
	seenOn bool
	moved  [2]bool
	due    []ijTimer // Watermark's scratch
	// idle lists the keys forget marked idle (some may be back in use),
	// idleN counts those idle.
	idle  []int32
	idleN int
	same  bool // SetSameInputs took
}

var (
	_ operator.TwoInput        = (*IntervalJoin)(nil)
	_ operator.Snapshotter     = (*IntervalJoin)(nil)
	_ operator.StateSizer      = (*IntervalJoin)(nil)
	_ operator.Counters        = (*IntervalJoin)(nil)
	_ operator.WatermarkHolder = (*IntervalJoin)(nil)
)

// NewIntervalJoin returns an interval join with empty state.
func NewIntervalJoin(spec IntervalJoinSpec) *IntervalJoin {
	j := &IntervalJoin{spec: spec, index: state.NewKeyIDs(), wm: operator.NoWatermark}
	j.relSize = [2]int64{-spec.Lower, spec.Upper}
	for s, t := range [2][]row.TypeID{spec.LeftTypes, spec.RightTypes} {
		w := [2]int{spec.LeftWidth, spec.RightWidth}[s]
		if len(t) != w {
			t = make([]row.TypeID, w) // Null: a column of no known type
		}
		j.sides[s].store.Layout = row.NewLayout(t)
		j.sides[s].store.Churn = true // the rows of a window
	}
	j.minClean = (j.relSize[0] + j.relSize[1]) / 2
	if spec.Output != nil && spec.Residual == nil {
		for _, c := range spec.Output {
			if c < spec.LeftWidth {
				j.read[0] = max(j.read[0], c+1)
			} else {
				j.read[1] = max(j.read[1], c-spec.LeftWidth+1)
			}
		}
	}
	lk, rk := spec.LeftKeys, spec.RightKeys
	if len(lk) == 1 && len(spec.LeftTypes) > lk[0] && len(spec.RightTypes) > rk[0] &&
		spec.LeftTypes[lk[0]] == spec.RightTypes[rk[0]] && intKeyType(spec.LeftTypes[lk[0]]) {
		j.intKey, j.keyType = true, spec.LeftTypes[lk[0]]
	}
	if spec.Sorted {
		// Flink starts both at 0, its operator time's floor.
		j.expiration = [2]int64{operator.NoWatermark, operator.NoWatermark}
	}
	switch spec.Kind {
	case LeftJoin:
		j.outer[0] = true
	case RightJoin:
		j.outer[1] = true
	case FullJoin:
		j.outer = [2]bool{true, true}
	}
	return j
}

// HoldWatermark implements WatermarkHolder.
func (j *IntervalJoin) HoldWatermark(wm int64) int64 {
	if wm == operator.NoWatermark || wm == operator.MaxWatermark {
		return wm
	}
	return wm - j.spec.OutputDelay()
}

func (j *IntervalJoin) Finish(operator.Emitter) error { return nil }

// Dropped implements Counters: rows whose time attribute is NULL (an
// outer side's are emitted padded, the others dropped).
func (j *IntervalJoin) Dropped() (int64, string) { return j.nullTimes, "NULL time attribute" }

// StateEntries implements StateSizer: the rows cached on both sides.
func (j *IntervalJoin) StateEntries() int64 { return j.size }

func (j *IntervalJoin) opTime() int64 {
	if j.spec.Sorted {
		return j.wm
	}
	return max(j.wm, 0)
}

func (j *IntervalJoin) expire(opTime, rel int64) int64 {
	if opTime == operator.MaxWatermark || opTime == operator.NoWatermark {
		return opTime
	}
	// A lower bound above zero makes rel negative: near the largest
	// watermark the difference wraps around below every cached row's
	// time, and their cleanup timers would fire for ever. Saturate.
	e := opTime - rel - 1
	switch {
	case rel < 0 && e < opTime:
		return operator.MaxWatermark
	case rel >= 0 && e > opTime:
		return operator.NoWatermark
	}
	return e
}

func (j *IntervalJoin) padded(side int, r row.Row) row.Row {
	return j.project(padRow(side, r, j.spec.LeftWidth, j.spec.RightWidth))
}

// project returns the columns Output of the joined or padded row jr,
// jr itself without Output.
func (j *IntervalJoin) project(jr row.Row) row.Row { return j.slab.pick(jr, j.spec.Output) }

// ProcessInput implements TwoInput.
func (j *IntervalJoin) ProcessInput(input int, in *row.Batch, out operator.Emitter) error {
	share, _ := in.Origin.(operator.ShareOrigin)
	defer func() { j.seenOn = false }()
	if j.same && input == 1 {
		// Its rows were added on both sides as they came on input 0.
		return nil
	}
	return operator.EachChange("interval join", in, out, func(i int, c *row.Change) error {
		if !c.Kind.IsAdd() {
			return fmt.Errorf("input %d sent %s: an interval join takes insert-only input", input, c.Kind)
		}
		if j.intKey {
			if a, b, ok := aheadOf(i, len(in.Changes)); ok {
				j.touch(input, in.Changes[a:b], a-i)
				if j.same {
					j.touch(1, in.Changes[a:b], a-i)
				}
			}
		}
		if j.same {
			// The row on the left, then at once on the right, its
			// key's state still in the cache.
			if err := j.add(0, c.Row, 0, out); err != nil {
				return err
			}
			return j.add(1, c.Row, 0, out)
		}
		seen := int64(0)
		if j.seenOn && share != nil {
			if at := share.InputChange(i); at >= 0 && at < len(j.seen) {
				seen = j.seen[at]
			}
		}
		return j.add(input, c.Row, seen, out)
	})
}

// SetSameInputs tells the join, before its first row, that its two
// inputs are one node of the graph (a self-join: FROM t a JOIN t b),
// its only instance (not a worker of several): each row comes on both,
// and at a checkpoint both passed the same rows. The join then adds
// each row as it comes on the left input to the left side and at once
// to the right, and passes over the right input's batches: the second
// add finds the lines the first read (the key, its rows) in the cache,
// where a batch's rows on the right came after all of them on the left
// and found them gone. It is an order Flink's join may see too (its
// two inputs' rows interleaved as they come): the rows that come in
// time (not behind the watermark) join the same rows either way. The
// state is the same as without it, the same per side.
func (j *IntervalJoin) SetSameInputs() {
	s := &j.spec
	j.same = s.LeftWidth == s.RightWidth && slices.Equal(s.LeftTypes, s.RightTypes)
}

// SameInputs reports whether SetSameInputs took.
func (j *IntervalJoin) SameInputs() bool { return j.same }

// add joins and caches r, of side s. As a worker of several, seen is
// the other side's expiration time one instance had before r
// (SeeInput), which has moved it already.
func (j *IntervalJoin) add(s int, r row.Row, seen int64, out operator.Emitter) error {
	o := 1 - s
	timeCol := j.spec.LeftTime
	if s == 1 {
		timeCol = j.spec.RightTime
	}
	if r[timeCol].IsNull() {
		j.nullTimes++
		if j.outer[s] {
			out.Emit(row.Insert, j.padded(s, r))
		}
		return nil
	}
	if j.spec.Lower > j.spec.Upper {
		// No row can ever match (Flink plans this as a union of the
		// padded outer sides).
		if j.outer[s] {
			out.Emit(row.Insert, j.padded(s, r))
		}
		return nil
	}
	t := r[timeCol].Micros()
	opTime := j.opTime()
	lower, upper := t-j.relSize[o], t+j.relSize[s]
	kid := j.keyOf(s, r)
	j.revive(kid)
	emitted := false
	before, exp := j.expiration[o], j.expire(opTime, j.relSize[o])
	if j.seenOn {
		before = seen
	} else if before < upper {
		j.expiration[o] = exp
	}
	if before < upper {
		other := &j.sides[o]
		for rid := range j.rows(kid, o) {
			e := &other.ents[rid]
			if e.at >= lower && e.at <= upper {
				ok, err := j.match(s, kid, r, rid, out)
				if err != nil {
					return err
				}
				emitted = emitted || ok
				e.emitted = e.emitted || ok
			}
			if e.at <= exp {
				j.drop(kid, o, rid, out)
			}
		}
	}
	if opTime < upper {
		j.cache(kid, s, r, t, emitted)
		if j.keys[kid].timer[s] == 0 {
			j.setTimer(kid, s, t)
		}
	} else if !emitted && j.outer[s] {
		out.Emit(row.Insert, j.padded(s, r))
	}
	j.forget(kid)
	return nil
}

// match joins this (of side s) with the other side's cached row rid and
// emits the joined row when the key has no NULL and the residual holds.
func (j *IntervalJoin) match(s int, kid int32, this row.Row, rid int32, out operator.Emitter) (bool, error) {
	if j.keys[kid].null {
		return false, nil
	}
	if j.spec.Output != nil && j.spec.Residual == nil {
		j.matchPicked(s, this, rid, out)
		return true, nil
	}
	lw, w := j.spec.LeftWidth, j.spec.LeftWidth+j.spec.RightWidth
	var jr row.Row
	if j.spec.Output != nil {
		// The residual reads the whole row, which is then projected.
		if len(j.full) != w {
			j.full = make(row.Row, w)
		}
		jr = j.full
	} else {
		jr = j.slab.get(w)
	}
	if s == 0 {
		copy(jr, this)
		j.sides[1].store.DecodeInto(jr[lw:], rid)
	} else {
		copy(jr[lw:], this)
		j.sides[0].store.DecodeInto(jr[:lw], rid)
	}
	if j.spec.Residual != nil {
		ok, err := j.spec.Residual(jr)
		if err != nil || !ok {
			if j.spec.Output == nil {
				j.slab.unget(jr) // carved again by the next match
			}
			return false, err
		}
	}
	out.Emit(row.Insert, j.project(jr))
	return true, nil
}

// matchPicked emits the columns Output of this (of side s) joined with
// the other side's cached row rid, decoded into a scratch row: no whole
// joined row is built.
func (j *IntervalJoin) matchPicked(s int, this row.Row, rid int32, out operator.Emitter) {
	o := 1 - s
	other := j.view[o]
	if other == nil {
		other = make(row.Row, [2]int{j.spec.LeftWidth, j.spec.RightWidth}[o])
		j.view[o] = other
	}
	j.decodeRead(o, other, rid)
	left, right := this, other
	if s == 1 {
		left, right = other, this
	}
	lw := j.spec.LeftWidth
	jr := j.slab.get(len(j.spec.Output))
	for k, c := range j.spec.Output {
		if c < lw {
			jr[k] = left[c]
		} else {
			jr[k] = right[c-lw]
		}
	}
	out.Emit(row.Insert, jr)
}

// decodeRead decodes side o's cached row rid's first read[o] columns
// into dst (0: none, when Output picks none of that side), from its
// head when it has one.
func (j *IntervalJoin) decodeRead(o int, dst row.Row, rid int32) {
	n := j.read[o]
	if n == 0 {
		return
	}
	st := &j.sides[o].store
	if e := &j.sides[o].ents[rid]; e.hasHead {
		// Into the join's buffer: one on the stack would escape (the
		// decode may alias its bytes), an allocation a match.
		binary.LittleEndian.PutUint64(j.hbuf[:], e.head)
		st.Layout.DecodeFirst(dst, n, j.hbuf[:], &j.text)
		return
	}
	st.Layout.DecodeFirst(dst, n, st.Bytes(rid), &j.text)
}

// drop removes side's row rid of key kid, emitting it padded when it
// never joined and side is outer.
func (j *IntervalJoin) drop(kid int32, side int, rid int32, out operator.Emitter) {
	if j.outer[side] && !j.sides[side].ents[rid].emitted {
		lw := j.spec.LeftWidth
		pr := make(row.Row, lw+j.spec.RightWidth) // zero Values are NULL
		if side == 0 {
			j.sides[0].store.DecodeInto(pr[:lw], rid)
		} else {
			j.sides[1].store.DecodeInto(pr[lw:], rid)
		}
		out.Emit(row.Insert, j.project(pr))
	}
	j.uncache(kid, side, rid)
}

func (j *IntervalJoin) setTimer(kid int32, side int, t int64) {
	at := t + j.relSize[side] + j.minClean + 1
	j.keys[kid].timer[side] = at
	j.timers[side].Push(ijTimer{at: at, kid: kid})
}

// nextTimer returns the side of the earliest timer at or before wm, -1
// for none.
func (j *IntervalJoin) nextTimer(wm int64) int {
	side, at := -1, wm
	for s := range j.timers {
		if j.timers[s].Len() > 0 && j.timers[s].Top() <= at {
			side, at = s, j.timers[s].Top()
		}
	}
	return side
}

// Watermark fires the cleanup timers the watermark passed.
func (j *IntervalJoin) Watermark(wm int64, out operator.Emitter) error {
	if wm <= j.wm {
		return nil
	}
	j.wm = wm
	j.moved = [2]bool{}
	opTime := j.opTime()
	// The timers due, in the order they fire. Firing one sets none that
	// is due (a timer is set past the clock: setTimer), so they are all
	// known before the first fires, and touchDue can read ahead.
	due := j.due[:0]
	for side := j.nextTimer(wm); side >= 0; side = j.nextTimer(wm) {
		due = append(due, j.timers[side].Pop())
	}
	j.due = due[:0]
	for i, t := range due {
		if a, b, ok := aheadOf(i, len(due)); ok {
			j.touchDue(due[a:b])
		}
		at, kid := t.at, t.kid
		if !j.keys[kid].used {
			continue
		}
		// Flink's order: the timer on the left stream cleans the right
		// cache, then the one on the right stream the left cache.
		for _, side := range []int{1, 0} {
			if j.keys[kid].timer[side] == at {
				j.expiration[side] = j.expire(opTime, j.relSize[side])
				j.moved[side] = true
				j.removeExpired(kid, side, j.expiration[side], out)
			}
		}
		j.forget(kid)
	}
	return nil
}

func (j *IntervalJoin) removeExpired(kid int32, side int, exp int64, out operator.Emitter) {
	earliest, found := int64(0), false
	for rid := range j.rows(kid, side) {
		if t := j.sides[side].ents[rid].at; t <= exp {
			j.drop(kid, side, rid, out)
		} else if !found || t < earliest {
			earliest, found = t, true
		}
	}
	if found {
		j.setTimer(kid, side, earliest)
	} else {
		j.keys[kid].timer[side] = 0
	}
}

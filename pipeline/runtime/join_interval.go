package runtime

import (
	"container/heap"
	"encoding/binary"
	"fmt"

	"github.com/etld/etld/pipeline/row"
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
	LeftTime, RightTime   int
	Lower, Upper          int64
	// Residual, if set, is the rest of the ON condition, evaluated on the
	// joined row.
	Residual func(joined row.Row) (bool, error)
}

// OutputDelay is how far the join holds back the watermark it forwards:
// a row may be emitted that long after the watermark passed its time
// (Flink's getMaxOutputDelay with an allowed lateness of 0).
func (s *IntervalJoinSpec) OutputDelay() int64 { return max(-s.Lower, s.Upper) }

// ijRow is a cached row and whether it was joined at least once (an outer
// side's row that never was is emitted NULL-padded when it expires).
type ijRow struct {
	row     row.Row
	emitted bool
}

// ijKey is the state of one join key: each side's rows by their time, and
// each side's cleanup timer (0: none), as Flink keeps them per key.
type ijKey struct {
	key   string
	null  bool // a NULL in the key: its rows never match
	cache [2]map[int64][]*ijRow
	timer [2]int64
}

type ijTimer struct {
	at  int64
	key string
}

type ijTimers []ijTimer

func (h ijTimers) Len() int           { return len(h) }
func (h ijTimers) Less(i, j int) bool { return h[i].at < h[j].at }
func (h ijTimers) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ijTimers) Push(x any)        { *h = append(*h, x.(ijTimer)) }
func (h *ijTimers) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

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
	spec     IntervalJoinSpec
	outer    [2]bool
	relSize  [2]int64 // Flink's leftRelativeSize, rightRelativeSize
	minClean int64
	keys     map[string]*ijKey
	timers   ijTimers
	wm       int64
	// expiration is Flink's leftExpirationTime and rightExpirationTime:
	// shared by all keys, an approximation of each cache's oldest time.
	expiration [2]int64
	size       int64
	nullTimes  int64
	kbuf       []byte
}

var (
	_ Operator        = (*IntervalJoin)(nil)
	_ TwoInput        = (*IntervalJoin)(nil)
	_ Snapshotter     = (*IntervalJoin)(nil)
	_ StateSizer      = (*IntervalJoin)(nil)
	_ Counters        = (*IntervalJoin)(nil)
	_ WatermarkHolder = (*IntervalJoin)(nil)
)

// WatermarkHolder is an operator that forwards a watermark behind the one
// it received (an interval join emits rows older than its watermark).
type WatermarkHolder interface {
	HoldWatermark(wm int64) int64
}

// NewIntervalJoin returns an interval join with empty state.
func NewIntervalJoin(spec IntervalJoinSpec) *IntervalJoin {
	j := &IntervalJoin{spec: spec, keys: map[string]*ijKey{}, wm: NoWatermark}
	j.relSize = [2]int64{-spec.Lower, spec.Upper}
	j.minClean = (j.relSize[0] + j.relSize[1]) / 2
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
	if wm == NoWatermark || wm == MaxWatermark {
		return wm
	}
	return wm - j.spec.OutputDelay()
}

// Process is not used: a join has two inputs (ProcessInput).
func (j *IntervalJoin) Process(*row.Batch, Emitter) error {
	return fmt.Errorf("interval join: a batch without its input number")
}

func (j *IntervalJoin) Finish(Emitter) error { return nil }

// Dropped implements Counters: rows whose time attribute is NULL (an
// outer side's are emitted padded, the others dropped).
func (j *IntervalJoin) Dropped() (int64, string) { return j.nullTimes, "NULL time attribute" }

// StateEntries implements StateSizer: the rows cached on both sides.
func (j *IntervalJoin) StateEntries() int64 { return j.size }

func (j *IntervalJoin) opTime() int64 { return max(j.wm, 0) }

func (j *IntervalJoin) expire(opTime, rel int64) int64 {
	if opTime == MaxWatermark {
		return MaxWatermark
	}
	return opTime - rel - 1
}

func (j *IntervalJoin) keyOf(side int, r row.Row) *ijKey {
	idx := j.spec.LeftKeys
	if side == 1 {
		idx = j.spec.RightKeys
	}
	null := false
	for _, i := range idx {
		null = null || r[i].IsNull()
	}
	j.kbuf = row.KeyOf(j.kbuf[:0], r, idx)
	k := j.keys[string(j.kbuf)]
	if k == nil {
		k = &ijKey{key: string(j.kbuf), null: null}
		j.keys[k.key] = k
	}
	return k
}

func (j *IntervalJoin) joined(l, r row.Row) row.Row {
	out := make(row.Row, 0, len(l)+len(r))
	return append(append(out, l...), r...)
}

func (j *IntervalJoin) padded(side int, r row.Row) row.Row {
	return padRow(side, r, j.spec.LeftWidth, j.spec.RightWidth)
}

// ProcessInput implements TwoInput.
func (j *IntervalJoin) ProcessInput(input int, in *row.Batch, out Emitter) error {
	tr := trackerOf(in, out)
	for i, c := range in.Changes {
		if tr != nil {
			tr.at(i)
		}
		if !c.Kind.IsAdd() {
			return fmt.Errorf("interval join: input %d sent %s: an interval join takes insert-only input", input, c.Kind)
		}
		if err := j.add(input, c.Row, out); err != nil {
			return err
		}
	}
	return nil
}

func (j *IntervalJoin) add(s int, r row.Row, out Emitter) error {
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
	k := j.keyOf(s, r)
	emitted := false
	if j.expiration[o] < upper {
		j.expiration[o] = j.expire(opTime, j.relSize[o])
		for ot, rows := range k.cache[o] {
			if ot >= lower && ot <= upper {
				for _, e := range rows {
					ok, err := j.match(s, k, r, e.row, out)
					if err != nil {
						return err
					}
					emitted = emitted || ok
					e.emitted = e.emitted || ok
				}
			}
			if ot <= j.expiration[o] {
				j.drop(k, o, ot, rows, out)
			}
		}
	}
	if opTime < upper {
		if k.cache[s] == nil {
			k.cache[s] = map[int64][]*ijRow{}
		}
		k.cache[s][t] = append(k.cache[s][t], &ijRow{row: r, emitted: emitted})
		j.size++
		if k.timer[s] == 0 {
			j.setTimer(k, s, t)
		}
	} else if !emitted && j.outer[s] {
		out.Emit(row.Insert, j.padded(s, r))
	}
	j.forget(k)
	return nil
}

// match joins this (of side s) with other and emits the joined row when
// the key has no NULL and the residual holds.
func (j *IntervalJoin) match(s int, k *ijKey, this, other row.Row, out Emitter) (bool, error) {
	if k.null {
		return false, nil
	}
	l, r := this, other
	if s == 1 {
		l, r = other, this
	}
	jr := j.joined(l, r)
	if j.spec.Residual != nil {
		ok, err := j.spec.Residual(jr)
		if err != nil || !ok {
			return false, err
		}
	}
	out.Emit(row.Insert, jr)
	return true, nil
}

// drop removes side's rows of time t, emitting the unmatched ones padded
// when side is outer.
func (j *IntervalJoin) drop(k *ijKey, side int, t int64, rows []*ijRow, out Emitter) {
	if j.outer[side] {
		for _, e := range rows {
			if !e.emitted {
				out.Emit(row.Insert, j.padded(side, e.row))
			}
		}
	}
	j.size -= int64(len(rows))
	delete(k.cache[side], t)
}

func (j *IntervalJoin) setTimer(k *ijKey, side int, t int64) {
	at := t + j.relSize[side] + j.minClean + 1
	k.timer[side] = at
	heap.Push(&j.timers, ijTimer{at: at, key: k.key})
}

// forget removes a key that holds nothing.
func (j *IntervalJoin) forget(k *ijKey) {
	if len(k.cache[0]) == 0 && len(k.cache[1]) == 0 && k.timer == [2]int64{} {
		delete(j.keys, k.key)
	}
}

// Watermark fires the cleanup timers the watermark passed.
func (j *IntervalJoin) Watermark(wm int64, out Emitter) error {
	if wm <= j.wm {
		return nil
	}
	j.wm = wm
	opTime := j.opTime()
	for len(j.timers) > 0 && j.timers[0].at <= wm {
		t := heap.Pop(&j.timers).(ijTimer)
		k := j.keys[t.key]
		if k == nil {
			continue
		}
		// Flink's order: the timer on the left stream cleans the right
		// cache, then the one on the right stream the left cache.
		for _, side := range []int{1, 0} {
			if k.timer[side] == t.at {
				j.expiration[side] = j.expire(opTime, j.relSize[side])
				j.removeExpired(k, side, j.expiration[side], out)
			}
		}
		j.forget(k)
	}
	return nil
}

func (j *IntervalJoin) removeExpired(k *ijKey, side int, exp int64, out Emitter) {
	earliest, found := int64(0), false
	for t, rows := range k.cache[side] {
		if t <= exp {
			j.drop(k, side, t, rows, out)
		} else if !found || t < earliest {
			earliest, found = t, true
		}
	}
	if found {
		j.setTimer(k, side, earliest)
	} else {
		k.timer[side] = 0
		k.cache[side] = nil
	}
}

const intervalJoinStateVersion = 1

// Snapshot implements Snapshotter: the clock, the two expiration times,
// then per key its bytes, NULL flag, and per side its timer and rows by
// time (row, emitted).
func (j *IntervalJoin) Snapshot() ([]byte, error) {
	buf := []byte{intervalJoinStateVersion}
	buf = binary.AppendVarint(buf, j.wm)
	buf = binary.AppendVarint(buf, j.expiration[0])
	buf = binary.AppendVarint(buf, j.expiration[1])
	buf = binary.AppendUvarint(buf, uint64(j.nullTimes))
	buf = binary.AppendUvarint(buf, uint64(len(j.keys)))
	for _, k := range j.keys {
		buf = row.AppendString(buf, k.key)
		buf = append(buf, b2byte(k.null))
		for side := range 2 {
			buf = binary.AppendVarint(buf, k.timer[side])
			buf = binary.AppendUvarint(buf, uint64(len(k.cache[side])))
			for t, rows := range k.cache[side] {
				buf = binary.AppendVarint(buf, t)
				buf = binary.AppendUvarint(buf, uint64(len(rows)))
				for _, e := range rows {
					buf = row.AppendRow(buf, e.row)
					buf = append(buf, b2byte(e.emitted))
				}
			}
		}
	}
	return buf, nil
}

func b2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Restore implements Snapshotter.
func (j *IntervalJoin) Restore(state []byte) error {
	d := row.NewDecoder(state)
	if v := d.Byte(); v != intervalJoinStateVersion {
		return fmt.Errorf("interval join: state version %d, want %d", v, intervalJoinStateVersion)
	}
	wm, e0, e1 := d.Varint(), d.Varint(), d.Varint()
	nullTimes := int64(d.Uvarint())
	keys := map[string]*ijKey{}
	var timers ijTimers
	var size int64
	widths := [2]int{j.spec.LeftWidth, j.spec.RightWidth}
	n := d.Count(4)
	for range n {
		k := &ijKey{key: d.Str(), null: d.Byte() == 1}
		for side := range 2 {
			k.timer[side] = d.Varint()
			if k.timer[side] != 0 {
				timers = append(timers, ijTimer{at: k.timer[side], key: k.key})
			}
			nt := d.Count(2)
			if nt > 0 {
				k.cache[side] = make(map[int64][]*ijRow, nt)
			}
			for range nt {
				t := d.Varint()
				nr := d.Count(2)
				rows := make([]*ijRow, 0, nr)
				for range nr {
					r := d.Row()
					em := d.Byte() == 1
					if d.Err() == nil && len(r) != widths[side] {
						d.Fail("row of %d columns on side %d, want %d", len(r), side, widths[side])
					}
					rows = append(rows, &ijRow{row: r, emitted: em})
				}
				k.cache[side][t] = rows
				size += int64(nr)
			}
		}
		if d.Err() != nil {
			break
		}
		keys[k.key] = k
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("interval join: %w", err)
	}
	heap.Init(&timers)
	j.wm, j.expiration, j.nullTimes = wm, [2]int64{e0, e1}, nullTimes
	j.keys, j.timers, j.size = keys, timers, size
	return nil
}

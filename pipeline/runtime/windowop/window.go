package windowop

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// slice is the state of one slice of time: a TUMBLE window, a HOP slide,
// a CUMULATE step. A row is accumulated into one slice, however many
// windows hold it (Flink's slicing); a HOP window merges its slices when it
// fires. Groups are kept in the order they were first seen.
type slice struct {
	end int64  // on the windows' clock: local wall clock for LTZ in a Zone
	seq uint32 // the slice's number (WindowAgg.seq), unique while it is open; never 0
	// index maps key id (keyIDs) -> slot; built when first needed
	// (WindowAgg.find) and kept from then on (indexed).
	index   map[int32]int32
	indexed bool
	order   []int32 // slots, first seen first
	kids    []int32 // order's key ids
}

// newSlice opens a slice, numbered apart from every open one.
func (g *WindowAgg) newSlice(end int64) *slice {
	return &slice{end: end, seq: g.nextSeq()}
}

// nextSeq numbers a slice opened or reused.
func (g *WindowAgg) nextSeq() uint32 {
	g.seq++
	if g.seq == 0 { // wrapped: the slices numbered 4 billion slices ago are long gone
		g.seq++
	}
	return g.seq
}

// cycle is one CUMULATE size-long period: shared holds the groups of its
// fired step slices, into which each later window's slice is merged, so
// that a window of n steps costs one merge, not n.
type cycle struct {
	start, next int64 // next: the end of the next window to fire
	shared      slice
}

// WindowAgg is a window aggregate over TUMBLE, HOP or CUMULATE (Flink's
// window TVF aggregation). Each insert-only input row counts in every
// window that holds it; when the watermark reaches a window's end the
// window emits one +I per key, in window_end order and within a window in
// the order keys were first seen, and state no later window needs is
// freed. A row whose windows have all fired is late: dropped and counted
// (Dropped, "late"); a row some of whose windows have fired counts in the
// others.
//
// Output rows: [key columns..., window_start, window_end, window_time,
// aggregate results...] (see WindowColumns).
type WindowAgg struct {
	operator.Widening // a restore retags saved values of widened columns (operator.Widener)
	operator.Late     // reports the rows dropped as late (late_rows)
	spec              WindowSpec
	keys              []int
	opt               WindowOptions
	st                *aggop.Store
	width             int
	wm                int64
	timeID            row.TypeID       // the time attribute's type, from the first row
	slices            map[int64]*slice // by end
	pending           []int64          // TUMBLE/HOP: ends of windows to fire, ascending
	cycles            []*cycle         // CUMULATE, by start
	kids              keyIDs
	// slotKid is, by slot of the store, the id of its key (-1: a free
	// slot); the store keeps no key per slot.
	slotKid []int32
	marks   []int32  // by key id: a slot + 1 while a HOP window merges its slices (markSlots)
	indexed int64    // the entries of the slices' indexes built (find)
	seq     uint32   // the last slice's number (newSlice)
	spare   []*slice // dropped slices, their maps cleared, to reuse
	// The last row's key id, slice and slot: rows of one key, or of no
	// key, in time order find them without a lookup. lastW nil: none.
	lastKey []byte
	lastKid int32
	hasKid  bool
	lastW   *slice
	lastID  int32
	kbuf    []byte
	res     []row.Value
	arena   aggop.RowArena
	dropped int64
	proc    *procClock // processing-time windows (ProcWindowAgg); nil on event time
	batch   batchRows
}

// NewWindowAgg builds the operator; an invalid spec or call (see
// WindowSpec.Validate, AggCall.Validate) is an error.
func NewWindowAgg(w WindowSpec, keys []int, aggs []aggop.AggCall, opt WindowOptions) (*WindowAgg, error) {
	width, err := aggop.InputWidth(keys, aggs)
	if err == nil {
		err = w.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("window aggregate: %w", err)
	}
	return &WindowAgg{
		spec:   w,
		keys:   keys,
		opt:    opt,
		st:     aggop.NewStore(aggs, !opt.Updating, false),
		width:  max(width, w.TimeCol+1),
		wm:     operator.NoWatermark,
		slices: map[int64]*slice{},
		kids:   newKeyIDs(),
		res:    make([]row.Value, len(aggs)),
	}, nil
}

// Dropped counts late rows.
func (g *WindowAgg) Dropped() (int64, string) { return g.dropped, "late" }

// StateEntries implements StateSizer: the groups of open windows (one per
// key and slice) held until the watermark fires them.
func (g *WindowAgg) StateEntries() int64 { return int64(g.st.Slots) - int64(len(g.st.Free)) }

func (g *WindowAgg) Process(in *row.Batch, out operator.Emitter) error {
	if g.proc == nil && !g.opt.Attached && !g.opt.Updating && g.st.Err() == nil {
		return g.processBatch(in) // nothing is emitted: no change to track
	}
	return operator.EachChange("window aggregate", in, out, func(i int, c *row.Change) error {
		g.At(i)
		return g.add(c.Kind, c.Row)
	})
}

// ReleasesInput implements operator.InputReleaser: a row is folded into
// its slice's groups and nothing of it is kept (the key is encoded into
// the key table, values kept are detached copies), so the node gives
// the batch's rows back to the decoders that made them.
func (g *WindowAgg) ReleasesInput() bool { return true }

func (g *WindowAgg) add(k row.Kind, r row.Row) error {
	acc := k == row.Insert || k == row.UpdateAfter
	if g.opt.Updating && g.proc == nil && !g.opt.Attached {
		// A changelog's rows: each change counts as an insert for the
		// time check, then adds or retracts.
		k = row.Insert
	}
	ts, err := g.rowTime(k, r)
	if err != nil {
		return err
	}
	if err := g.st.Check(r); err != nil {
		return err
	}
	g.kbuf = row.KeyOf(g.kbuf[:0], r, g.keys)
	wm := g.wm
	if g.opt.Batch {
		wm = operator.NoWatermark
	}
	if g.opt.Attached {
		return g.addAttached(ts, r, wm)
	}
	w, _, _ := g.place(g.toLocal(ts), wm)
	if w == nil {
		g.dropped++
		g.Drop()
		return nil
	}
	g.st.Update(g.slot(w), r, acc)
	return nil
}

// addAttached counts r in the window whose end it carries: one slice per
// window, fired as a TUMBLE window is.
func (g *WindowAgg) addAttached(end int64, r row.Row, wm int64) error {
	if g.due(end) <= wm {
		g.dropped++
		g.Drop()
		return nil
	}
	w := g.slices[end]
	if w == nil {
		w = g.slice(end)
		g.schedule(end)
	}
	g.st.Update(g.slot(w), r, true)
	return nil
}

func (g *WindowAgg) slide() int64 {
	if g.spec.Kind == Hop {
		return g.spec.Slide
	}
	return g.spec.Size
}

func (g *WindowAgg) slice(end int64) *slice {
	w := g.slices[end]
	if w == nil {
		if n := len(g.spare); n > 0 {
			w, g.spare = g.spare[n-1], g.spare[:n-1]
			w.end, w.seq = end, g.nextSeq()
		} else {
			w = g.newSlice(end)
		}
		g.slices[end] = w
	}
	return w
}

// schedule adds a window end to fire, once.
func (g *WindowAgg) schedule(end int64) {
	n := len(g.pending)
	if n > 0 && g.pending[n-1] < end { // the common case: time moves on
		g.pending = append(g.pending, end)
		return
	}
	if i, ok := slices.BinarySearch(g.pending, end); !ok {
		g.pending = slices.Insert(g.pending, i, end)
	}
}

// cycle returns the CUMULATE cycle starting at start, creating it with its
// first window still to fire.
func (g *WindowAgg) cycle(start, wm int64) *cycle {
	i, ok := slices.BinarySearchFunc(g.cycles, start, func(c *cycle, s int64) int { return cmp.Compare(c.start, s) })
	if ok {
		return g.cycles[i]
	}
	c := &cycle{start: start, next: start + g.spec.Step, shared: slice{seq: g.nextSeq()}}
	for g.due(c.next) <= wm {
		c.next += g.spec.Step
	}
	g.cycles = slices.Insert(g.cycles, i, c)
	return c
}

// Watermark fires every window whose end the watermark has reached.
func (g *WindowAgg) Watermark(wm int64, out operator.Emitter) error {
	if wm <= g.wm || (g.opt.Batch && wm != operator.MaxWatermark) {
		return nil
	}
	g.wm = wm
	return errors.Join(g.fire(out), g.st.Err())
}

// Finish fires what is left. The node sends MaxWatermark before, which
// has fired everything already; Finish makes the end of input final even
// without it. A user aggregate's failure (aggop.Store.Err) fails it.
func (g *WindowAgg) Finish(out operator.Emitter) error {
	g.wm = operator.MaxWatermark
	return errors.Join(g.fire(out), g.st.Err())
}

func (g *WindowAgg) fire(out operator.Emitter) error {
	if g.spec.Kind == Cumulate && !g.opt.Attached {
		for len(g.cycles) > 0 {
			c := g.cycles[0]
			for c.next <= c.start+g.spec.Size && g.due(c.next) <= g.wm {
				if err := g.fireCumulate(c, c.next, out); err != nil {
					return err
				}
				c.next += g.spec.Step
			}
			if c.next <= c.start+g.spec.Size {
				return nil
			}
			g.release(&c.shared)
			g.cycles[0] = nil
			g.cycles = g.cycles[1:]
		}
		return nil
	}
	for len(g.pending) > 0 {
		end := g.pending[0]
		fire := g.fireTime(end)
		if lastMilli(fire) > g.wm {
			return nil
		}
		g.pending = g.pending[1:]
		if err := g.fireHop(end, fire, out); err != nil {
			return err
		}
	}
	return nil
}

// fireHop emits the TUMBLE or HOP window ending at end and frees its first
// slice, which no later window holds.
func (g *WindowAgg) fireHop(end, fire int64, out operator.Emitter) error {
	size, slide := g.spec.Size, g.slide()
	first := end - size + slide
	if first == end || g.opt.Attached { // TUMBLE, HOP with slide = size, a window of its own: nothing to merge
		if w := g.slices[end]; w != nil {
			for _, id := range w.order {
				if err := g.emit(id, end-size, end, fire, out); err != nil {
					return err
				}
			}
		}
		g.dropSlice(end)
		return nil
	}
	// The window's first slice is in no later window: the others merge
	// into its groups (a key it lacks gets a group there, after its
	// own), which the window emits and then frees with the slice. Its
	// groups are then the window's in the order keys were first seen.
	w0 := g.slice(first)
	g.markSlots(w0)
	for e := first + slide; e <= end; e += slide {
		w := g.slices[e]
		if w == nil {
			continue
		}
		for j, id := range w.order {
			kid := w.kids[j]
			m := g.marks[kid] - 1
			if m < 0 {
				m = g.newSlot(w0, kid)
				g.marks[kid] = m + 1
			}
			g.st.MergeAhead(m, id)
		}
	}
	g.unmarkSlots(w0)
	for _, m := range w0.order {
		if err := g.emit(m, end-size, end, fire, out); err != nil {
			return err
		}
	}
	g.dropSlice(first)
	return nil
}

// dropSlice frees the slice ending at end and keeps it to reuse.
func (g *WindowAgg) dropSlice(end int64) {
	if w := g.slices[end]; w != nil {
		g.release(w)
		delete(g.slices, end)
		if len(g.spare) < maxSpareSlices {
			g.spare = append(g.spare, w)
		}
	}
}

// maxSpareSlices bounds the dropped slices kept: a HOP window frees one
// slice when it fires, and the next row opens one.
const maxSpareSlices = 4

// fireCumulate merges the slice ending at end into c's shared groups and
// emits the window [c.start, end).
func (g *WindowAgg) fireCumulate(c *cycle, end int64, out operator.Emitter) error {
	if w := g.slices[end]; w != nil {
		for j, id := range w.order {
			kid := w.kids[j]
			sid, ok := g.find(&c.shared, kid)
			if !ok {
				sid = g.newSlot(&c.shared, kid)
			}
			g.st.Merge(sid, id)
		}
		g.dropSlice(end)
	}
	fire := g.fireTime(end)
	for _, id := range c.shared.order {
		if err := g.emit(id, c.start, end, fire, out); err != nil {
			return err
		}
	}
	return nil
}

func (g *WindowAgg) emit(id int32, start, end, fire int64, out operator.Emitter) error {
	if g.opt.Updating && g.st.Rows(id) == 0 {
		return nil // every row of the group was retracted
	}
	nk := len(g.keys)
	at := nk // window_start's column
	if g.opt.Attached {
		at = nk - 1 // the last key
	}
	r := g.arena.RowFrom(operator.CarverOf(out), at+3+len(g.res))
	if err := aggop.DecodeKey(r[:nk], g.kids.key(g.slotKid[id])); err != nil {
		return fmt.Errorf("window aggregate: %w", err)
	}
	if !g.opt.Attached {
		r[at] = row.TimestampValue(start)
	}
	r[at+1] = row.TimestampValue(end)
	if g.timeID == row.TimestampLTZ || g.opt.AttachedLTZ {
		r[at+2] = row.TimestampLTZValue(windowTimeLTZ(g.opt.Zone, end, fire))
	} else {
		r[at+2] = row.TimestampValue(end - 1000)
	}
	g.st.Results(id, r[at+3:])
	out.Emit(row.Insert, r)
	return nil
}

// toLocal moves an LTZ instant to the Zone's wall clock, where windows are
// aligned.
func (g *WindowAgg) toLocal(ts int64) int64 {
	if g.opt.Zone == nil || g.timeID != row.TimestampLTZ {
		return ts
	}
	return row.WallMicros(g.opt.Zone, ts)
}

// due is the watermark at which a window ending at end fires, and after
// which a row for it is late: the last millisecond before its fireTime,
// where Flink sets the window's timer (windowEnd - 1).
func (g *WindowAgg) due(end int64) int64 { return lastMilli(g.fireTime(end)) }

// fireTime is the instant a window ending at end (wall clock) ends, the
// base of its window_time: end itself, or for LTZ in a Zone the instant
// of that wall clock;
// in a daylight-saving overlap the later one, in a gap the instant after
// it (Flink's toEpochMillsForTimer).
func (g *WindowAgg) fireTime(end int64) int64 {
	// Attached rows' windows (their time is window_end, a TIMESTAMP) were
	// over an LTZ upstream when AttachedLTZ says.
	if g.opt.Zone == nil || g.timeID != row.TimestampLTZ && !g.opt.AttachedLTZ {
		return end
	}
	return row.AtZoneLater(g.opt.Zone, end)
}

const windowStateVersion = 1

// Snapshot encodes the open windows: a version byte, the watermark, the
// time attribute's type, the late count, the window ends still to fire,
// each slice (its end and its groups' slot ids in first-seen order), each
// CUMULATE cycle (start, next end to fire, its shared groups), then the
// aggregate store, which keeps every slot's key.
func (g *WindowAgg) Snapshot() ([]byte, error) {
	var b bytes.Buffer
	err := g.SnapshotTo(&b)
	return b.Bytes(), err
}

func appendIDs(buf []byte, ids []int32) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(ids)))
	for _, id := range ids {
		buf = binary.AppendUvarint(buf, uint64(id))
	}
	return buf
}

// Restore replaces the operator's state with a snapshot's.
func (g *WindowAgg) Restore(state []byte) error { return g.restore(row.NewDecoder(state)) }

// restore reads a snapshot from d, the bytes of one or a stream of them.
func (g *WindowAgg) restore(d *row.Decoder) error {
	g.Widen(d)
	var err error
	if g.wm, g.timeID, g.dropped, err = aggop.ReadClock(d, windowStateVersion, "window aggregate"); err != nil {
		return err
	}
	g.pending = make([]int64, d.Count(1))
	for i := range g.pending {
		g.pending[i] = d.Varint()
	}
	var orders [][]int32
	readIDs := func() []int32 {
		ids := make([]int32, d.Count(1))
		for i := range ids {
			ids[i] = int32(min(d.Uvarint(), 1<<31-1))
		}
		orders = append(orders, ids)
		return ids
	}
	g.slices = map[int64]*slice{}
	for range d.Count(2) {
		w := g.newSlice(d.Varint())
		w.order = readIDs()
		g.slices[w.end] = w
	}
	g.cycles = make([]*cycle, d.Count(3))
	for i := range g.cycles {
		c := &cycle{start: d.Varint(), next: d.Varint(), shared: slice{seq: g.nextSeq()}}
		c.shared.order = readIDs()
		g.cycles[i] = c
	}
	// Each slot's key gets its id as it is read; a free slot's (empty)
	// key is let go below, unless a slot in use has it.
	g.kids, g.spare, g.hasKid, g.lastW, g.indexed = newKeyIDs(), nil, false, nil, 0
	g.slotKid = g.slotKid[:0]
	g.st.RestoreState(d, func(id int32, key []byte) {
		g.slotKid = append(g.slotKid, g.kids.of(key))
	})
	if err := d.End(); err != nil {
		return fmt.Errorf("window aggregate: restore: %w", err)
	}
	// Check the slices' slots; their key indexes are built when needed.
	for _, ids := range orders {
		for _, id := range ids {
			if id < 0 || id >= g.st.Slots {
				return fmt.Errorf("window aggregate: restore: slot %d of %d", id, g.st.Slots)
			}
		}
	}
	if len(g.slotKid) != int(g.st.Slots) {
		return fmt.Errorf("window aggregate: restore: %d keys for %d slots", len(g.slotKid), g.st.Slots)
	}
	for _, id := range g.st.Free {
		g.slotKid[id] = -1
	}
	// A key's last slice (keyIDs.at) is the newest holding it.
	index := func(w *slice) error {
		w.kids = make([]int32, len(w.order))
		for j, id := range w.order {
			kid := g.slotKid[id]
			if kid < 0 {
				return fmt.Errorf("window aggregate: restore: slot %d is free", id)
			}
			if g.kids.refs[kid]++; g.kids.refs[kid] == 1 || newer(w.seq, g.kids.at[kid].seq) {
				g.kids.at[kid] = kidAt{w.seq, id}
			}
			w.kids[j] = kid
		}
		return nil
	}
	for _, w := range g.slices {
		if err := index(w); err != nil {
			return err
		}
	}
	for _, c := range g.cycles {
		if err := index(&c.shared); err != nil {
			return err
		}
	}
	for kid, n := range g.kids.refs {
		if n == 0 && g.kids.t.Has(int32(kid)) {
			g.kids.drop(int32(kid))
		}
	}
	return nil
}

var (
	_ operator.Operator    = (*WindowAgg)(nil)
	_ operator.Counters    = (*WindowAgg)(nil)
	_ operator.Snapshotter = (*WindowAgg)(nil)
)

var (
	_ operator.StateSizer    = (*WindowAgg)(nil)
	_ operator.InputReleaser = (*WindowAgg)(nil)
)

// slotKey is slot id's key (empty for a free slot), a view valid until
// the next key is added or freed.
func (g *WindowAgg) slotKey(id int32) []byte {
	if kid := g.slotKid[id]; kid >= 0 {
		return g.kids.t.Bytes(kid)
	}
	return nil
}

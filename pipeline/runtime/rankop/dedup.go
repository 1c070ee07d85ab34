package rankop

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// DedupSpec is a deduplication: ROW_NUMBER() OVER (PARTITION BY Key
// ORDER BY a time attribute) = 1 with the rank number not selected.
type DedupSpec struct {
	Key []int
	// TimeCol is the ORDER BY column; RowTime says it is an event-time
	// attribute (compared by value), else processing time (arrival order).
	TimeCol int
	RowTime bool
	// KeepLast: ORDER BY ... DESC keeps the last row, ASC the first.
	KeepLast bool
	// Batch: emit each key's kept row as +I at Finish.
	Batch bool
}

// Dedup keeps one row per key of an insert-only input, with Flink's
// changes (ProcTimeDeduplicateKeepFirstRowFunction, ...KeepLastRowFunction,
// RowTimeDeduplicateFunction):
//
//   - processing time, keep first: +I of a key's first row, later rows
//     dropped: insert-only;
//   - processing time, keep last: +I of the first row, then -U[kept]
//     +U[new] for every later one;
//   - event time, keep last: the first row +I; a later row replaces the
//     kept one with -U[kept] +U[new] when its time is not earlier. Rows
//     are not dropped as late: a row arriving after the watermark still
//     competes by its time (RowTimeDeduplicateFunction);
//   - event time, keep first: insert-only. The earliest row of a key
//     waits until the watermark reaches its time, then is emitted as +I,
//     in time order; the key then ignores every later row. A row older
//     than the watermark when it arrives is late: dropped and counted
//     (RowTimeDeduplicateKeepFirstRowFunction).
type Dedup struct {
	operator.ColumnWidening // a restore retags saved values of widened columns, by column (operator.ColumnWidener)
	spec                    DedupSpec
	// keys gives each key an id; kept holds its row (encoded, no
	// pointer for the GC to scan) and times, on event time, that row's
	// time (timeKey). A key whose row was emitted on the watermark
	// (event time, keep first) stays in keys with no kept row: done.
	keys  *state.KeyIDs
	kept  state.RowStore
	times []int64
	order []int32 // batch: ids in first-seen order
	kbuf  []byte
	fbuf  []byte // forget's copy of a key
	// text holds the strings of the replaced rows emitted as -U, which
	// are carved from the output's slabs when it lends them (prevRow).
	text row.Text

	// Event time, keep first: timers hold the waiting rows' times, and
	// waiting (by id) the seq of each key's live timer, 0 for none.
	timers  state.Heap[timer]
	seq     uint64
	waiting []uint64
	wm      int64
	dropped int64
	ttl     state.TTLList // state TTL by id (dedup_ttl.go)
	operator.Expiry
}

// NewDedup builds the operator.
func NewDedup(spec DedupSpec) *Dedup {
	d := &Dedup{spec: spec, keys: state.NewKeyIDs(), timers: state.NewHeap(timerBefore), wm: operator.NoWatermark}
	d.Key = spec.Key // the keys it saves
	d.InitExpiry(d.ttl.Set, d.ttl.Tick, d.sweep)
	return d
}

// firstOnTimer reports whether rows wait for the watermark (event time,
// keep first, streaming).
func (d *Dedup) firstOnTimer() bool { return d.spec.RowTime && !d.spec.KeepLast && !d.spec.Batch }

// StateEntries implements StateSizer: the keys with state.
func (d *Dedup) StateEntries() int64 { return int64(d.keys.Len()) }

// StateBytes implements StateMemory: the keys, the kept rows and their
// times.
func (d *Dedup) StateBytes() int64 {
	return d.keys.MemBytes() + d.kept.MemBytes() + int64(cap(d.times)+cap(d.waiting))*8 + int64(cap(d.order))*4
}

// Dropped counts late rows.
func (d *Dedup) Dropped() (int64, string) { return d.dropped, "late" }

// timer is a waiting row's event time; seq tells a live timer from one
// its key has replaced, and orders equal times by arrival.
type timer struct {
	at  int64
	seq uint64
	id  int32
}

// timerBefore orders timers by time, then by arrival.
func timerBefore(a, b *timer) bool {
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

// timeKey is a time attribute as an int64 ordered as row.Compare orders
// the values: NULL first.
func timeKey(v row.Value) int64 {
	if v.IsNull() {
		return math.MinInt64
	}
	return v.Micros()
}

// lookup finds the key in d.kbuf, dropping its state first when it
// expired.
func (d *Dedup) lookup() (int32, bool) {
	id, ok := d.keys.Find(d.kbuf)
	if ok && d.ttl.Expired(id) {
		d.forget(id)
		return 0, false
	}
	return id, ok
}

// add gives the key in d.kbuf an id.
func (d *Dedup) add() int32 {
	id, fresh := d.keys.Add(d.kbuf)
	if fresh {
		d.times = append(d.times, 0)
		d.waiting = append(d.waiting, 0)
	}
	return id
}

// keep stores r as id's row.
func (d *Dedup) keep(id int32, r row.Row) {
	d.kept.Put(id, r)
	if d.spec.RowTime {
		d.times[id] = timeKey(r[d.spec.TimeCol])
	}
}

// forget drops id's key and state.
func (d *Dedup) forget(id int32) {
	d.fbuf = append(d.fbuf[:0], d.keys.Bytes(id)...) // a copy: remove clears the entry bytes views
	d.keys.Drop(d.fbuf)
	d.kept.Remove(id)
	d.waiting[id] = 0
	d.ttl.Drop(id)
}

// waitFirst is keep-first on event time for one row.
func (d *Dedup) waitFirst(r row.Row) {
	at := r[d.spec.TimeCol].Micros()
	if r[d.spec.TimeCol].IsNull() || at < d.wm {
		d.dropped++
		return
	}
	id, ok := d.lookup()
	switch {
	case !ok:
		id = d.add()
	case !d.kept.Has(id): // done: emitted already
		return
	case at >= d.times[id]:
		return
	}
	d.keep(id, r)
	d.seq++
	d.waiting[id] = d.seq
	d.timers.Push(timer{at: at, seq: d.seq, id: id})
}

func (d *Dedup) Process(in *row.Batch, out operator.Emitter) error {
	defer d.Begin(len(in.Changes))()
	carver := operator.CarverOf(out)
	return operator.EachChange("deduplicate", in, out, func(_ int, c *row.Change) error {
		if c.Kind != row.Insert {
			return fmt.Errorf("input planned as insert-only carries a %s change", c.Kind)
		}
		d.kbuf = row.KeyOf(d.kbuf[:0], c.Row, d.spec.Key)
		if d.firstOnTimer() {
			d.waitFirst(c.Row)
			return nil
		}
		d.keepOrReplace(c.Row, out, carver)
		return nil
	})
}

// keepOrReplace is Process for a row of the key in d.kbuf that does not
// wait for the watermark: it keeps the row when it is the key's first
// or replaces the kept one, and emits the change.
func (d *Dedup) keepOrReplace(r row.Row, out operator.Emitter, c operator.RowCarver) {
	id, seen := d.lookup()
	if seen && !d.replaces(id, r) {
		return
	}
	var prev row.Row
	switch {
	case !seen:
		id = d.add()
		if d.spec.Batch {
			d.order = append(d.order, id)
		}
	case !d.spec.Batch:
		prev = d.prevRow(id, len(r), c)
	}
	d.keep(id, r)
	d.ttl.Touch(id)
	switch {
	case d.spec.Batch:
	case !seen:
		out.Emit(row.Insert, r)
	default:
		out.Emit(row.UpdateBefore, prev)
		out.Emit(row.UpdateAfter, r)
	}
}

// prevRow is a copy of id's kept row, about to be replaced, for its -U:
// in a row carved from the output's memory when c lends it (width w,
// the input's), its strings in d.text's shared chunks, so that a key's
// every replacement costs no allocation of its own.
func (d *Dedup) prevRow(id int32, w int, c operator.RowCarver) row.Row {
	if c == nil {
		return d.kept.Row(id)
	}
	prev := c.CarveRow(w)
	if err := row.DecodeRowText(prev, d.kept.Bytes(id), &d.text); err != nil {
		// A kept row of another width (none is: it was an input row);
		// the copy of its own reads any.
		return d.kept.Row(id)
	}
	return prev
}

// CarvesRows implements operator.Carving: a replaced row's -U is carved
// from the emitter's memory (prevRow), the other rows emitted are input
// rows, so the node's one reader may give its slabs back for the next
// batches' rows.
func (d *Dedup) CarvesRows() bool { return true }

// replaces reports whether next takes the place of id's kept row.
func (d *Dedup) replaces(id int32, next row.Row) bool {
	if !d.spec.RowTime {
		return d.spec.KeepLast
	}
	at, prev := timeKey(next[d.spec.TimeCol]), d.times[id]
	if d.spec.KeepLast {
		return at >= prev
	}
	return at < prev
}

// Watermark emits the waiting rows whose time it reached, in time order.
func (d *Dedup) Watermark(wm int64, out operator.Emitter) error {
	if wm <= d.wm || !d.firstOnTimer() {
		return nil
	}
	d.wm = wm
	for d.timers.Len() > 0 && d.timers.Top().at <= wm {
		t := d.timers.Pop()
		if d.waiting[t.id] != t.seq {
			continue // replaced by an earlier row
		}
		out.Emit(row.Insert, d.kept.Row(t.id))
		d.kept.Remove(t.id)
		d.waiting[t.id] = 0
		d.ttl.Touch(t.id)
	}
	return nil
}

// Finish emits a batch deduplication's rows.
func (d *Dedup) Finish(out operator.Emitter) error {
	if !d.spec.Batch {
		return nil
	}
	for _, id := range d.order {
		out.Emit(row.Insert, d.kept.Row(id))
	}
	return nil
}

const DedupStateVersion = 2

// Snapshot encodes the state: a version byte, the watermark, the late
// count, the keys already emitted, then the kept rows' count and the rows
// (in first-seen order in batch mode, in timer order when they wait for
// the watermark).
func (d *Dedup) Snapshot() ([]byte, error) {
	done, kept := d.doneAndKept()
	return d.encode(d.dropped, done, kept, d.ttlOrder()), nil
}

// doneAndKept lists the keys emitted already (event time, keep first)
// and the ids of the kept rows in the snapshot's order: first seen in
// batch mode, timer order when they wait for the watermark.
func (d *Dedup) doneAndKept() (done, kept []int32) {
	ids := d.ids()
	if d.firstOnTimer() {
		for _, id := range ids {
			if !d.kept.Has(id) {
				done = append(done, id)
			}
		}
	}
	switch {
	case d.firstOnTimer():
		live := make([]timer, 0, d.timers.Len())
		for _, t := range d.timers.Items() {
			if d.waiting[t.id] == t.seq {
				live = append(live, t)
			}
		}
		slices.SortFunc(live, func(a, b timer) int {
			if timerBefore(&a, &b) {
				return -1
			}
			return 1
		})
		kept = make([]int32, 0, len(live))
		for _, t := range live {
			kept = append(kept, t.id)
		}
	case d.spec.Batch:
		kept = d.order
	default:
		kept = ids
	}
	return done, kept
}

// encode writes Snapshot's layout of the keys done, the rows kept and,
// with a TTL, the times of ttl (the oldest first).
func (d *Dedup) encode(dropped int64, done, kept, ttl []int32) []byte {
	v := byte(DedupStateVersion)
	if d.ttl.On() {
		v = dedupTTLStateVersion
	}
	buf := []byte{v}
	buf = binary.AppendVarint(buf, d.wm)
	buf = binary.AppendVarint(buf, dropped)
	buf = binary.AppendUvarint(buf, uint64(len(done)))
	for _, id := range done {
		buf = row.AppendString(buf, string(d.keys.Bytes(id)))
	}
	buf = binary.AppendUvarint(buf, uint64(len(kept)))
	for _, id := range kept {
		buf = append(buf, d.kept.Bytes(id)...) // AppendRow's encoding
	}
	return d.appendTTL(buf, ttl)
}

// ids lists the ids that hold a key.
func (d *Dedup) ids() []int32 {
	ids := make([]int32, 0, d.keys.Len())
	for id := range int32(len(d.times)) {
		if d.keys.Has(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// Restore replaces the state with a snapshot's.
func (d *Dedup) Restore(snap []byte) error {
	dec := d.Decoder(snap)
	v := dec.Byte()
	if v != DedupStateVersion && v != dedupTTLStateVersion {
		return fmt.Errorf("deduplicate: state version %d, want %d or %d", v, DedupStateVersion, dedupTTLStateVersion)
	}
	r := NewDedup(d.spec)
	if d.ttl.On() {
		r.ttl.Set(operator.StateTTL{TTL: time.Duration(d.ttl.TTL) * time.Millisecond, Now: d.ttl.Now})
	}
	r.wm, r.dropped = dec.Varint(), dec.Varint()
	for range dec.Count(1) {
		r.kbuf = append(r.kbuf[:0], dec.KeyBytes()...)
		if _, ok := r.keys.Find(r.kbuf); !ok && dec.Err() == nil {
			r.add()
		}
	}
	n := dec.Count(1)
	for range n {
		kr := dec.Row()
		if dec.Err() != nil {
			break
		}
		for _, k := range d.spec.Key {
			if k >= len(kr) {
				dec.Fail("row of %d columns has no key column %d", len(kr), k)
			}
		}
		if d.spec.RowTime && d.spec.TimeCol >= len(kr) {
			dec.Fail("row of %d columns has no time column %d", len(kr), d.spec.TimeCol)
		}
		if dec.Err() != nil {
			break
		}
		r.kbuf = row.KeyOf(r.kbuf[:0], kr, d.spec.Key)
		id, ok := r.keys.Find(r.kbuf)
		if !ok {
			id = r.add()
			r.order = append(r.order, id)
		}
		r.keep(id, kr)
	}
	r.readTTL(dec, v == dedupTTLStateVersion)
	if err := dec.End(); err != nil {
		return fmt.Errorf("deduplicate: restore: %w", err)
	}
	if r.firstOnTimer() {
		timers := make([]timer, 0, len(r.order))
		for _, id := range r.order { // the snapshot's timer order
			r.seq++
			r.waiting[id] = r.seq
			timers = append(timers, timer{at: r.times[id], seq: r.seq, id: id})
		}
		r.timers.Fill(timers)
	}
	if !d.spec.Batch {
		r.order = nil
	}
	// The expiry's functions are bound to d, which takes r's state.
	r.Expiry = d.Expiry
	r.ColumnWidening = d.ColumnWidening
	*d = *r
	return nil
}

var (
	_ operator.Operator    = (*Dedup)(nil)
	_ operator.Snapshotter = (*Dedup)(nil)
	_ operator.StateSizer  = (*Dedup)(nil)
	_ operator.Counters    = (*Dedup)(nil)
	_ operator.Carving     = (*Dedup)(nil)
)

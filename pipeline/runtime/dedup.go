package runtime

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/etld/etld/pipeline/row"
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
	spec  DedupSpec
	kept  map[string]row.Row
	order []string // batch: keys in first-seen order
	kbuf  []byte

	// Event time, keep first: kept holds the rows waiting for the
	// watermark, timers their times, done the keys already emitted.
	timers  timerHeap
	seq     uint64
	waiting map[string]uint64 // key -> seq of its live timer
	done    map[string]struct{}
	wm      int64
	dropped int64
	ttl     ttlKeys[string] // state TTL by key (dedup_ttl.go)
}

// NewDedup builds the operator.
func NewDedup(spec DedupSpec) *Dedup {
	return &Dedup{spec: spec, kept: map[string]row.Row{}, waiting: map[string]uint64{}, done: map[string]struct{}{}, wm: NoWatermark}
}

// firstOnTimer reports whether rows wait for the watermark (event time,
// keep first, streaming).
func (d *Dedup) firstOnTimer() bool { return d.spec.RowTime && !d.spec.KeepLast && !d.spec.Batch }

// StateEntries implements StateSizer: the keys with state.
func (d *Dedup) StateEntries() int64 { return int64(len(d.kept) + len(d.done)) }

// Dropped counts late rows.
func (d *Dedup) Dropped() (int64, string) { return d.dropped, "late" }

// timer is a waiting row's event time; seq tells a live timer from one
// its key has replaced, and orders equal times by arrival.
type timer struct {
	at  int64
	seq uint64
	key string
}

type timerHeap []timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// waitFirst is keep-first on event time for one row.
func (d *Dedup) waitFirst(r row.Row) {
	at := r[d.spec.TimeCol].Micros()
	if r[d.spec.TimeCol].IsNull() || at < d.wm {
		d.dropped++
		return
	}
	if _, ok := d.done[string(d.kbuf)]; ok && !d.expireKey() {
		return
	}
	if prev, ok := d.kept[string(d.kbuf)]; ok && at >= prev[d.spec.TimeCol].Micros() {
		return
	}
	k := string(d.kbuf)
	d.kept[k] = r
	d.seq++
	d.waiting[k] = d.seq
	heap.Push(&d.timers, timer{at: at, seq: d.seq, key: k})
}

func (d *Dedup) Process(in *row.Batch, out Emitter) error {
	if d.ttl.on() {
		d.ttl.tick()
		defer d.sweep(sweepBudget(len(in.Changes)))
	}
	tr := trackerOf(in, out)
	for i := range in.Changes {
		c := &in.Changes[i]
		if c.Kind != row.Insert {
			return fmt.Errorf("deduplicate: change %d: input planned as insert-only carries a %s change", i, c.Kind)
		}
		d.kbuf = row.KeyOf(d.kbuf[:0], c.Row, d.spec.Key)
		if d.firstOnTimer() {
			d.waitFirst(c.Row)
			continue
		}
		d.expireKey()
		prev, seen := d.kept[string(d.kbuf)]
		if seen && !d.replaces(prev, c.Row) {
			continue
		}
		d.ttl.touch(string(d.kbuf))
		if !seen {
			k := string(d.kbuf)
			d.kept[k] = c.Row
			if d.spec.Batch {
				d.order = append(d.order, k)
			}
		} else {
			d.kept[string(d.kbuf)] = c.Row
		}
		if d.spec.Batch {
			continue
		}
		if tr != nil {
			tr.at(i)
		}
		if !seen {
			out.Emit(row.Insert, c.Row)
			continue
		}
		out.Emit(row.UpdateBefore, prev)
		out.Emit(row.UpdateAfter, c.Row)
	}
	return nil
}

// replaces reports whether next takes the place of the kept row prev.
func (d *Dedup) replaces(prev, next row.Row) bool {
	if !d.spec.RowTime {
		return d.spec.KeepLast
	}
	c := row.Compare(next[d.spec.TimeCol], prev[d.spec.TimeCol])
	if d.spec.KeepLast {
		return c >= 0
	}
	return c < 0
}

// Watermark emits the waiting rows whose time it reached, in time order.
func (d *Dedup) Watermark(wm int64, out Emitter) error {
	if wm <= d.wm || !d.firstOnTimer() {
		return nil
	}
	d.wm = wm
	for len(d.timers) > 0 && d.timers[0].at <= wm {
		t := heap.Pop(&d.timers).(timer)
		if d.waiting[t.key] != t.seq {
			continue // replaced by an earlier row
		}
		out.Emit(row.Insert, d.kept[t.key])
		delete(d.kept, t.key)
		delete(d.waiting, t.key)
		d.done[t.key] = struct{}{}
		d.ttl.touch(t.key)
	}
	return nil
}

// Finish emits a batch deduplication's rows.
func (d *Dedup) Finish(out Emitter) error {
	if !d.spec.Batch {
		return nil
	}
	for _, k := range d.order {
		out.Emit(row.Insert, d.kept[k])
	}
	return nil
}

const dedupStateVersion = 2

// Snapshot encodes the state: a version byte, the watermark, the late
// count, the keys already emitted, then the kept rows' count and the rows
// (in first-seen order in batch mode, in timer order when they wait for
// the watermark).
func (d *Dedup) Snapshot() ([]byte, error) {
	v := byte(dedupStateVersion)
	if d.ttl.on() {
		v = dedupTTLStateVersion
	}
	buf := []byte{v}
	buf = binary.AppendVarint(buf, d.wm)
	buf = binary.AppendVarint(buf, d.dropped)
	buf = binary.AppendUvarint(buf, uint64(len(d.done)))
	for k := range d.done {
		buf = row.AppendString(buf, k)
	}
	buf = binary.AppendUvarint(buf, uint64(len(d.kept)))
	if d.firstOnTimer() {
		live := make([]timer, 0, len(d.waiting))
		for _, t := range d.timers {
			if d.waiting[t.key] == t.seq {
				live = append(live, t)
			}
		}
		slices.SortFunc(live, func(a, b timer) int {
			if (timerHeap{a, b}).Less(0, 1) {
				return -1
			}
			return 1
		})
		for _, t := range live {
			buf = row.AppendRow(buf, d.kept[t.key])
		}
		return d.appendTTL(buf), nil
	}
	if d.spec.Batch {
		for _, k := range d.order {
			buf = row.AppendRow(buf, d.kept[k])
		}
		return buf, nil
	}
	for _, r := range d.kept {
		buf = row.AppendRow(buf, r)
	}
	return d.appendTTL(buf), nil
}

// Restore replaces the kept rows with a snapshot's.
func (d *Dedup) Restore(state []byte) error {
	dec := row.NewDecoder(state)
	v := dec.Byte()
	if v != dedupStateVersion && v != dedupTTLStateVersion {
		return fmt.Errorf("deduplicate: state version %d, want %d or %d", v, dedupStateVersion, dedupTTLStateVersion)
	}
	wm, dropped := dec.Varint(), dec.Varint()
	nd := dec.Count(1)
	done := make(map[string]struct{}, nd)
	for range nd {
		done[dec.Str()] = struct{}{}
	}
	n := dec.Count(1)
	kept := make(map[string]row.Row, n)
	var order []string
	for range n {
		r := dec.Row()
		if dec.Err() != nil {
			break
		}
		for _, k := range d.spec.Key {
			if k >= len(r) {
				dec.Fail("row of %d columns has no key column %d", len(r), k)
			}
		}
		if dec.Err() != nil {
			break
		}
		d.kbuf = row.KeyOf(d.kbuf[:0], r, d.spec.Key)
		kept[string(d.kbuf)] = r
		order = append(order, string(d.kbuf))
	}
	d.readTTL(dec, v == dedupTTLStateVersion)
	if err := dec.End(); err != nil {
		return fmt.Errorf("deduplicate: restore: %w", err)
	}
	d.kept, d.done, d.wm, d.dropped = kept, done, wm, dropped
	d.timers, d.waiting, d.seq = nil, map[string]uint64{}, 0
	if d.spec.Batch {
		d.order = order
	}
	d.touchRestored()
	if d.firstOnTimer() {
		for _, k := range order {
			d.seq++
			d.waiting[k] = d.seq
			d.timers = append(d.timers, timer{at: kept[k][d.spec.TimeCol].Micros(), seq: d.seq, key: k})
		}
		heap.Init(&d.timers)
	}
	return nil
}

var (
	_ Operator    = (*Dedup)(nil)
	_ Snapshotter = (*Dedup)(nil)
	_ StateSizer  = (*Dedup)(nil)
	_ Counters    = (*Dedup)(nil)
)

package aggop

import (
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// Mini-batch (Flink's MiniBatchGroupAggFunction): with
// GroupAggOptions.MiniBatch, GroupAgg applies every change of one input
// batch to its groups and only then emits, per key the batch touched, the
// difference between the key's result before the batch and after it: +I
// for a new key, -U/+U for a changed one, -D for one whose rows were all
// retracted, nothing when the result came back to where it was. A key hit
// by n changes in a batch costs one -U/+U pair instead of n, for every
// sink mode. The batch is the unit because barriers and watermarks travel
// between batches: a checkpoint never sees a half-folded batch, so the
// snapshot and the emitted changes agree (exactly-once intact), and the
// latency added is none beyond the batch's own (the source's batch size
// and flush latency bound it). Folded, the output is the same table as
// without mini-batch (groupagg_minibatch_test.go checks it on random
// changelogs).

// touched is one key a mini-batch changed. It holds no pointer: a
// mini-batch of many keys costs the garbage collector nothing to scan.
type touched struct {
	id  int32 // the key's slot, -1 once its last row was retracted
	had bool  // the key had a result before the batch
	// prev is the offset of the key's state before the batch: in
	// miniBatch.saved (a flat store: the slot's words, agg_saved.go),
	// or of its results in miniBatch.prev.
	prev int
	// gone is, once id is -1, the index in miniBatch.gone of the row
	// whose retraction emptied the key, for the -D's key columns; a live
	// key's come from the index.
	gone int32
	// at and seq are the key's last input change and its input batch,
	// for positions: seq is the mini-batch's seq when that change is of
	// the batch a flush follows (the only one whose positions it names),
	// which the flush finds in miniBatch.last, or the drop sets.
	at  int32
	seq uint64
}

type miniBatch struct {
	// mem holds list, mark and saved, which hold no pointer, off the
	// Go heap once they are large (state.OffHeap): at millions of keys
	// a mini-batch touches about a million, and an append's growth
	// copied them, where a mapping grows by moving its pages.
	mem     *state.OffHeap
	seq     uint64 // input batches seen
	pending int    // input changes applied since the last flush
	list    []touched
	// mark is, by slot, 1 + the key's index in list, 0 when the
	// mini-batch has not touched it: 4 bytes a slot, so that the marks
	// of many keys stay in the CPU's cache.
	mark []int32
	// last is the slot each change of the latest input batch touched,
	// -1 for none: the positions of the keys it touched last.
	last  []int32
	saved []int64
	prev  []row.Value
	gone  []row.Row
	// warmed keeps the sum of warm's loads, so that they are not dead
	// code.
	warmed int
}

// warmAhead is how many entries of the list warm loads ahead of the
// flush: enough loads in flight to cover a miss's latency, few enough
// that their lines stay in the cache until the flush reads them.
const warmAhead = 64

// touch notes change i as touching id and returns id's entry in list,
// creating one (with the key's current result as prev) when the
// mini-batch has not touched it yet.
func (g *GroupAgg) touch(id int32, had bool, i int) *touched {
	m := &g.mb
	g.growMarks()
	m.last[i] = id
	if e := m.mark[id]; e != 0 {
		return &m.list[e-1]
	}
	return g.enter(id, had)
}

// growMarks gives every slot a mark.
func (g *GroupAgg) growMarks() {
	if n := int(g.store.Slots); n > len(g.mb.mark) {
		g.mb.mark = state.OffHeapGrow(g.mb.mem, g.mb.mark, n)
	}
}

// enter makes id's entry: the key is touched for the first time since
// the last flush.
func (g *GroupAgg) enter(id int32, had bool) *touched {
	m := &g.mb
	t := touched{id: id, had: had}
	switch {
	case !had:
	case g.store.flat():
		t.prev = len(m.saved)
		// Room first, so that saveSlot's appends stay in place.
		m.saved = state.OffHeapGrow(m.mem, m.saved, len(m.saved)+g.store.savedWords())[:t.prev]
		m.saved = g.store.saveSlot(m.saved, id)
	default:
		t.prev = len(m.prev)
		m.prev = append(m.prev, make([]row.Value, len(g.next))...)
		g.store.Results(id, m.prev[t.prev:t.prev+len(g.next)])
	}
	m.list = state.OffHeapGrow(m.mem, m.list, len(m.list)+1)
	m.list[len(m.list)-1] = t
	m.mark[id] = int32(len(m.list))
	return &m.list[len(m.list)-1]
}

// processMiniBatch is Process with mini-batch folding.
func (g *GroupAgg) processMiniBatch(in *row.Batch, out operator.Emitter) error {
	g.mb.seq++
	g.mb.pending += len(in.Changes)
	if err := g.applyMiniBatch(in); err != nil {
		if ferr := g.flushMiniBatch(in, out); ferr != nil { // what was applied is state: emit it
			return ferr
		}
		return err
	}
	if g.mb.pending >= g.opt.MiniBatchSize {
		return g.flushMiniBatch(in, out)
	}
	return nil
}

// applyMiniBatch applies in's changes to the groups, noting the keys
// they touch.
func (g *GroupAgg) applyMiniBatch(in *row.Batch) error {
	if g.Vectorized() {
		return g.foldMiniBatch(in)
	}
	g.settle() // slotOf's way reads the index
	last := growTo(g.mb.last, len(in.Changes))
	for i := range last {
		last[i] = -1
	}
	g.mb.last = last
	// No emitter: nothing is emitted before the flush, which names the
	// positions itself.
	return operator.EachChange("group aggregate", in, nil, func(i int, c *row.Change) error {
		return g.miniChange(c.Kind, c.Row, i)
	})
}

// Flush implements Flusher.
func (g *GroupAgg) Flush(out operator.Emitter) error {
	return g.flushMiniBatch(nil, out)
}

// FlushEvery implements Flusher: 0 for an operator without mini-batch.
func (g *GroupAgg) FlushEvery() time.Duration {
	if !g.opt.MiniBatch || g.opt.Batch {
		return 0
	}
	return g.opt.MiniBatchLatency
}

// foldMiniBatch is processMiniBatch's fold in passes (groupagg_batch.go):
// the changes' slots, then each touched key noted in order (its result
// before the batch taken), then the fold. A change the checks refuse
// fails the batch after the changes before it, as row by row.
func (g *GroupAgg) foldMiniBatch(in *row.Batch) error {
	changes := in.Changes
	bad := g.firstBad(changes)
	ids := g.slotsOf(changes[:bad])
	g.mb.last = ids // scratch of slotsOf, unchanged until the next batch
	// touch's loop, with the marks grown once: each iteration's loads
	// are independent, so the CPU overlaps their cache misses.
	g.growMarks()
	marks, fresh := g.mb.mark, g.batch.fresh
	// The marks and accumulators of the keys seen before, loaded all
	// at once ahead of enter, which copies the accumulators.
	n := 0
	for i, id := range ids {
		if !fresh[i] {
			n += int(marks[id]) + g.store.warmSlot(id)
		}
	}
	g.mb.warmed += n
	for i, id := range ids {
		if marks[id] == 0 {
			g.enter(id, !fresh[i])
		}
	}
	g.store.foldInserts(ids, changes[:bad])
	if bad < len(changes) {
		return g.badChange(in, bad)
	}
	return nil
}

func (g *GroupAgg) miniChange(k row.Kind, r row.Row, i int) error {
	id, isNew, add, err := g.slotOf(k, r)
	if err != nil || id < 0 {
		return err
	}
	g.ttl.Touch(id)
	if isNew {
		g.touch(id, false, i)
		g.store.Update(id, r, true)
		return nil
	}
	t := g.touch(id, true, i)
	g.store.Update(id, r, add)
	if g.store.rows(id) == 0 {
		// The slot is free for another key of this batch: the entry
		// keeps its old result and emits -D at the flush.
		t.id, t.at, t.seq, t.gone = -1, int32(i), g.mb.seq, int32(len(g.mb.gone))
		g.mb.gone = append(g.mb.gone, r)
		g.mb.mark[id], g.mb.last[i] = 0, -1
		g.drop(id)
	}
	return nil
}

// warm loads the lines the flush reads of the keys of list that had a
// result before the batch: their marks, their accumulators and their
// keys, in a loop of loads independent of each other that the CPU has
// in flight at once. At millions of keys each is a cache miss (the
// batch's fold read them a mini-batch ago), which the flush's own loop,
// long and full of calls, would wait for one by one. A new key's lines
// are the last slots', in order: the CPU fetches those ahead itself.
func (g *GroupAgg) warm(list []touched) {
	n := 0
	for i := range list {
		id := list[i].id
		if id < 0 || !list[i].had {
			continue
		}
		n += int(g.mb.mark[id]) + g.store.warmSlot(id)
		switch {
		case g.lazy:
			n += int(g.lazyKeys[id])
		case g.index.Has(id):
			n++
		}
	}
	g.mb.warmed += n
}

// flushMiniBatch emits the batch's net change per touched key, in the
// order the keys were first touched.
func (g *GroupAgg) flushMiniBatch(in *row.Batch, out operator.Emitter) error {
	m := &g.mb
	m.pending = 0
	var tr operator.Tracker
	if in != nil {
		tr = operator.TrackerOf(in, out)
	}
	if tr != nil {
		// The keys in's changes touched last, at their last change.
		for i, id := range m.last {
			if id >= 0 && m.mark[id] != 0 {
				t := &m.list[m.mark[id]-1]
				t.at, t.seq = int32(i), m.seq
			}
		}
	}
	n, flat, saved := len(g.next), g.store.flat(), g.store.savedWords()
	c := operator.CarverOf(out)
	for j := range m.list {
		if j%warmAhead == 0 {
			g.warm(m.list[j:min(j+warmAhead, len(m.list))])
		}
		t := &m.list[j]
		if t.id >= 0 {
			m.mark[t.id] = 0
		}
		if tr != nil {
			if t.seq == m.seq {
				tr.At(int(t.at))
			} else {
				tr.At(-1) // a change of an earlier batch: no position to name
			}
		}
		if t.id >= 0 && t.had && flat && !g.ttl.On() && g.store.sameAsSaved(t.id, m.saved[t.prev:t.prev+saved]) {
			continue // the same words: the same results
		}
		var prev []row.Value
		switch {
		case !t.had:
		case flat:
			prev = g.prev
			g.store.savedResults(m.saved[t.prev:t.prev+saved], prev)
		default:
			prev = m.prev[t.prev : t.prev+n]
		}
		if t.id < 0 {
			if t.had {
				out.Emit(row.Delete, g.output(c, m.gone[t.gone], prev))
			}
			continue
		}
		g.store.Results(t.id, g.next)
		changed := t.had && (!sameValues(prev, g.next) || g.ttl.On())
		if t.had && !changed {
			continue
		}
		kv, err := g.keyValues(t.id)
		if err != nil {
			return err
		}
		if !changed {
			g.emitKeyed(out, c, row.Insert, kv, g.next)
			continue
		}
		g.emitKeyed(out, c, row.UpdateBefore, kv, prev)
		g.emitKeyed(out, c, row.UpdateAfter, kv, g.next)
	}
	m.list = m.list[:0]
	m.saved = m.saved[:0]
	clear(m.prev)
	m.prev = m.prev[:0]
	clear(m.gone)
	m.gone = m.gone[:0]
	return nil
}

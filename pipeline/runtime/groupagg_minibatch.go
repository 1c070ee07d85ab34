package runtime

import (
	"time"

	"github.com/etld/etld/pipeline/row"
)

// Flusher is an operator that holds output back (a mini-batch). The node
// calls Flush before every snapshot (checkpoint barrier, end of input,
// stop), so a snapshot never holds state whose changes were not emitted,
// and every FlushEvery while its input is quiet.
type Flusher interface {
	Flush(out Emitter) error
	FlushEvery() time.Duration
}

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

// touched is one key a mini-batch changed.
type touched struct {
	id   int32   // the key's slot, -1 once its last row was retracted
	had  bool    // the key had a result before the batch
	prev int     // offset of that result in miniBatch.prev
	key  row.Row // an input row of the key, for the output's key columns
	at   int     // the last input change of the key, for positions
	seq  uint64  // the input batch of at
}

type miniBatch struct {
	seq     uint64 // input batches seen
	pending int    // input changes applied since the last flush
	list    []touched
	mark    []int32 // by slot: 1 + index in list for a key touched now, 0 otherwise
	prev    []row.Value
}

// entry returns the index of id's entry in list, creating one (with the
// key's current result as prev) when the batch has not touched it yet.
func (g *GroupAgg) touch(id int32, had bool, r row.Row, i int) *touched {
	m := &g.mb
	for int(id) >= len(m.mark) {
		m.mark = append(m.mark, 0)
	}
	if e := m.mark[id]; e != 0 {
		t := &m.list[e-1]
		t.key, t.at, t.seq = r, i, m.seq
		return t
	}
	t := touched{id: id, had: had, prev: len(m.prev), key: r, at: i, seq: m.seq}
	if had {
		m.prev = append(m.prev, make([]row.Value, len(g.next))...)
		g.st.results(id, m.prev[t.prev:t.prev+len(g.next)])
	}
	m.list = append(m.list, t)
	m.mark[id] = int32(len(m.list))
	return &m.list[len(m.list)-1]
}

// processMiniBatch is Process with mini-batch folding.
func (g *GroupAgg) processMiniBatch(in *row.Batch, out Emitter) error {
	g.mb.seq++
	g.mb.pending += len(in.Changes)
	for i := range in.Changes {
		c := &in.Changes[i]
		if err := g.miniChange(c.Kind, c.Row, i); err != nil {
			g.flushMiniBatch(in, out) // what was applied is state: emit it
			return changeError("group aggregate", in, i, err)
		}
	}
	if g.mb.pending >= g.opt.MiniBatchSize {
		g.flushMiniBatch(in, out)
	}
	return nil
}

// Flush implements Flusher.
func (g *GroupAgg) Flush(out Emitter) error {
	if g.err != nil {
		return g.err
	}
	g.flushMiniBatch(nil, out)
	return nil
}

// FlushEvery implements Flusher: 0 for an operator without mini-batch.
func (g *GroupAgg) FlushEvery() time.Duration {
	if !g.opt.MiniBatch || g.opt.Batch {
		return 0
	}
	return g.opt.MiniBatchLatency
}

func (g *GroupAgg) miniChange(k row.Kind, r row.Row, i int) error {
	id, isNew, add, err := g.slotOf(k, r)
	if err != nil || id < 0 {
		return err
	}
	g.ttl.touch(id)
	if isNew {
		g.touch(id, false, r, i)
		g.st.update(id, r, true)
		return nil
	}
	t := g.touch(id, true, r, i)
	g.st.update(id, r, add)
	if g.st.rows(id) == 0 {
		// The slot is free for another key of this batch: the entry
		// keeps its old result and emits -D at the flush.
		g.mb.mark[id] = 0
		t.id = -1
		g.drop(id)
	}
	return nil
}

// flushMiniBatch emits the batch's net change per touched key, in the
// order the keys were first touched.
func (g *GroupAgg) flushMiniBatch(in *row.Batch, out Emitter) {
	m := &g.mb
	m.pending = 0
	var tr tracker
	if in != nil {
		tr = trackerOf(in, out)
	}
	n := len(g.next)
	for j := range m.list {
		t := &m.list[j]
		if tr != nil {
			if t.seq == m.seq {
				tr.at(t.at)
			} else {
				tr.at(-1) // a change of an earlier batch: no position to name
			}
		}
		var prev []row.Value
		if t.had {
			prev = m.prev[t.prev : t.prev+n]
		}
		if t.id < 0 {
			if t.had {
				out.Emit(row.Delete, g.output(t.key, prev))
			}
			continue
		}
		m.mark[t.id] = 0
		g.st.results(t.id, g.next)
		switch {
		case !t.had:
			out.Emit(row.Insert, g.output(t.key, g.next))
		case !sameValues(prev, g.next) || g.ttl.on():
			out.Emit(row.UpdateBefore, g.output(t.key, prev))
			out.Emit(row.UpdateAfter, g.output(t.key, g.next))
		}
	}
	clear(m.list)
	m.list = m.list[:0]
	clear(m.prev)
	m.prev = m.prev[:0]
}

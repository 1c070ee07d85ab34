package windowop

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
)

// MIN and MAX over a sliding frame (a bounded ROWS or RANGE frame, in
// streaming and in a batch run over sorted input). The store's
// retractable MIN/MAX keeps a multiset of the frame's values in a map
// and a heap: a map write and delete and a heap push per row, most of an
// OVER's time. A frame slides first in, first out (its rows leave in the
// order they came, whatever the frame's unit), so each partition keeps
// instead, per such aggregate, a monotonic queue of the frame's values
// that can still be the extreme (each newer than and below, for MAX, the
// one before it): a row pops the smaller values off the back and goes
// there; the oldest row leaving pops the front if it is that row's. The
// extreme is the front: O(1) a row, amortized, and no map. SUM, COUNT
// and AVG stay in the store, which subtracts a leaving row (O(1)). The
// frame's rows are kept anyway, so a restore builds the queues again
// from them. A DISTINCT or FILTERed MIN/MAX stays in the store.

// overExt is a MIN or MAX call kept in queues: its index among the
// spec's aggregates, its argument column and that column's index among
// a frame row's kept ones.
type overExt struct {
	agg, arg, kept int
	max            bool
}

// extQueue is one aggregate's queue in one partition: the numbers of
// the frame rows whose values can still be the extreme (in push order,
// pushed counts from 0), a ring of n from head, its length a power of
// two. An entry is the row's number alone: the value is the frame's
// (frameRing, which holds every queued row), so a queue is 8 bytes an
// entry, and the value a row compares against is the row just before
// it, next to the row pushed. A ROWS frame's queue never holds more
// than the frame's rows, so the ring stays that small and, once grown,
// allocates nothing.
type extQueue struct {
	seqs    []int64
	head, n int
}

// at is the i-th entry from the front.
func (q *extQueue) at(i int) *int64 { return &q.seqs[(q.head+i)&(len(q.seqs)-1)] }

// push appends seq at the back, growing the ring when full.
func (q *extQueue) push(seq int64) {
	if q.n == len(q.seqs) {
		grown := make([]int64, max(4, 2*len(q.seqs)))
		for i := range q.n {
			grown[i] = *q.at(i)
		}
		q.seqs, q.head = grown, 0
	}
	*q.at(q.n) = seq
	q.n++
}

// extValue is the value of aggregate e's argument in the partition's
// frame row numbered seq (a queued one: still in the frame).
func extValue(p *overPart, e overExt, seq int64) row.Value {
	return p.frame.kept(int(seq - p.popped))[e.kept]
}

// splitExtremes takes the plain MIN and MAX calls of a sliding frame out
// of aggs: they are kept in queues, the rest in the store. rest maps
// each store aggregate to its index in aggs.
func splitExtremes(aggs []aggop.AggCall) (store []aggop.AggCall, ext []overExt, rest []int) {
	for i, a := range aggs {
		if (a.Func == aggop.Max || a.Func == aggop.Min) && !a.Distinct && !a.HasFilter && a.Arg >= 0 {
			ext = append(ext, overExt{agg: i, arg: a.Arg, max: a.Func == aggop.Max})
			continue
		}
		store = append(store, a)
		rest = append(rest, i)
	}
	return store, ext, rest
}

// extPush queues the values of r, the partition's newest frame row
// (p.frame's last, its kept columns).
func (g *OverAgg) extPush(p *overPart, r row.Row) {
	if p.ext == nil {
		p.ext = make([]extQueue, len(g.ext))
	}
	seq := p.pushed
	p.pushed++
	for k, e := range g.ext {
		v := r[e.kept]
		if v.IsNull() {
			continue
		}
		q := &p.ext[k]
		for q.n > 0 {
			c := row.Compare(extValue(p, e, *q.at(q.n - 1)), v)
			if e.max && c > 0 || !e.max && c < 0 {
				break
			}
			q.n-- // left in the ring: overwritten by a later push
		}
		q.push(seq)
	}
}

// extPop drops the partition's oldest frame row from the queues.
func (g *OverAgg) extPop(p *overPart) {
	seq := p.popped
	p.popped++
	for k := range p.ext {
		q := &p.ext[k]
		if q.n > 0 && *q.at(0) == seq {
			q.head = (q.head + 1) & (len(q.seqs) - 1)
			q.n--
		}
	}
}

// retractOldest takes the partition's oldest frame row out of its
// aggregates and its frame.
func (g *OverAgg) retractOldest(p *overPart) {
	g.st.Update(p.id, g.spread(p.frame.kept(0)), false)
	if g.ext != nil {
		g.extPop(p)
	}
	p.frame.popKept()
}

// spread puts a frame row's kept values at their input columns in
// frameWide (the others stay NULL) and returns it.
func (g *OverAgg) spread(kept row.Row) row.Row {
	for j, c := range g.frameKept {
		g.frameWide[c] = kept[j]
	}
	return g.frameWide
}

// results writes the partition's aggregate results into dst, one per
// spec aggregate.
func (g *OverAgg) results(p *overPart, dst []row.Value) {
	if g.ext == nil {
		g.st.Results(p.id, dst)
		return
	}
	g.scratch = g.scratch[:len(g.rest)]
	g.st.Results(p.id, g.scratch)
	for i, at := range g.rest {
		dst[at] = g.scratch[i]
	}
	for k, e := range g.ext {
		dst[e.agg] = row.NullValue
		if k < len(p.ext) {
			if q := &p.ext[k]; q.n > 0 {
				dst[e.agg] = extValue(p, e, *q.at(0))
			}
		}
	}
}

// rebuildExtremes builds the queues again from the frames (a restore).
func (g *OverAgg) rebuildExtremes() {
	if g.ext == nil {
		return
	}
	for _, p := range g.parts {
		p.ext, p.pushed, p.popped = nil, 0, 0
		for i := range p.frame.n {
			g.extPush(p, p.frame.kept(i))
		}
	}
}

// overSortedMark marks the state version of an OVER whose MIN and MAX
// are in queues: its store lacks them. Once only a batch run over sorted
// input kept them so, hence the name.
const overSortedMark = 0x40

// checkLayout reads the layout of a snapshot of version byte v: the
// version without the mark, and whether its store holds the MIN and MAX
// that this operator keeps in queues (a state written before a
// streaming OVER kept them so), which Restore then leaves out
// (aggop.ProjectState). The other way (queues saved, a store of every
// aggregate wanted) is refused: it cannot arise from one query.
func (g *OverAgg) checkLayout(v byte) (byte, bool, error) {
	queued := v&overSortedMark != 0
	if queued && g.ext == nil {
		return 0, false, fmt.Errorf("over aggregate: restore: a state of another layout (MIN and MAX kept in queues, which this OVER does not keep): reset the pipeline's state to run it")
	}
	return v &^ overSortedMark, !queued && g.ext != nil, nil
}

// restoreStore restores the aggregates' store from d; full says the
// snapshot's store holds every aggregate of the spec, the queued MIN and
// MAX too (checkLayout).
func (g *OverAgg) restoreStore(d *row.Decoder, full bool) error {
	if !full {
		g.st.RestoreState(d, nil)
		return nil
	}
	kept := aggop.ProjectState(d, g.spec.Aggs, false, true, g.rest)
	if err := d.Err(); err != nil {
		return fmt.Errorf("over aggregate: restore: %w", err)
	}
	sd := g.Decoder(kept)
	g.st.RestoreState(sd, nil)
	if err := sd.End(); err != nil {
		return fmt.Errorf("over aggregate: restore: the aggregates without MIN and MAX: %w", err)
	}
	return nil
}

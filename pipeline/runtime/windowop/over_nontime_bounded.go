package windowop

import (
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A bounded frame over a non-time order, ROWS BETWEEN N PRECEDING AND
// CURRENT ROW, which Flink refuses ("Non-time attribute sort is not
// supported for bounded OVER window") and Nexmark's q6 needs over the
// updating output of a Top-1. A row's results are the aggregates of
// itself and the N rows before it in the partition's order (ties in
// arrival order, as the unbounded frame's). A row arriving or leaving at
// position i changes the frames of the N rows after it only: from i+N+1
// on, each frame holds the same rows as before. So a change costs at
// most N+1 frames of N+1 rows each, whatever the partition's size; each
// row whose results change is retracted and emitted again, in order.

// insertBounded places r after its peers, emits it with its frame's
// results, then updates the N rows after it.
func (g *NonTimeOver) insertBounded(p *ntPart, k row.Kind, r row.Row, out operator.Emitter) {
	_, at := g.peers(p, g.order(r))
	p.rows = slices.Insert(p.rows, at, ntRow{r: row.Detach(r)})
	if g.opt.Batch {
		return
	}
	p.rows[at].res = g.frameResults(p, at)
	emit(out, k, r, p.rows[at].res)
	g.refresh(p, at+1, out)
}

// removeBounded takes out the first row equal to r among its peers,
// emits it as deleted with the results it had, then updates the N rows
// that followed it. A row not held is ignored, as the unbounded frame's
// remove does.
func (g *NonTimeOver) removeBounded(p *ntPart, r row.Row, out operator.Emitter) {
	lo, hi := g.peers(p, g.order(r))
	at := slices.IndexFunc(p.rows[lo:hi], func(x ntRow) bool { return sameRow(x.r, r) })
	if at < 0 {
		return
	}
	at += lo
	gone := p.rows[at]
	p.rows = slices.Delete(p.rows, at, at+1)
	if g.opt.Batch {
		return
	}
	emit(out, row.Delete, gone.r, gone.res)
	g.refresh(p, at, out)
}

// refresh recomputes the frames of the N rows from i on, whose frames a
// row arriving or leaving just before i changed, and updates those whose
// results changed.
func (g *NonTimeOver) refresh(p *ntPart, i int, out operator.Emitter) {
	for j := i; j < min(i+g.spec.Preceding, len(p.rows)); j++ {
		if res := g.frameResults(p, j); !sameRow(p.rows[j].res, res) {
			g.update(&p.rows[j], res, out)
		}
	}
}

// frameResults is the results of the row at i: the aggregates of the
// rows from i-N to i.
func (g *NonTimeOver) frameResults(p *ntPart, i int) row.Row {
	g.st.Release(g.slot)
	g.slot = g.st.Alloc("")
	for _, x := range p.rows[max(0, i-g.spec.Preceding) : i+1] {
		g.st.Update(g.slot, x.r, true)
	}
	return g.results(g.slot, i, i+1)
}

package windowop

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A window aggregate's Process folds its batch in passes, as a batch
// GroupAgg does (aggop.Store.FirstBad, FoldInserts): the kinds, widths
// and aggregate arguments of all the changes checked a column at a
// time, then each row's slice and slot, then each aggregate over all
// the rows in a loop of its own kind. Row by row, each row paid the
// aggregates' checks and dispatch, the window arithmetic (two
// divisions) and the lookups of its slice; here a row whose time falls
// in the last row's slice's times (rows in time order: thousands a
// slice) takes that slice without arithmetic (WindowAgg.place's lo, hi).
//
// The result and the state are row by row's: the slots are taken in the
// rows' order, each aggregate sees its values in that order, and nothing
// is emitted or freed during Process (windows fire on watermarks). A row
// the fast way does not take (its event time not of the type seen
// before, or out of range, or NULL; a bad argument; a late row) folds
// the rows before it and goes row by row (add), which drops it, or fails
// with the error row by row gives, after the same rows.

// batchRows is a WindowAgg's scratch for Process, kept between batches:
// the slot of each change taken since the last fold.
type batchRows struct {
	ids []int32
}

// foldChunk is how many changes Process checks, places and folds at a
// time: each pass reads the rows again, and a chunk's stay in the
// core's caches between the passes (a batch's do not: thousands of
// rows of values and their headers).
const foldChunk = 512

// placed is the slice of the last row placed, valid for a Process:
// rows at times in [lo, hi) count in it.
type placed struct {
	w      *slice
	lo, hi int64
	// keyless is the slice whose group is slot, without keys.
	keyless *slice
	slot    int32
}

// processBatch is Process for event-time windows that are not attached.
func (g *WindowAgg) processBatch(in *row.Batch) error {
	var at placed
	n := len(in.Changes)
	for from := 0; from < n; {
		to := min(from+foldChunk, n)
		bad, err := g.foldRun(in, from, to, &at)
		if err != nil {
			return err
		}
		if bad < to {
			// The checks refused change bad: row by row, it fails as
			// there.
			if err := g.addRow(in, bad); err != nil {
				return err
			}
			to = bad + 1
		}
		from = to
	}
	return nil
}

// foldRun folds changes from to to of in, up to the first one whose
// aggregate arguments the checks refuse, whose index it returns (to for
// none), or to a row that fails row by row, whose error it returns.
func (g *WindowAgg) foldRun(in *row.Batch, from, to int, at *placed) (int, error) {
	changes := in.Changes[:to]
	bad := from + g.st.FirstBad(changes[from:to]) // a row too short for an argument too
	wm := g.wm
	if g.opt.Batch {
		wm = operator.NoWatermark
	}
	col := g.spec.TimeCol
	ids := g.batch.ids[:0]
	fold := func(to int) {
		if to > from {
			g.st.FoldInserts(ids, changes[from:to])
		}
		ids, from = ids[:0], to
	}
	defer func() { g.batch.ids = ids[:0] }()
	for i := from; i < bad; i++ {
		c := &changes[i]
		r := c.Row
		ok := c.Kind == row.Insert && len(r) >= g.width
		var tv row.Value
		if ok {
			tv = r[col]
		}
		if !ok || tv.Type() != g.timeID || g.timeID == row.Null || tv.Micros() >= maxEventTime || tv.Micros() <= -maxEventTime {
			// A retraction, a row too short, the first row's time
			// type, a NULL, another type, a time out of range: row by
			// row, which says how.
			fold(i)
			if err := g.addRow(in, i); err != nil {
				return i, err
			}
			from, at.w = i+1, nil
			continue
		}
		t := g.toLocal(tv.Micros())
		if at.w == nil || t < at.lo || t >= at.hi {
			if at.w, at.lo, at.hi = g.place(t, wm); at.w == nil { // late
				fold(i)
				g.At(i)
				g.dropped++
				g.Drop()
				from = i + 1
				continue
			}
		}
		if len(g.keys) == 0 {
			// No key: a slice's one group, its slot kept while the
			// slice is (nothing frees a slot during Process).
			if at.w != at.keyless {
				g.kbuf = g.kbuf[:0]
				at.keyless, at.slot = at.w, g.slot(at.w)
			}
			ids = append(ids, at.slot)
			continue
		}
		g.kbuf = row.KeyOf(g.kbuf[:0], r, g.keys)
		ids = append(ids, g.slot(at.w))
	}
	fold(bad)
	return bad, nil
}

// addRow is change i of in row by row, its error named as EachChange
// names it.
func (g *WindowAgg) addRow(in *row.Batch, i int) error {
	g.At(i)
	c := &in.Changes[i]
	if err := g.add(c.Kind, c.Row); err != nil {
		return operator.ChangeError("window aggregate", in, i, err)
	}
	return nil
}

// place returns the slice a row at local (on the windows' clock) counts
// in, opening it and scheduling its windows if new, or nil for a row
// whose windows have all fired (late at watermark wm). Every time in
// [lo, hi) has the same answer while wm and the open slices stay: a
// TUMBLE window's, a HOP slide's or a CUMULATE step's times.
func (g *WindowAgg) place(local, wm int64) (w *slice, lo, hi int64) {
	s := &g.spec
	if s.Kind == Cumulate {
		start := windowStart(local, s.Offset, s.Size)
		lo = windowStart(local, s.Offset, s.Step)
		hi = lo + s.Step
		if g.due(start+s.Size) <= wm {
			return nil, lo, hi
		}
		c := g.cycle(start, wm)
		w = &c.shared // the row's step has fired: it is in every window left
		if g.due(hi) > wm {
			w = g.slice(hi)
		}
		return w, lo, hi
	}
	// TUMBLE is HOP with slide = size: one slice per window.
	slide := g.slide()
	lo = windowStart(local, s.Offset, slide)
	end := lo + slide
	last := end + s.Size - slide // the last window holding the slice
	if g.due(last) <= wm {
		return nil, lo, end
	}
	w = g.lastW
	if w == nil || w.end != end {
		if w = g.slices[end]; w == nil {
			w = g.slice(end)
			for e := end; e <= last; e += slide {
				if g.due(e) > wm {
					g.schedule(e)
				}
			}
		}
	}
	return w, lo, end
}

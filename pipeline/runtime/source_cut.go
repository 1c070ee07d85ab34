package runtime

import (
	"context"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Per-record watermarks. A source's watermark moves as each record is
// read (Flink's per-record watermark generator): a record goes out, then
// the watermark its watermark expression gives, if larger. Sending a
// watermark after every record would cost a message a row, so a batch
// goes out whole, and is cut only before a row that the watermark of the
// rows before it could make late: a row whose event time is at or below
// that watermark. Every event-time operator drops a row only when its
// event time is at or below the watermark (a window's last timestamp,
// an OVER's ordering time, an interval's bound are all at or above the
// row's time), so a row above the watermark is late nowhere, whether
// the watermark comes before or after it. In-order data and data out of
// order by less than the watermark's delay are never cut; the result is
// the same whatever the batch and fetch sizes.

// wmCut is where a source's batch is cut: the rows before at go out,
// then the watermark wm, then the rows from at on.
type wmCut struct {
	at int
	wm int64
}

// cutter finds the cuts of a batch as its rows are walked in order:
// run is the watermark the rows so far give, sent the last one sent.
type cutter struct {
	run, sent int64
	cuts      []wmCut
	// exact: the source's rows carry their event time (SourceNode.RowTime);
	// without it every rise of the watermark is a cut.
	exact bool
}

func newCutter(s *SourceNode, wm int64) cutter {
	return cutter{run: wm, sent: wm, exact: s.RowTime != nil && !s.everyRise}
}

// readsWatermark reports whether an operator of g reads the watermark
// row by row (Calc.OnWatermark: CURRENT_WATERMARK). Each of its rows
// must then see the watermark of the rows read before it, as in Flink,
// whatever the batches: every source sends a watermark wherever its
// watermark rises, and no Calc runs in its source's decoders (fuse),
// ahead of the watermarks.
func readsWatermark(g *Graph) bool {
	for _, op := range g.Ops {
		if c, ok := op.Op.(*Calc); ok && c.OnWatermark != nil {
			for _, s := range g.Sources {
				s.everyRise = true
			}
			return true
		}
	}
	return false
}

// check takes the row going out as change at, with its event time rt,
// before its watermark candidate is taken (advance): a record goes out
// before the watermark it gives.
func (c *cutter) check(at int, rt int64) {
	if c.run > c.sent && (!c.exact || rt <= c.run) {
		c.cuts = append(c.cuts, wmCut{at: at, wm: c.run})
		c.sent = c.run
	}
}

// advance takes the source's watermark after a row: it never goes back.
func (c *cutter) advance(wm int64) {
	if wm > c.run {
		c.run = wm
	}
}

// sendCut sends b's rows and the watermarks between them as the cuts
// say; it returns the last watermark sent (wm if none).
func (s *SourceNode) sendCut(ctx context.Context, b *row.Batch, cuts []wmCut, wm int64) (int64, error) {
	from := 0
	for _, c := range cuts {
		if c.at > from {
			if err := s.send(ctx, message{batch: piece(b, from, c.at)}); err != nil {
				return wm, err
			}
		}
		from = c.at
		wm = c.wm
		s.Stats.setWatermark(wm)
		if err := s.send(ctx, message{kind: msgWatermark, watermark: wm}); err != nil {
			return wm, err
		}
	}
	if from < b.Len() {
		if err := s.send(ctx, message{batch: piece(b, from, b.Len())}); err != nil {
			return wm, err
		}
	}
	return wm, nil
}

// piece returns changes lo to hi of b as a batch naming each change's
// record as b does. A piece of a batch a fusion mapped is marked as
// mapped (the Calc's node passes it on) but gives nothing back on
// release: its rows share the whole batch's memory.
func piece(b *row.Batch, lo, hi int) *row.Batch {
	if lo == 0 && hi == b.Len() {
		return b
	}
	p := &row.Batch{Changes: b.Changes[lo:hi:hi]}
	if b.Origin == nil && fusedOf(b) == nil {
		return p
	}
	from := make([]int32, hi-lo)
	for j := range from {
		from[j] = int32(lo + j)
	}
	d := derivedOrigin{parent: b.Origin, from: from}
	if fusedOf(b) != nil {
		p.Origin = &fusedOrigin{derivedOrigin: d, wm: operator.NoWatermark}
	} else {
		p.Origin = &d
	}
	return p
}

// fusedCuts finds the cuts of a batch a fusion mapped, given the
// watermark wm before it, from the event time and the batch's own
// watermark before each row the fusion recorded.
func (s *SourceNode) fusedCuts(fo *fusedOrigin, n int, wm int64) ([]wmCut, int64) {
	if fo.sparse {
		return sparseCuts(fo.behind, wm), max(wm, fo.wm)
	}
	if fo.before == nil {
		return nil, max(wm, fo.wm)
	}
	c := newCutter(s, wm)
	if fo.rowTimes == nil {
		c.exact = false
	}
	for j := 0; j < n; j++ {
		var rt int64
		if fo.rowTimes != nil {
			rt = fo.rowTimes[j]
		}
		// The candidates of the rows before j (also those filtered out)
		// are folded into before[j].
		c.advance(fo.before[j])
		c.check(j, rt)
	}
	c.advance(fo.wm)
	return c.cuts, c.run
}

// wmBehind is a row of a batch (at) whose event time is at or below wm,
// the watermark of the rows before it in the batch.
type wmBehind struct {
	at int32
	wm int64
}

// sparseCuts is fusedCuts' answer for a source whose rows carry their
// event time, from the rows behind the watermark of the rows before
// them, given the watermark wm before the batch. The running watermark
// before row j is max(wm, before[j]), before[j] the batch's own
// (rising); a cut comes before j once it is above the last one sent,
// which is at least wm, so then it is before[j] itself, and the row's
// time rt must be at or below it: rt <= before[j], a row of behind. Its
// cut is then the rows' watermark once that is above the last sent.
func sparseCuts(behind []wmBehind, wm int64) []wmCut {
	var cuts []wmCut
	sent := wm
	for _, b := range behind {
		if b.wm > sent {
			cuts = append(cuts, wmCut{at: int(b.at), wm: b.wm})
			sent = b.wm
		}
	}
	return cuts
}

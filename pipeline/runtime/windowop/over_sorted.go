package windowop

import (
	"fmt"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// A batch run's OVER over input sorted by time (WindowOptions.Sorted:
// sortop.TimeSorted feeds it) gets its rows in (time, arrival) order, a
// time's rows all in one batch, each batch followed by the watermark
// below the next one's first time. Queued until that watermark, each
// row would be pushed into the waiting queue and popped again at once,
// in the same order: so such an OVER steps each batch's rows as they
// come instead (direct), time by time, as the watermark would have, and
// holds no row waiting. Its results and their order are the queued
// path's; a row before the last one stepped (input not sorted as the
// contract says) is an error, not a wrong result.

// inOrder checks that a row of time ts may be stepped now: no earlier
// than the rows before it, and past every time of an earlier batch (a
// time's rows are peers of one step).
func (g *OverAgg) inOrder(ts int64) error {
	if ts < g.lastTime || ts == g.lastTime && len(g.ready) == 0 {
		return fmt.Errorf("over aggregate: sorted input out of time order: a row at %d µs after one at %d µs", ts, g.lastTime)
	}
	g.lastTime = ts
	return nil
}

// emitSorted steps the rows of a batch (g.ready), time by time.
func (g *OverAgg) emitSorted(out operator.Emitter) error {
	rows, col := g.ready, g.spec.TimeCol
	for i := 0; i < len(rows); {
		ts := rows[i].r[col].Micros()
		j := i + 1
		for j < len(rows) && rows[j].r[col].Micros() == ts {
			j++
		}
		if err := g.step(rows[i:j], 0, out); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// ReleasesInput implements operator.InputReleaser: stepping a batch's
// rows as they come (direct), the OVER keeps none of them (a frame keeps
// a copy of the columns it reads, an output row a copy of its values).
func (g *OverAgg) ReleasesInput() bool { return g.direct }

package windowop

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// The window aggregates' output rows are built in their emitter's memory
// when it lends it (operator.RowCarver): slabs that the node's one
// reader gives back once it is done with the batch, so a fired window or
// session costs no allocation of its row, nor its zeroing and
// collection. Otherwise (several readers, a keyed worker's own emitter,
// a test's) they come from the operator's arena.

// outRow returns a row of w values for an output row, to be filled whole
// and emitted on out before any other row.
func outRow(arena *aggop.RowArena, out operator.Emitter, w int) row.Row {
	if rc, ok := out.(operator.RowCarver); ok {
		return rc.CarveRow(w)
	}
	return arena.Row(w)
}

// CarvesRows implements operator.Carving: a fired window's row (outRow).
func (g *WindowAgg) CarvesRows() bool { return true }

// CarvesRows implements operator.Carving: a fired session's row (outRow).
func (g *SessionAgg) CarvesRows() bool { return true }

var (
	_ operator.Carving = (*WindowAgg)(nil)
	_ operator.Carving = (*SessionAgg)(nil)
)

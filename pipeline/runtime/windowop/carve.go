package windowop

import "github.com/etld/etld/pipeline/runtime/operator"

// The window aggregates' output rows are built in their emitter's memory
// when it lends it (operator.RowCarver): slabs that the node's one
// reader gives back once it is done with the batch, so a fired window or
// session costs no allocation of its row, nor its zeroing and
// collection. Otherwise (several readers, a keyed worker's own emitter,
// a test's) they come from the operator's arena (aggop.RowArena.RowFrom).

// CarvesRows implements operator.Carving: a fired window's row (RowFrom).
func (g *WindowAgg) CarvesRows() bool { return true }

// CarvesRows implements operator.Carving: a fired session's row (RowFrom).
func (g *SessionAgg) CarvesRows() bool { return true }

// CarvesRows implements operator.Carving: an OVER's output row, one an
// input row (RowFrom).
func (g *OverAgg) CarvesRows() bool { return true }

var (
	_ operator.Carving = (*WindowAgg)(nil)
	_ operator.Carving = (*SessionAgg)(nil)
	_ operator.Carving = (*OverAgg)(nil)
)

package windowop

import (
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// StateBytes of the window operators (operator.StateMemory): what their
// arrays hold, exactly, plus state.RowBytes and state.MapEntryBytes for
// what they keep as Go values, counted from StateEntries so that asking
// costs no walk over the state. Floors: the bytes of strings in rows and
// keys, and an OVER partition's frame of rows, are left out.

var (
	sessionBytes = int64(unsafe.Sizeof(session{})) + 8 + int64(unsafe.Sizeof(sessionTimer{}))
	sliceBytes   = int64(unsafe.Sizeof(slice{}))
)

// StateBytes implements StateMemory: the accumulators, each group's
// place in its slice's order (its slot and key id) and its slot's key id,
// the entries of the slices' indexes built (a map of int32s, about 16
// bytes an entry at its load), and the key ids: their table, each one's
// string header, references and newest slice (the strings' bytes are
// left out).
func (g *WindowAgg) StateBytes() int64 {
	return g.st.MemBytes() + g.StateEntries()*8 + int64(cap(g.slotKid)+cap(g.marks))*4 + g.indexed*16 +
		g.kids.t.MemBytes() + int64(g.kids.len())*(16+4+8) +
		int64(len(g.slices))*(state.MapEntryBytes+sliceBytes) + int64(cap(g.pending))*8
}

// StateBytes implements StateMemory: the accumulators and the open
// sessions with their timers.
func (g *SessionAgg) StateBytes() int64 {
	return g.st.MemBytes() + int64(g.set.live)*(sessionBytes+state.MapEntryBytes)
}

// StateBytes implements StateMemory: the rows held and their sessions.
func (t *SessionTable) StateBytes() int64 {
	w := state.RowWidth(t.width, func(yield func(row.Row) bool) {
		for _, rows := range t.Held {
			if len(rows) > 0 && !yield(rows[0]) {
				return
			}
		}
	})
	return t.rows*state.RowBytes(w) + int64(cap(t.Held))*24 + int64(cap(t.free))*4 +
		int64(t.set.live)*(sessionBytes+state.MapEntryBytes)
}

// StateBytes implements StateMemory: the accumulators, the partitions
// and the rows waiting for the watermark.
func (g *OverAgg) StateBytes() int64 {
	w := state.RowWidth(g.width, func(yield func(row.Row) bool) {
		for _, h := range g.held {
			if h.r != nil && !yield(h.r) {
				return
			}
		}
	})
	n := g.st.MemBytes() + int64(len(g.parts))*(state.MapEntryBytes+int64(unsafe.Sizeof(overPart{}))+8)
	n += int64(cap(g.held))*int64(unsafe.Sizeof(overRow{})) + int64(g.queue.Len())*(state.RowBytes(w)+int64(unsafe.Sizeof(overWait{})))
	return n + int64(cap(g.vacant))*4
}

// StateBytes implements StateMemory: the rows of the open windows'
// partitions (only the top ones are kept).
func (w *WindowRank) StateBytes() int64 {
	width := state.RowWidth(w.spec.EndCol+1, func(yield func(row.Row) bool) {
		for _, b := range w.windows {
			for _, p := range b.parts {
				if len(p.Groups) > 0 && len(p.Groups[0]) > 0 {
					yield(p.Groups[0][0])
					return
				}
			}
		}
	})
	var parts int64
	for _, b := range w.windows {
		parts += int64(len(b.order))
	}
	return w.rows*(state.RowBytes(width)+24) + parts*(state.MapEntryBytes+16+48) + int64(len(w.windows))*(state.MapEntryBytes+48)
}

var (
	_ operator.StateMemory = (*WindowAgg)(nil)
	_ operator.StateMemory = (*SessionAgg)(nil)
	_ operator.StateMemory = (*SessionTable)(nil)
	_ operator.StateMemory = (*OverAgg)(nil)
	_ operator.StateMemory = (*WindowRank)(nil)
)

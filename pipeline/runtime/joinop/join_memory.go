package joinop

import (
	"unsafe"

	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// StateBytes of the time-bounded joins (operator.StateMemory). The
// interval join keeps its rows in the state package's arrays, whose
// memory is exact; the temporal and window joins keep rows as Go values,
// counted from their entries with state.RowBytes of the wider side, so
// that asking walks nothing. Floors: the bytes of strings in rows are
// left out.

// StateBytes implements StateMemory: the key index, the keys' lists and
// timers, and each side's cached rows.
func (j *IntervalJoin) StateBytes() int64 {
	n := j.index.MemBytes() + int64(cap(j.keys))*int64(unsafe.Sizeof(ijKey{})) + int64(j.timers[0].Len()+j.timers[1].Len())*24
	for i := range j.sides {
		s := &j.sides[i]
		n += int64(cap(s.ents))*int64(unsafe.Sizeof(ijEnt{})) + s.store.MemBytes() + int64(cap(s.free))*4
	}
	return n
}

// StateBytes implements StateMemory: per key its map entries, per held
// left row and version its row.
func (j *TemporalJoin) StateBytes() int64 {
	w := max(j.spec.LeftWidth, j.spec.RightWidth)
	keys := int64(len(j.Keys))*(state.MapEntryBytes+int64(unsafe.Sizeof(temporalKey{}))+8) + int64(len(j.dirty))*state.MapEntryBytes
	return keys + j.entries*(state.RowBytes(w)+int64(unsafe.Sizeof(temporalVersion{})))
}

// StateBytes implements StateMemory: per open window its map entry, per
// row held its row (a key's entry in its window is counted per row, a
// ceiling for keys with several).
func (j *WindowJoin) StateBytes() int64 {
	w := max(j.spec.LeftWidth, j.spec.RightWidth)
	perKey := state.MapEntryBytes + int64(unsafe.Sizeof(wjKey{})) + 8 + 16
	return int64(len(j.Windows))*(state.MapEntryBytes+64) + j.rows*(state.RowBytes(w)+8+perKey)
}

var (
	_ operator.StateMemory = (*IntervalJoin)(nil)
	_ operator.StateMemory = (*TemporalJoin)(nil)
	_ operator.StateMemory = (*WindowJoin)(nil)
)

package rankop

import (
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// StateBytes of the Top-N operators (operator.StateMemory): the key
// table's arrays exactly, and per row held state.RowBytes of a width
// sampled from the first partition, counted from the rows held so that
// asking walks nothing. A floor: the bytes of strings in rows are left
// out.

// StateBytes implements StateMemory: the partitions' ids and the rows
// of each partition, in their groups.
func (t *TopN) StateBytes() int64 {
	if pk := t.pack; pk != nil {
		// Packed: the arena (dead regions included until compacted) and
		// the slots, exactly.
		return t.keys.MemBytes() + int64(cap(pk.slots))*int64(unsafe.Sizeof(packSlot{})) + int64(cap(pk.buf)) +
			int64(cap(t.floor))*8 + int64(cap(t.floorSet))
	}
	w := state.RowWidth(1, func(yield func(row.Row) bool) {
		for _, p := range t.parts {
			if p != nil && len(p.Groups) > 0 && len(p.Groups[0]) > 0 && !yield(p.Groups[0][0]) {
				return
			}
		}
	})
	parts := int64(t.keys.Len()) * (int64(unsafe.Sizeof(Partition{})) + 8)
	return t.keys.MemBytes() + int64(cap(t.parts))*8 + parts + t.rows*(state.RowBytes(w)+24) +
		int64(cap(t.floor))*8 + int64(cap(t.floorSet))
}

// StateBytes implements StateMemory: per partition its map entry and its
// own small map of rows (partitionMapBytes), and per row its entry by
// upsert key and its place in the sort groups.
func (t *UpdatableTopN) StateBytes() int64 {
	w := state.RowWidth(1, func(yield func(row.Row) bool) {
		for _, p := range t.parts {
			for _, r := range p.rows {
				yield(r)
				return
			}
		}
	})
	parts := int64(len(t.parts)) * (state.MapEntryBytes + int64(unsafe.Sizeof(fastPartition{})) + partitionMapBytes)
	return parts + t.rows*(state.RowBytes(w)+state.MapEntryBytes+16)
}

// partitionMapBytes is what a partition's map of rows and its groups'
// slice cost before their first rows: a map's header and first bucket.
const partitionMapBytes = 256

var (
	_ operator.StateMemory = (*TopN)(nil)
	_ operator.StateMemory = (*UpdatableTopN)(nil)
)

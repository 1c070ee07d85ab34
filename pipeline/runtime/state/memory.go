package state

import (
	"unsafe"

	"github.com/etld/etld/pipeline/row"
)

// Estimates for operator.StateMemory of state held as Go values (rows in
// slices, maps by key) rather than in this package's arrays, whose
// MemBytes are exact. They are floors that leave out the bytes of
// strings a row's values point to, and they are tested against the heap
// a real state takes, within a factor.

// valueBytes is the size of one row.Value.
const valueBytes = int64(unsafe.Sizeof(row.Value{}))

// RowBytes is the memory of a row of width values in its own
// allocation, with the slice header that holds it.
func RowBytes(width int) int64 { return 24 + int64(width)*valueBytes }

// MapEntryBytes is what one entry of a Go map keyed by a string costs
// beside its value, at the map's load: the key's header and its share
// of the buckets, and a short key's own allocation.
const MapEntryBytes = 64

// RowWidth returns the width of the first row rows finds, looking at no
// more than a few (a cheap sample for StateBytes), or fallback.
func RowWidth(fallback int, rows func(yield func(row.Row) bool)) int {
	w, seen := fallback, 0
	rows(func(r row.Row) bool {
		seen++
		if r != nil {
			w = len(r)
			return false
		}
		return seen < 16
	})
	return w
}

package file

import "testing"

// SetReader sets the parallel reader's tuning for one test (withReader),
// for the external tests.
func SetReader(t testing.TB, workers, block, buffer int) { withReader(t, workers, block, buffer) }

// Recycled is how many batches the sources took back (Recycle).
func Recycled() int64 { return recycled.Load() }

// ReusedMapped is how many decoded batches the workers took back
// unzeroed after the runtime mapped them (push).
func ReusedMapped() int64 { return reusedMapped.Load() }

// ReusedBuffers is how many read buffers the sources read into again
// (bufPool).
func ReusedBuffers() int64 { return reusedBufs.Load() }

// SetSelect lets sources decode some columns only (SelectColumns) or
// not, until the test ends.
func SetSelect(t testing.TB, on bool) {
	was := noSelect
	noSelect = !on
	t.Cleanup(func() { noSelect = was })
}

// Selected is how many sources decoded some columns only.
func Selected() int64 { return selected.Load() }

package row

import "unsafe"

// Batches and Positions on cache lines of their own.
//
// A parallel source's decode workers (sources/file) each fill a batch at
// a time: every row they decode writes the batch's header (Changes' and
// the arena's lengths) and its Positions' (nums', offs'). A Batch is 72
// bytes and a Positions 88: Go allocates them in its 80- and 96-byte size
// classes, where two neighbours share a 64-byte cache line. When two
// workers on two cores fill two neighbours, each row's write takes the
// line from the other core (false sharing). The batches circulate (a
// source reuses the ones its consumer gives back), so whether two that
// are filled at once are neighbours is settled early in a run and holds
// for all of it: a 10M-row GROUP BY took 0.95 CPU s in one run and
// 1.5-1.6 in the next, its decode alone 0.6 against 1.0 (bench/README.md,
// "Two modes of the 1k-key GROUP BYs"). Allocated in a block of
// lineBytes, a Batch or a Positions starts a line and shares none: the
// 128-byte size class holds objects at multiples of 128 from a page's
// start. 128, not 64: two lines, as some cores fetch them in pairs.
const lineBytes = 128

type paddedBatch struct {
	b Batch
	// The array's length fails to compile if Batch outgrows a block.
	_ [lineBytes - unsafe.Sizeof(Batch{})]byte
}

type paddedPositions struct {
	p Positions
	_ [lineBytes - unsafe.Sizeof(Positions{})]byte
}

// newBatch is a Batch of its own cache lines.
func newBatch() *Batch { return &new(paddedBatch).b }

// newPositions is a Positions of its own cache lines.
func newPositions() *Positions { return &new(paddedPositions).p }

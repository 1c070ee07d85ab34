package operator

import "io"

// StreamSnapshotter is a Snapshotter whose state can be larger than a
// second copy of it may take in memory (a GROUP BY over millions of
// keys). With a checkpoint store the engine calls SnapshotTo at a
// barrier instead of Snapshot: it writes the same bytes Snapshot would
// return to w, in pieces, and w passes them to the store a chunk at a
// time, so the whole snapshot is never held. RestoreFrom reads such a
// snapshot back from r, of at most size bytes, decoding it as it reads
// (row.NewStreamDecoder): it never holds the whole snapshot either.
// Restore still takes the bytes of a checkpoint that holds them whole
// (one written before parts, or by Snapshot). Both are called as
// Snapshot and Restore are: from the operator's goroutine, or before
// it starts.
type StreamSnapshotter interface {
	Snapshotter
	SnapshotTo(w io.Writer) error
	RestoreFrom(r io.Reader, size int64) error
}

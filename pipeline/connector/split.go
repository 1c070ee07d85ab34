package connector

import "github.com/etld/etld/pipeline/row"

// SplitSource is a source that reads several splits at once (a topic's
// partitions), whose records interleave in an order that depends on
// fetching, not on their event times. The runtime keeps a watermark for
// each split and the source's watermark is their minimum, so a split
// read ahead of the others makes none of their rows late; a split with
// no record for the source's idle_timeout stops holding it back until
// it has one again (Flink's per-split watermarks and
// table.exec.source.idle-timeout).
type SplitSource interface {
	// Splits names the splits the source reads now (its assignment),
	// read or not yet: a split without a record holds the watermark
	// back until it has one or goes idle. Called between Reads.
	Splits() []string
	// Split names the split change i of b came from, b a batch Read
	// returned: a name of Splits, the same in every run.
	Split(b *row.Batch, i int) string
}

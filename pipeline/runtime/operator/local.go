package operator

import "github.com/etld/etld/pipeline/row"

// Local phases (two-phase aggregation): an operator whose input batches
// a source's decode goroutines may fold ahead of it, each on its own,
// into partial results that the operator merges (Flink's
// LocalGroupAggregate before a GlobalGroupAggregate). The engine runs
// the fold where it maps the batches (its fusion of a Calc into the
// source) and passes the batch, cut to one row per key, on with the
// partial in its Origin (PartialOrigin).

// LocalPhaser is an operator that may take partials.
type LocalPhaser interface {
	// LocalPhase returns the fold for the decoders, nil when the
	// operator as planned takes none.
	LocalPhase() LocalFolder
}

// LocalFolder folds batches into partials; safe for concurrent use.
type LocalFolder interface {
	// Fold folds b's rows into a partial and cuts b's changes to one
	// row per key, in the order the keys were first seen; last[j] is
	// the index, before the cut, of key j's last row. A nil partial
	// leaves b as it was (the operator then takes its rows).
	Fold(b *row.Batch) (p Partial, last []int32)
	// Keys are the input columns of the keys: a partial's rows need
	// those alone.
	Keys() []int
}

// Partial is the fold of one batch.
type Partial interface {
	// Rows is how many input rows it folded.
	Rows() int
}

// PartialOrigin is the Origin of a batch whose rows are a partial's
// keys; LocalPartial is nil for a batch of rows.
type PartialOrigin interface {
	LocalPartial() Partial
}

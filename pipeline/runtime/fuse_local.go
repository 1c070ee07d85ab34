package runtime

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// The local phase of a two-phase aggregation (operator.LocalPhaser, a
// GroupAgg's: aggop/groupagg_local.go) runs in the decoders after the
// fused Calc: each mapped batch is folded into a partial per key, and
// goes on cut to one row per key with the partial in its fusedOrigin,
// through the Calc's node (which passes mapped batches on as they are)
// to the aggregate's, which merges it. The counters of the nodes on the
// way count the rows the partial folded (rowsOf), as without it. A batch
// the fusion did not map (on_error) comes as rows and takes the usual
// way; so does one the fold leaves as it was.
//
// Only when nothing else reads the rows on the way: the fusion has one
// reader, whose node (or the Calc chained after it) has the aggregate as
// its only reader, and the source has no watermark (whose cuts fall
// between rows, source_cut.go). explain is not changed: the plan is the
// same, only where part of the aggregate's work runs.

// localPhase returns the fold of the operator that reads what f's one
// reader maps, nil when there is none.
func (f *fusion) localPhase(opOf map[*Node]*OpNode) operator.LocalFolder {
	if len(f.readers) != 1 || f.times || f.src.EventTime != nil || f.readers[0].releaser == nil {
		return nil
	}
	op := opOf[f.readers[0].releaser]
	if op == nil {
		return nil
	}
	lp, ok := op.Op.(operator.LocalPhaser)
	if !ok {
		return nil
	}
	return lp.LocalPhase()
}

// foldLocal folds b, a batch f mapped, into a partial when it can.
func (f *fusion) foldLocal(b *row.Batch) *row.Batch {
	fo := fusedOf(b)
	if fo == nil || fo.parts != nil || b.Len() == 0 {
		return b
	}
	p, last := f.local.Fold(b)
	if p == nil {
		return b
	}
	// Key j's position is its last row's, which the mini-batch's flush
	// names, as it names a key's last change without the local phase.
	if fo.same {
		fo.from = last
	} else {
		for j, i := range last { // last[j] >= j: from[j] is read no more
			fo.from[j] = fo.from[i]
		}
		fo.from = fo.from[:len(last)]
	}
	fo.partial = p
	return b
}

// LocalPhase implements operator.LocalPhaser: with one worker, which
// takes every batch as it comes, its operator's; with several, none (a
// partial's keys would be cut among them, its accumulators not).
func (k *Keyed) LocalPhase() operator.LocalFolder {
	if len(k.workers) != 1 {
		return nil
	}
	if lp, ok := k.workers[0].op.(operator.LocalPhaser); ok {
		return lp.LocalPhase()
	}
	return nil
}

// LocalPartial implements operator.PartialOrigin.
func (fo *fusedOrigin) LocalPartial() operator.Partial { return fo.partial }

// direct reports whether the batch's changes are the decoded batch's,
// one for one: a batch the source decoded as the Calc's rows and no
// local phase cut.
func (fo *fusedOrigin) direct() bool { return fo.same && fo.partial == nil }

// rowsOf is how many rows b stands for: the rows a partial folded, or
// its changes.
func rowsOf(b *row.Batch) int {
	if fo := fusedOf(b); fo != nil && fo.partial != nil {
		return fo.partial.Rows()
	}
	return b.Len()
}

package runtime

import (
	"github.com/etld/etld/pipeline/connector"
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

// localBatchRows is the least batch size of a source whose batches a
// local phase folds: a whole block of the parallel reader (128 KiB,
// some thousand rows) in one batch, and so one partial per key and
// block. At the pipeline's 1024 rows a 1k-key input had 630 keys a
// batch, and the fold cost more than it saved (bench/README.md).
const localBatchRows = 4096

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

// foldLocal folds out, the batch f mapped of the decoded batch b, into
// a partial when it can, and returns the batch to send on: a new one,
// one row per key holding the key's columns alone (their strings copied
// out of the read buffers into one string of the batch's own), carved
// from f's slabs. The rows out held are done with here, on the decoding
// core: the decoded batch goes back to the source's decoders
// (BatchRecycler) and a mapped batch's slabs to f's pool, so that what
// crosses to the aggregate's core is the keys and their accumulators,
// not every row, and the decoders write into memory their own core
// last held. A batch left as it was goes on as it is.
func (f *fusion) foldLocal(b, out *row.Batch) *row.Batch {
	fo := fusedOf(out)
	if fo == nil || fo.parts != nil || out.Len() == 0 {
		return out
	}
	p, last := f.local.Fold(out)
	if p == nil {
		if out != b {
			fo.back = f.madeBack // made: its buffer comes back with it
		}
		return out
	}
	keys := out.Len()
	w := f.keyWidth
	slab := f.slabs.get(keys * w)
	clear(slab)
	pb := &row.Batch{Changes: f.slabs.getChanges(keys)}
	text := f.keyText(out.Changes)
	for j := range keys {
		r := slab[j*w : (j+1)*w : (j+1)*w]
		src := out.Changes[j].Row
		for _, k := range f.keyCols {
			v := src[k]
			switch v.Type() {
			case row.String:
				n := len(v.Str())
				v, text = row.StringValue(text[:n]), text[n:]
			case row.Bytes, row.Array, row.Map, row.Struct:
				v = row.DetachValue(v)
			}
			r[k] = v
		}
		pb.Changes = append(pb.Changes, row.Change{Kind: row.Insert, Row: r})
	}
	// Key j's position is its last row's, which the mini-batch's flush
	// names, as it names a key's last change without the local phase.
	from := make([]int32, keys)
	for j, i := range last {
		from[j] = i
		if !fo.same {
			from[j] = fo.from[i]
		}
	}
	pb.Origin = &fusedOrigin{derivedOrigin: derivedOrigin{parent: fo.parent, from: from}, records: fo.records, kept: fo.kept, wm: fo.wm, mid: fo.mid,
		slabs: [][]row.Value{slab}, pool: f.slabs, by: fo.by, partial: p, back: f.madeBack}
	f.doneWith(b, out, fo)
	return pb
}

// keyText returns the bytes of the STRING keys of changes' rows, back to
// back in one string, in the order foldLocal takes them.
func (f *fusion) keyText(changes []row.Change) string {
	if !f.keyStrings {
		return ""
	}
	n := 0
	for i := range changes {
		for _, k := range f.keyCols {
			if v := changes[i].Row[k]; v.Type() == row.String {
				n += len(v.Str())
			}
		}
	}
	buf := make([]byte, 0, n)
	for i := range changes {
		for _, k := range f.keyCols {
			if v := changes[i].Row[k]; v.Type() == row.String {
				buf = append(buf, v.Str()...)
			}
		}
	}
	return string(buf)
}

// doneWith gives back, on the decoding goroutine, what the folded batch
// out held: b, the decoded batch, to the source's decoders when out is
// b (picked columns) or b is the source's (filtered in place); out's
// slabs and change list to f's pool when the fusion made it. No value of
// either is read after: the partial batch holds copies.
func (f *fusion) doneWith(b, out *row.Batch, fo *fusedOrigin) {
	if out != b {
		for _, s := range fo.slabs {
			f.slabs.put(s)
		}
		f.slabs.putChanges(out.Changes)
		out.Changes, fo.slabs = nil, nil
		if fo.hold != nil {
			fo.hold.done()
		}
		return
	}
	if f.decodedBack != nil {
		f.decodedBack(b)
	}
}

// setLocal sets up f's local phase, when the operator reading its rows
// has one.
func (f *fusion) setLocal(opOf map[*Node]*OpNode) {
	f.local = f.localPhase(opOf)
	if f.local == nil {
		return
	}
	mt, ok := f.src.Source.(connector.MappedTextRecycler)
	if !ok {
		f.local = nil // the partial batches' buffers would never be reused
		return
	}
	f.madeBack = mt.MappedTextRecycle()
	if r, ok := f.src.Source.(connector.BatchRecycler); ok {
		f.decodedBack = r.Recycle
	}
	f.keyCols = f.local.Keys()
	for _, k := range f.keyCols {
		f.keyWidth = max(f.keyWidth, k+1)
	}
	f.keyStrings = true // cheap to find out per batch: keyText counts
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

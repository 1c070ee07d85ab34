package runtime

import "github.com/etld/etld/pipeline/row"

// batchEmitter gathers emitted changes into batches of up to size rows.
// With flow set, a batch that fills goes on at once, while the operator
// is still emitting: one input change may emit any number of rows (a
// join of a key that matches a million rows), and what the operator
// emits must not pile up in memory until it returns; the send waits
// while the next node is behind, so the operator waits too. It carries
// positions (operator.Tracker): between begin and take, every batch it
// makes comes from the one input batch begin was given.
type batchEmitter struct {
	size  int
	batch *row.Batch
	full  []*row.Batch
	// flow sends a full batch on; nil gathers them in full for take.
	// Its first error is kept in err, and what is emitted after it is
	// dropped: the run is failing.
	flow func(*row.Batch) error
	err  error
	// src is the origin of the input batch being processed, nil when it
	// has none (and for a watermark or the end of input); cur is the
	// input change the next emitted ones come from, -1 for none; from
	// parallels batch.Changes while src is set.
	src  row.Origin
	cur  int32
	from []int32
	// last is the length of the last batch taken: a new batch starts
	// with room for as many changes, so that one emitting as many changes
	// as it reads (a Calc) does not grow its slices from 256 each time.
	last int
	// slab is what is left of the slab the rows an operator carves
	// (carve) are cut from, slabs the slabs of the batch being filled.
	// With pool set, the slabs come from it, each belongs to one batch,
	// and they go back once by, the node's one reader, releases that
	// batch (release); without it they are new, and never reused.
	slab  []row.Value
	slabs [][]row.Value
	pool  *slabPool
	by    *Node
	// textBy, when set, is the node's reader, to which each batch gets
	// a share of its input's text hold, inHold (shareText).
	textBy *Node
	inHold *textHold
}

func newBatchEmitter(size int) *batchEmitter { return &batchEmitter{size: size, cur: -1} }

// begin starts the emissions caused by in, or by no input batch when in
// is nil. Every batch of the previous input must have been taken.
func (e *batchEmitter) begin(in *row.Batch) {
	e.src, e.cur, e.inHold = nil, -1, nil
	if in != nil {
		e.src = in.Origin
	}
}

// At implements tracker.
func (e *batchEmitter) At(i int) { e.cur = int32(i) }

func (e *batchEmitter) Emit(k row.Kind, r row.Row) {
	if e.batch == nil {
		n := min(e.size, max(e.last, 256))
		if e.pool != nil {
			// A list the reader gave back with its batch's slabs.
			e.batch = &row.Batch{Changes: e.pool.getChanges(n)}
		} else {
			e.batch = &row.Batch{Changes: make([]row.Change, 0, n)}
		}
		if e.src != nil {
			e.from = make([]int32, 0, n)
		}
	}
	e.batch.Append(k, r)
	if e.src != nil {
		e.from = append(e.from, e.cur)
	}
	if e.batch.Len() >= e.size {
		e.seal()
		b := e.batch
		e.batch = nil
		switch {
		case e.flow == nil:
			e.full = append(e.full, b)
		case e.err == nil:
			e.err = e.flow(b)
		}
	}
}

// CarveRow implements operator.RowCarver (carve).
func (e *batchEmitter) CarveRow(w int) row.Row { return e.carve(w) }

// carve implements rowCarver: a row of w values in the memory of the
// batch the next Emit appends to.
func (e *batchEmitter) carve(w int) row.Row {
	if len(e.slab) < w {
		n := max(w, slabValues)
		if e.pool == nil {
			e.slab = make([]row.Value, n)
		} else {
			e.slab = e.pool.get(n)
			e.slabs = append(e.slabs, e.slab)
		}
	}
	r := e.slab[:w:w]
	e.slab = e.slab[w:]
	return r
}

// seal gives the current batch its origin, and with a pool the slabs its
// rows were carved from: the next batch's rows start a slab of their
// own, since the reader may give this batch's back before it reads the
// next.
func (e *batchEmitter) seal() {
	e.last = e.batch.Len()
	if e.slabs != nil {
		so := &slabOrigin{slabs: e.slabs, pool: e.pool, by: e.by}
		if e.src != nil {
			so.derivedOrigin = derivedOrigin{parent: e.src, from: e.from}
			e.shareText(&so.derivedOrigin)
		}
		e.batch.Origin = so
		e.slabs, e.slab, e.from = nil, nil, nil
		return
	}
	if e.src != nil {
		d := &derivedOrigin{parent: e.src, from: e.from}
		e.shareText(d)
		e.batch.Origin = d
		e.from = nil
	}
}

// failed returns the error of a batch flow could not send, and forgets
// it.
func (e *batchEmitter) failed() error {
	err := e.err
	e.err = nil
	return err
}

// take returns the batches gathered so far, the partial one included.
func (e *batchEmitter) take() []*row.Batch {
	out := e.full
	if e.batch != nil && e.batch.Len() > 0 {
		e.seal()
		out = append(out, e.batch)
	}
	// Slabs of rows carved and never emitted (a projection that failed)
	// are nobody's.
	for _, s := range e.slabs {
		e.pool.put(s)
	}
	e.full, e.batch, e.from, e.slabs, e.slab = nil, nil, nil, nil, nil
	return out
}

// slabOrigin is the origin of a batch whose rows were carved from slabs
// of a pool (batchEmitter.carve): they go back to the pool once by, the
// one node that reads the batch, is done with it (release).
type slabOrigin struct {
	derivedOrigin
	slabs [][]row.Value
	pool  *slabPool
	by    *Node
}

// SlabRowsOnly implements operator.SlabRows: the rows were carved.
func (so *slabOrigin) SlabRowsOnly() bool { return true }

// derivedOrigin is the Origin of an operator's output batch: change i
// came from change from[i] of the input batch whose origin is parent, or
// from no record when from[i] < 0.
type derivedOrigin struct {
	parent row.Origin
	from   []int32
	// hold, if set, is the text hold the batch has a share of, which
	// holdBy, its one reader, gives up (fuse_hold.go).
	hold   *textHold
	holdBy *Node
}

// Position implements row.Origin.
func (d *derivedOrigin) Position(i int) string {
	if i < 0 || i >= len(d.from) || d.from[i] < 0 {
		return ""
	}
	return d.parent.Position(int(d.from[i]))
}

// Record implements row.RecordOrigin when the parent does.
func (d *derivedOrigin) Record(i int) (string, int64, bool) {
	if i < 0 || i >= len(d.from) || d.from[i] < 0 {
		return "", 0, false
	}
	ro, ok := d.parent.(row.RecordOrigin)
	if !ok {
		return "", 0, false
	}
	return ro.Record(int(d.from[i]))
}

// Locate implements row.Locator when the parent does.
func (d *derivedOrigin) Locate(i int) (row.Location, bool) {
	if i < 0 || i >= len(d.from) || d.from[i] < 0 {
		return row.Location{}, false
	}
	lo, ok := d.parent.(row.Locator)
	if !ok {
		return row.Location{}, false
	}
	return lo.Locate(int(d.from[i]))
}

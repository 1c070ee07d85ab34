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
}

func newBatchEmitter(size int) *batchEmitter { return &batchEmitter{size: size, cur: -1} }

// begin starts the emissions caused by in, or by no input batch when in
// is nil. Every batch of the previous input must have been taken.
func (e *batchEmitter) begin(in *row.Batch) {
	e.src, e.cur = nil, -1
	if in != nil {
		e.src = in.Origin
	}
}

// At implements tracker.
func (e *batchEmitter) At(i int) { e.cur = int32(i) }

func (e *batchEmitter) Emit(k row.Kind, r row.Row) {
	if e.batch == nil {
		e.batch = &row.Batch{Changes: make([]row.Change, 0, min(e.size, max(e.last, 256)))}
		if e.src != nil {
			e.from = make([]int32, 0, cap(e.batch.Changes))
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

// seal gives the current batch its origin.
func (e *batchEmitter) seal() {
	e.last = e.batch.Len()
	if e.src != nil {
		e.batch.Origin = &derivedOrigin{parent: e.src, from: e.from}
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
	e.full, e.batch, e.from = nil, nil, nil
	return out
}

// derivedOrigin is the Origin of an operator's output batch: change i
// came from change from[i] of the input batch whose origin is parent, or
// from no record when from[i] < 0.
type derivedOrigin struct {
	parent row.Origin
	from   []int32
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

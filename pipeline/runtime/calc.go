package runtime

import (
	"fmt"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Calc is projection and filter: the SELECT list and the WHERE (or HAVING)
// of a query, compiled.
//
// Over an updating input a filter must not leave stale rows downstream:
// when an update's old row passed and its new row does not, Calc emits -D
// of the old row; when only the new row passes, +I of the new row (Flink
// emits a lone -U here, FLINK-9528). That needs the -U of an update and
// its +U together, so Calc holds a -U until the change after it arrives.
type Calc struct {
	// Filter, if set, keeps rows for which it returns true.
	Filter func(r row.Row) (bool, error)
	// Project, if set, computes the output columns; otherwise rows pass
	// unchanged.
	Project []func(r row.Row) (row.Value, error)
	// Columns, if set, says that Project only picks input columns: output
	// column j is input column Columns[j]. A source may then decode its
	// rows so (connector.ColumnSource, fuse.go).
	Columns []int
	// ProjectInfallible: no expression of Project fails (each is a
	// constant, a column or a field of one), so that a filter over the
	// projected rows may run before the rest of the projection
	// (readerMap.add) and miss no row's error.
	ProjectInfallible bool
	// FilterReads, if not nil, lists the input columns Filter reads
	// (none: empty): when Columns holds them all, the source may decode
	// Columns only and Filter read its columns from them (fuse.go).
	// InputWidth is the width of an input row, for a rejected row's
	// record then (0: not known, and the source decodes every column).
	FilterReads []int
	InputWidth  int
	// MemoAt and Memo, when Memo is not 0, say that Filter and Project
	// share subexpressions (expr.Share): they read the input's first
	// MemoAt columns followed by Memo values, where they keep what they
	// computed once for the row (memoRow).
	MemoAt, Memo int
	// Sequential: an expression's value for a row depends on the rows
	// evaluated before it (RAND with a constant seed draws the next
	// value of its sequence) or on the watermark (CURRENT_WATERMARK), so
	// the Calc runs on its node's goroutine over the rows in their order,
	// never in its source's decoders (fuse.go).
	Sequential bool
	// OnWatermark, if set, is told each watermark that reaches the Calc,
	// before the rows after it are evaluated (CURRENT_WATERMARK reads
	// it). Its graph's sources then send a watermark wherever theirs
	// rises (readsWatermark), so that a row sees the watermark of the
	// rows read before it, as each record does in Flink.
	OnWatermark func(int64)
	// Reject, if set, gets rows whose expressions fail at run time (a
	// CAST of '12x' to INT) under the source's on_error policy; a nil
	// return skips the row. Without Reject the error stops the pipeline.
	// The BadRecord names the source record the row came from and the
	// transform.
	Reject func(connector.BadRecord) error
	// Input names the input's columns, for the rows handed to Reject.
	Input row.Schema
	// Name is the operator's plan (Calc(select=[...])).
	Name string
	// Transform is the name of the transform in the pipeline file that
	// the operator belongs to, for BadRecord.Transform.
	Transform string

	pending    row.Row // the -U waiting for its +U
	pendingOK  bool
	hasPending bool
	// fused: the Calc also runs in its source's decoders (fuse.go), and
	// its node passes the batches they mapped on as they are.
	fused bool
	// widen, when the source decodes Columns only (fuse.go), puts a
	// picked row's values back in a row of the input's width, for the
	// record of a row the filter fails on: the same as without picking.
	widen func(row.Row) row.Row
	// narrow, if not 0, cuts the rows that pass to their first narrow
	// columns: the source decoded columns only the filter reads after the
	// projected ones (fuse.go).
	narrow int
	// memo is Process's row for Filter and Project when they share
	// subexpressions (memoRow).
	memo row.Row
	// carvedIn: the last Process's input rows were carved from slabs
	// (slabOrigin) and no row of it went to Reject (ReleasesInput).
	carvedIn bool
	// rejected: a row of the last Process's input went to Reject
	// (PassesText).
	rejected bool
}

// newMemo returns a row for memoRow, nil when Filter and Project share
// nothing. Each goroutine evaluating them needs its own.
func (c *Calc) newMemo() row.Row {
	if c.Memo == 0 {
		return nil
	}
	return make(row.Row, c.MemoAt+c.Memo)
}

// memoRow returns r as Filter and Project read it: r itself, or, when
// they share subexpressions, r's columns copied into buf (newMemo) with
// the memo cleared for this row.
func (c *Calc) memoRow(buf, r row.Row) row.Row {
	if buf == nil {
		return r
	}
	copy(buf[:c.MemoAt], r)
	buf[c.MemoAt] = row.NullValue
	return buf
}

// eval returns the projected row and whether it passes the filter; buf
// is the row for the memo (newMemo). The projected row is carved by
// carve (rowCarver), or allocated on its own when carve is nil.
func (c *Calc) eval(buf, r row.Row, carve func(int) row.Row) (row.Row, bool, error) {
	in := c.memoRow(buf, r)
	if c.Filter != nil {
		ok, err := c.Filter(in)
		if err != nil || !ok {
			return nil, false, err
		}
	}
	if c.Project == nil {
		if n := c.narrow; n > 0 {
			r = r[:n:n]
		}
		return r, true, nil
	}
	var out row.Row
	if carve != nil {
		out = carve(len(c.Project))
	} else {
		out = make(row.Row, len(c.Project))
	}
	if err := c.projectInto(in, out); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// projectInto computes the output columns of r into out: a Calc that
// only picks columns (Columns) copies them, with no call per value.
func (c *Calc) projectInto(r, out row.Row) error {
	if cols := c.Columns; len(cols) == len(c.Project) {
		for i, col := range cols {
			out[i] = r[col]
		}
		return nil
	}
	for i, f := range c.Project {
		v, err := f(r)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}

// Apply evaluates one row outside the operator protocol (computed columns
// of a source). ok is false when the filter drops the row.
func (c *Calc) Apply(r row.Row) (out row.Row, ok bool, err error) {
	return c.eval(c.newMemo(), r, nil)
}

// freshSlabs carves rows from slabs of slabValues it allocates and
// never reuses: the rows may go anywhere, to several readers (a source's
// computed columns, SourceNode.prepare), and save an allocation each.
type freshSlabs struct{ slab []row.Value }

func (f *freshSlabs) carve(w int) row.Row {
	if len(f.slab) < w {
		f.slab = make([]row.Value, max(w, slabValues))
	}
	r := f.slab[:w:w]
	f.slab = f.slab[w:]
	return r
}

// rowCarver is an emitter that carves the rows an operator emits from
// slabs of the batch it is filling (batchEmitter.carve), instead of an
// allocation per row: the row carve returns must be the next one
// emitted, before any other, since it shares the memory of the batch
// that Emit appends to.
type rowCarver interface {
	carve(w int) row.Row
}

// carves reports whether the row of a change of kind k may be carved
// (rowCarver): whether Calc emits it before any other, not holding it
// (a -U waiting for its +U, which may go out in a later batch, after
// this one's memory was reused) nor emitting a held one first.
func (c *Calc) carves(k row.Kind) bool {
	if c.Filter == nil && c.Reject == nil {
		return true // emit passes every row on at once
	}
	return !c.hasPending && k != row.UpdateBefore
}

// reject hands change i of in, whose expressions failed with err, to
// Reject; the BadRecord names the source record it came from.
func (c *Calc) reject(in *row.Batch, i int, err error) error {
	r := in.Changes[i].Row
	if c.widen != nil {
		r = c.widen(r)
	}
	bad := rowRecord(in, i, c.Transform, c.Input, r, err)
	if c.Reject == nil {
		return fmt.Errorf("%w (row %s)", bad, row.Change{Kind: row.Insert, Row: r})
	}
	return c.Reject(bad)
}

// Process implements Operator.
func (c *Calc) Process(in *row.Batch, out operator.Emitter) error {
	tr := operator.TrackerOf(in, out)
	if c.memo == nil {
		c.memo = c.newMemo()
	}
	// The projected rows are carved from the output batch's slabs, which
	// its reader may give back for the batches after (release).
	var carve func(int) row.Row
	if rc, ok := out.(rowCarver); ok && c.Project != nil {
		carve = rc.carve
	}
	_, c.carvedIn = in.Origin.(*slabOrigin)
	c.rejected = false
	for i, ch := range in.Changes {
		if tr != nil {
			tr.At(i)
		}
		alloc := carve
		if alloc != nil && !c.carves(ch.Kind) {
			alloc = nil
		}
		r, ok, err := c.eval(c.memo, ch.Row, alloc)
		if err != nil {
			c.carvedIn = false // the bad record may keep its row
			c.rejected = true
			if err := c.reject(in, i, err); err != nil {
				return err
			}
			// A skipped row counts as not passing, so that an update
			// whose new row fails still retracts its old one.
			ok = false
		}
		if err := c.emit(ch.Kind, r, ok, out); err != nil {
			return err
		}
	}
	return nil
}

// ReleasesInput implements operator.InputReleaser: a projecting Calc
// copies the values it keeps (a -U waiting for its +U is a projected
// row) into rows of its own, so the slabs of an input batch an operator
// carved (operator.Carving) go back once Process returned. Only those:
// a batch a source decoded may hold its block too (fusedOrigin's
// recycle), which the projected values' strings still point into. A
// Calc with no projection passes its input rows on.
func (c *Calc) ReleasesInput() bool { return c.Project != nil && c.carvedIn }

// PassesText implements operator.TextPasser: a Calc emits each row of
// its input it keeps before Process returns, but a -U waiting for its
// +U, and a row that went to Reject, which may keep it.
func (c *Calc) PassesText() bool { return !c.rejected && !c.hasPending }

func (c *Calc) emit(k row.Kind, r row.Row, ok bool, out operator.Emitter) error {
	if c.Filter == nil && c.Reject == nil {
		if ok {
			out.Emit(k, r)
		}
		return nil
	}
	if c.hasPending && k != row.UpdateAfter {
		c.flushPending(out)
	}
	switch k {
	case row.Insert, row.Delete:
		if ok {
			out.Emit(k, r)
		}
	case row.UpdateBefore:
		c.pending, c.pendingOK, c.hasPending = r, ok, true
	case row.UpdateAfter:
		if !c.hasPending {
			// An update without its old row (no etld operator produces
			// one; every updating node sends -U before +U) passes as is.
			if ok {
				out.Emit(row.UpdateAfter, r)
			}
			return nil
		}
		old, oldOK := c.pending, c.pendingOK
		c.pending, c.hasPending = nil, false
		switch {
		case oldOK && ok:
			out.Emit(row.UpdateBefore, old)
			out.Emit(row.UpdateAfter, r)
		case oldOK:
			out.Emit(row.Delete, old)
		case ok:
			out.Emit(row.Insert, r)
		}
	}
	return nil
}

// flushPending emits a -U whose +U never came as the retraction it is.
func (c *Calc) flushPending(out operator.Emitter) {
	if c.pendingOK {
		out.Emit(row.Delete, c.pending)
	}
	c.pending, c.hasPending = nil, false
}

// Watermark implements Operator.
func (c *Calc) Watermark(wm int64, _ operator.Emitter) error {
	if c.OnWatermark != nil {
		c.OnWatermark(wm)
	}
	return nil
}

// Finish implements Operator.
func (c *Calc) Finish(out operator.Emitter) error {
	if c.hasPending {
		c.flushPending(out)
	}
	return nil
}

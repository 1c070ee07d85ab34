// Package udfop runs user-defined functions (pipeline/udf) over batches:
// Calls appends the results of scalar function calls to each row, as
// Flink's PythonCalc computes its Python functions before the rest of a
// projection; Lateral joins each row with the rows a table function gives
// for it (LATERAL TABLE). Both call a function once per batch of rows,
// never once per row, and hand a row the function fails on to the
// source's on_error policy, naming the function and the record.
//
// The operators see a function only through the small interfaces here;
// the planner wraps pipeline/udf's instances in them.
package udfop

import (
	"context"
	"errors"
	"fmt"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// ScalarFunc is a running scalar function, called from one goroutine.
type ScalarFunc interface {
	// Scalar computes the function over n rows of args (column k is
	// argument k), setting out[i] or errs[i] per row; an error return
	// ends the run.
	Scalar(args [][]row.Value, n int, out []row.Value, errs []error) error
	Close(ctx context.Context) error
}

// Call is one function call: its name (for errors), how to compute its
// arguments from the row (the input's columns, then the results of the
// calls before it), and how to start the function.
type Call struct {
	Name string
	Args []func(row.Row) (row.Value, error)
	// NullTolerant calls the function for rows with a NULL argument;
	// otherwise their result is NULL without a call.
	NullTolerant bool
	Start        func(ctx context.Context) (ScalarFunc, error)
}

// Calls appends one column per call to each input row: the call's
// result. A row whose arguments or call fail goes to Reject (the
// source's on_error policy); an update whose new row fails retracts its
// old one, as Calc does.
type Calls struct {
	Calls []Call
	// Reject, Input, Name and Transform are as runtime.Calc's.
	Reject    func(connector.BadRecord) error
	Input     row.Schema
	Name      string
	Transform string

	funcs   []ScalarFunc
	args    [][]row.Value
	idx     []int
	results []row.Value
	errs    []error
	pairs   pairing
	// cols holds each call's results for the batch, by row; scratch is
	// the row a later call's arguments read (call).
	cols    [][]row.Value
	scratch row.Row
	failed  []error
	// slabIn: the last Process's input rows are slabs of values
	// (operator.SlabRows) and no row of it went to Reject
	// (ReleasesInput).
	slabIn bool
	// rejected: a row of the last Process's input went to Reject
	// (PassesText).
	rejected bool
}

// Open implements operator.Opener: it starts the functions.
func (c *Calls) Open(ctx context.Context) error {
	for _, call := range c.Calls {
		f, err := call.Start(ctx)
		if err != nil {
			return err
		}
		c.funcs = append(c.funcs, f)
	}
	return nil
}

// Close implements operator.Opener.
func (c *Calls) Close(ctx context.Context) error {
	var errs []error
	for _, f := range c.funcs {
		errs = append(errs, f.Close(ctx))
	}
	c.funcs = nil
	return errors.Join(errs...)
}

// Process implements operator.Operator. The functions' results are
// computed first, a column per call, each call once for the batch; then
// each row that did not fail is made, its input columns and the results,
// in the memory the emitter lends (operator.RowCarver) right before it
// is emitted, which the reader gives back for the batches after: a row
// costs no allocation. A -U held for its +U (pairing), and a change
// emitted after one, are allocated instead, as a carved row must be the
// next emitted.
func (c *Calls) Process(in *row.Batch, out operator.Emitter) error {
	if len(c.funcs) != len(c.Calls) {
		return fmt.Errorf("%s: not opened", c.Name)
	}
	n := len(in.Changes)
	w := c.Input.Len()
	k := len(c.Calls)
	c.failed = resizeErrs(c.failed, n)
	failed := c.failed
	for len(c.cols) < k {
		c.cols = append(c.cols, nil)
	}
	for j, call := range c.Calls {
		c.cols[j] = resize(c.cols[j], n)
		if err := c.call(j, call, in, failed, w); err != nil {
			return err
		}
	}
	c.slabIn = operator.SlabRowsOnly(in)
	c.rejected = false
	carver := operator.CarverOf(out)
	var slab []row.Value
	tr := operator.TrackerOf(in, out)
	for i, ch := range in.Changes {
		if tr != nil {
			tr.At(i)
		}
		ok := failed[i] == nil
		if !ok {
			c.slabIn, c.rejected = false, true // the bad record may keep its row
			if err := c.reject(in, i, failed[i]); err != nil {
				return err
			}
		}
		var r row.Row
		switch {
		case !ok:
			// pairing emits no row that failed.
		case carver != nil && ch.Kind != row.UpdateBefore && !c.pairs.hasPending:
			r = carver.CarveRow(w + k)
		default:
			if len(slab) < w+k {
				slab = make([]row.Value, (n-i)*(w+k))
			}
			r, slab = slab[:w+k:w+k], slab[w+k:]
		}
		if r != nil {
			copy(r, ch.Row)
			for j := range k {
				r[w+j] = c.cols[j][i]
			}
		}
		c.pairs.emit(ch.Kind, r, ok, out)
	}
	clear(failed) // no error kept past the batch
	return nil
}

// ReleasesInput implements operator.InputReleaser: Calls copies the
// input's values into rows of its own, so an input batch whose rows are
// slabs of values alone goes back once Process returned.
func (c *Calls) ReleasesInput() bool { return c.slabIn }

// PassesText implements operator.TextPasser: Calls emits the rows it
// makes of a batch before Process returns (but a -U held for its +U),
// and keeps the arguments only until the next batch overwrites them.
func (c *Calls) PassesText() bool { return !c.rejected && !c.pairs.hasPending }

// CarvesRows implements operator.Carving: Process builds its rows in the
// memory of a RowCarver.
func (c *Calls) CarvesRows() bool { return true }

// call computes call j for the rows of in that have not failed: their
// arguments, then one call of the function for all of them, into
// c.cols[j]. The first call's arguments read the input rows as they are
// (they read no result); a later call's read the input's columns and the
// results before it, in a row of c.scratch.
func (c *Calls) call(j int, call Call, in *row.Batch, failed []error, w int) error {
	m := len(call.Args)
	if len(c.args) < m {
		c.args = make([][]row.Value, m)
	}
	args := c.args[:m]
	for a := range args {
		args[a] = args[a][:0]
	}
	res := c.cols[j]
	if j > 0 && len(c.scratch) < w+j {
		c.scratch = make(row.Row, w+len(c.Calls))
	}
	c.idx = c.idx[:0]
	for i, ch := range in.Changes {
		if failed[i] != nil {
			continue
		}
		r := ch.Row
		if j > 0 {
			r = c.scratch[:w+j]
			copy(r, ch.Row)
			for p := range j {
				r[w+p] = c.cols[p][i]
			}
		}
		null := false
		var err error
		for a, arg := range call.Args {
			var v row.Value
			if v, err = arg(r); err != nil {
				break
			}
			null = null || v.IsNull()
			args[a] = append(args[a], v)
		}
		if err != nil {
			failed[i] = err
			for a := range args {
				args[a] = args[a][:len(c.idx)]
			}
			continue
		}
		if null && !call.NullTolerant {
			res[i] = row.NullValue
			for a := range args {
				args[a] = args[a][:len(c.idx)]
			}
			continue
		}
		c.idx = append(c.idx, i)
	}
	if j > 0 {
		clear(c.scratch) // no value of the batch kept past it
	}
	cnt := len(c.idx)
	if cnt == 0 {
		return nil
	}
	c.results = resize(c.results, cnt)
	c.errs = resizeErrs(c.errs, cnt)
	if err := c.funcs[j].Scalar(args, cnt, c.results, c.errs); err != nil {
		return fmt.Errorf("function %s: %w", call.Name, err)
	}
	for x, i := range c.idx {
		if err := c.errs[x]; err != nil {
			failed[i] = fmt.Errorf("function %s: %w", call.Name, err)
			continue
		}
		res[i] = c.results[x]
	}
	return nil
}

func resize(v []row.Value, n int) []row.Value {
	if cap(v) < n {
		return make([]row.Value, n)
	}
	v = v[:n]
	clear(v)
	return v
}

func resizeErrs(v []error, n int) []error {
	if cap(v) < n {
		return make([]error, n)
	}
	v = v[:n]
	clear(v)
	return v
}

// reject hands change i of in, which failed with err, to Reject.
func (c *Calls) reject(in *row.Batch, i int, err error) error {
	return rejectRow(in, i, c.Transform, c.Input, err, c.Reject)
}

func rejectRow(in *row.Batch, i int, transform string, cols row.Schema, err error, reject func(connector.BadRecord) error) error {
	r := in.Changes[i].Row
	bad := connector.BadRecord{Position: operator.PositionOf(in, i), Location: operator.LocationOf(in, i), Transform: transform, Row: r, Columns: cols, Err: err}
	if reject == nil {
		return fmt.Errorf("%w (row %s)", bad, row.Change{Kind: row.Insert, Row: r})
	}
	return reject(bad)
}

// Watermark implements operator.Operator.
func (c *Calls) Watermark(int64, operator.Emitter) error { return nil }

// Finish implements operator.Operator.
func (c *Calls) Finish(out operator.Emitter) error {
	c.pairs.flush(out)
	return nil
}

var (
	_ operator.Operator = (*Calls)(nil)
	_ operator.Opener   = (*Calls)(nil)
	_ operator.Carving  = (*Calls)(nil)

	_ operator.InputReleaser = (*Calls)(nil)
)

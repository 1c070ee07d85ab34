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

// Process implements operator.Operator.
func (c *Calls) Process(in *row.Batch, out operator.Emitter) error {
	if len(c.funcs) != len(c.Calls) {
		return fmt.Errorf("%s: not opened", c.Name)
	}
	n := len(in.Changes)
	w := c.Input.Len()
	k := len(c.Calls)
	slab := make([]row.Value, n*(w+k))
	rows := make([]row.Row, n)
	failed := make([]error, n)
	for i, ch := range in.Changes {
		r := slab[i*(w+k) : (i+1)*(w+k) : (i+1)*(w+k)]
		copy(r, ch.Row)
		rows[i] = r
	}
	for j, call := range c.Calls {
		if err := c.call(j, call, rows, failed, w); err != nil {
			return err
		}
	}
	tr := operator.TrackerOf(in, out)
	for i, ch := range in.Changes {
		if tr != nil {
			tr.At(i)
		}
		ok := failed[i] == nil
		if !ok {
			if err := c.reject(in, i, failed[i]); err != nil {
				return err
			}
		}
		c.pairs.emit(ch.Kind, rows[i], ok, out)
	}
	return nil
}

// call computes call j for the rows that have not failed: their
// arguments, then one call of the function for all of them.
func (c *Calls) call(j int, call Call, rows []row.Row, failed []error, w int) error {
	m := len(call.Args)
	if len(c.args) < m {
		c.args = make([][]row.Value, m)
	}
	args := c.args[:m]
	for a := range args {
		args[a] = args[a][:0]
	}
	c.idx = c.idx[:0]
	for i, r := range rows {
		if failed[i] != nil {
			continue
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
			r[w+j] = row.NullValue
			for a := range args {
				args[a] = args[a][:len(c.idx)]
			}
			continue
		}
		c.idx = append(c.idx, i)
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
		rows[i][w+j] = c.results[x]
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
)

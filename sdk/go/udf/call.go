package udf

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Batch is one call's input: Rows rows of the arguments Args, and the
// types the function is to return (Results: one for a scalar or
// aggregate function, a table function's columns).
type Batch struct {
	Kind    int
	Rows    int
	Args    []*Column
	Results []*Type
	// States are an aggregate's accumulators (Kind accumulate, retract,
	// merge, result): Groups of them, each the bytes the function made
	// (empty for a group's first call).
	States *Column
	Groups int
}

// Arg is argument column k.
func (b *Batch) Arg(k int) *Column { return b.Args[k] }

// batch is the batch of the current call: its columns are those of the
// call before, filled anew (ReadBatch).
var batch Batch

// ReadBatch reads a batch from the bytes etld wrote. The batch and its
// columns are the SDK's, reused by the next call: read them during the
// call only.
func ReadBatch(in []byte) (*Batch, error) {
	r := reader{b: in}
	var head [5]int
	for i := range head {
		v, err := r.u32()
		if err != nil {
			return nil, err
		}
		head[i] = v
	}
	if head[0] != Version {
		return nil, fmt.Errorf("etld udf: batch version %d, this SDK reads %d", head[0], Version)
	}
	b := &batch
	b.Kind, b.Rows, b.Results, b.Groups = head[1], head[2], b.Results[:0], 0
	if b.Rows > len(in) || head[3] > len(in) {
		return nil, errShort
	}
	for range head[4] {
		t, err := r.cachedTyp()
		if err != nil {
			return nil, err
		}
		b.Results = append(b.Results, t)
	}
	if b.Kind >= KindAccumulate {
		g, err := r.u32()
		if err != nil {
			return nil, err
		}
		if g > len(in) {
			return nil, errShort
		}
		t, err := r.cachedTyp()
		if err != nil {
			return nil, err
		}
		if b.States, err = r.column(b.States, t, g, 0); err != nil {
			return nil, err
		}
		b.Groups = g
	}
	for len(b.Args) < head[3] {
		b.Args = append(b.Args, nil)
	}
	b.Args = b.Args[:head[3]]
	for k := range b.Args {
		t, err := r.cachedTyp()
		if err != nil {
			return nil, err
		}
		if b.Args[k], err = r.column(b.Args[k], t, b.Rows, 0); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// wholeCall is the row number of an error that fails every row.
const wholeCall = 0xFFFFFFFF

// Result collects a call's output: the result columns, the input row of
// each output row (table functions), and the rows that failed.
type Result struct {
	types  []*Type
	cols   []*Builder
	rowOf  []uint32
	errs   []byte
	nerr   int
	values Values
	rows   Rows
}

// result is the Result of the current call, made anew only when the
// result types change; out is the output's buffer, reused.
var (
	result *Result
	out    []byte
)

func newResult(types []*Type) *Result {
	r := result
	if r == nil || !sameTypes(r.types, types) {
		r = &Result{types: append([]*Type(nil), types...)}
		for _, t := range types {
			r.cols = append(r.cols, NewBuilder(t))
		}
		result = r
	}
	for _, c := range r.cols {
		c.reset()
	}
	r.rowOf, r.errs, r.nerr = r.rowOf[:0], r.errs[:0], 0
	r.values = Values{Builder: r.cols[0], res: r}
	r.rows = Rows{res: r}
	return r
}

func sameTypes(a, b []*Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Col is the builder of result column k.
func (r *Result) Col(k int) *Builder { return r.cols[k] }

// fail records that row i failed with err.
func (r *Result) fail(i uint32, err error) {
	msg := err.Error()
	r.errs = binary.LittleEndian.AppendUint32(r.errs, i)
	r.errs = binary.LittleEndian.AppendUint32(r.errs, uint32(len(msg)))
	r.errs = append(r.errs, msg...)
	r.nerr++
}

// bytes writes the output: the count of values (or output rows), the
// errors (u32 row, u32 length, message), then for a table function the
// input row of each output row, then the columns.
func (r *Result) bytes(n int) []byte {
	out := binary.LittleEndian.AppendUint32(out[:0], uint32(n))
	out = binary.LittleEndian.AppendUint32(out, uint32(r.nerr))
	out = append(out, r.errs...)
	for _, row := range r.rowOf {
		out = binary.LittleEndian.AppendUint32(out, row)
	}
	for _, c := range r.cols {
		out = c.appendColumn(out)
	}
	return out
}

// failAll is the output of a call that failed as a whole.
func failAll(err error) []byte {
	r := &Result{}
	r.fail(wholeCall, err)
	return r.bytes(0)
}

// Values writes a scalar function's results: one Append (or typed call,
// or Fail) per input row, in order.
type Values struct {
	*Builder
	res *Result
}

// Fail makes input row i's result an error (etld hands the row to its
// source's on_error) and appends NULL in its place.
func (v *Values) Fail(i int, err error) {
	v.res.fail(uint32(i), err)
	v.AppendNull()
}

// ScalarFunc computes a scalar function's results over a batch.
type ScalarFunc func(in *Batch, out *Values) error

// ScalarBytes runs f over a batch's bytes and returns its output's.
func ScalarBytes(in []byte, f ScalarFunc) []byte {
	b, err := ReadBatch(in)
	if err != nil {
		return failAll(err)
	}
	if b.Kind != KindScalar || len(b.Results) != 1 {
		return failAll(fmt.Errorf("etld udf: a scalar function called for kind %d", b.Kind))
	}
	res := newResult(b.Results)
	vals := &res.values
	if err := f(b, vals); err != nil {
		return failAll(err)
	}
	if err := vals.firstErr(); err != nil {
		return failAll(err)
	}
	if vals.Len() != b.Rows {
		return failAll(fmt.Errorf("etld udf: %d results for %d rows", vals.Len(), b.Rows))
	}
	return res.bytes(b.Rows)
}

// RowFunc is a scalar function of one row's arguments, as Column.Value
// gives them; RowScalar calls it for every row of a batch.
type RowFunc func(args []any) (any, error)

// RowScalar adapts f to a ScalarFunc.
func RowScalar(f RowFunc) ScalarFunc {
	return func(in *Batch, out *Values) error {
		args := make([]any, len(in.Args))
		for i := range in.Rows {
			for k, c := range in.Args {
				args[k] = c.Value(i)
			}
			v, err := f(args)
			if err != nil {
				out.Fail(i, err)
				continue
			}
			out.Append(v)
		}
		return nil
	}
}

// Rows writes a table function's output rows.
type Rows struct{ res *Result }

// Emit adds an output row for input row i: one value per result column
// (Go values as Builder.Append takes them). Rows of one input row are
// emitted together, input rows in order.
func (o *Rows) Emit(i int, vals ...any) {
	if len(vals) != len(o.res.cols) {
		o.res.cols[0].fail("a row of %d values, the function returns %d columns", len(vals), len(o.res.cols))
		return
	}
	o.res.rowOf = append(o.res.rowOf, uint32(i))
	for k, v := range vals {
		o.res.cols[k].Append(v)
	}
}

// Fail makes input row i an error: etld hands it to its source's
// on_error, and its output rows are dropped.
func (o *Rows) Fail(i int, err error) { o.res.fail(uint32(i), err) }

// TableFunc emits a table function's rows for a batch.
type TableFunc func(in *Batch, out *Rows) error

// TableBytes runs f over a batch's bytes and returns its output's.
func TableBytes(in []byte, f TableFunc) []byte {
	b, err := ReadBatch(in)
	if err != nil {
		return failAll(err)
	}
	if b.Kind != KindTable || len(b.Results) == 0 {
		return failAll(fmt.Errorf("etld udf: a table function called for kind %d", b.Kind))
	}
	res := newResult(b.Results)
	if err := f(b, &res.rows); err != nil {
		return failAll(err)
	}
	for _, c := range res.cols {
		if err := c.firstErr(); err != nil {
			return failAll(err)
		}
	}
	last := uint32(0)
	for _, r := range res.rowOf {
		if r < last || int(r) >= b.Rows {
			return failAll(errors.New("etld udf: a table function emits rows out of input order"))
		}
		last = r
	}
	return res.bytes(len(res.rowOf))
}

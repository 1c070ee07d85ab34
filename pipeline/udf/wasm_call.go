package udf

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/api"

	"github.com/etld/etld/pipeline/row"
)

// Batches are cut at chunkRows rows, or sooner at about chunkBytes of
// string and byte arguments, so that a batch fits a module's memory.
const (
	chunkRows  = 1024
	chunkBytes = 1 << 20
)

// maxTimeouts is how many rows of one batch may run past the time limit
// when the batch is retried row by row; the rows after them fail without
// a call, so that a function that never ends costs a few time limits per
// batch, not one per row.
const maxTimeouts = 2

// wasmInstance is one instance of a module, for one operator.
type wasmInstance struct {
	w    *wasmImpl
	base context.Context
	// mod is nil after a failed call: the next call starts the module
	// afresh, as a trap may have left it in any state.
	mod       api.Module
	alloc, fn api.Function
	mem       api.Memory
	enc       encoder
	stack     []uint64
	// buf and bufLen are the module's buffer for batches (etld_alloc's),
	// reused while a batch fits: a call of a module costs (a Go module's
	// runtime is entered at each), so etld asks for a buffer only when it
	// needs a larger one.
	buf, bufLen uint32
	// stderr keeps the start of what the module wrote there during a
	// call: a Go panic's message, for the error of the call it ended.
	stderr head
}

// head keeps the first 4 KiB written to it.
type head struct{ b []byte }

func (t *head) Write(p []byte) (int, error) {
	if room := 4096 - len(t.b); room > 0 {
		t.b = append(t.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// line is the first line of what was written that says something
// (Go's "panic: ..."), and empties the tail.
func (t *head) line() string {
	defer func() { t.b = t.b[:0] }()
	for _, l := range strings.Split(string(t.b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 200 {
				l = l[:200] + "..."
			}
			return l
		}
	}
	return ""
}

// fatalError is a failure that no retry fixes: the module does not
// start, or the run is stopping.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

func (i *wasmInstance) restart() error {
	if i.mod != nil {
		_ = i.mod.Close(i.base)
		i.mod = nil
	}
	m, err := i.w.start(i.base, &i.stderr)
	if err != nil {
		return &fatalError{err}
	}
	i.buf, i.bufLen = 0, 0
	i.mod, i.mem = m, m.Memory()
	i.alloc, i.fn = m.ExportedFunction(exportAlloc), m.ExportedFunction(i.w.fn.Decl.Export)
	return nil
}

// Close implements Instance.
func (i *wasmInstance) Close(ctx context.Context) error {
	if i.mod == nil {
		return nil
	}
	err := i.mod.Close(ctx)
	i.mod = nil
	return err
}

// call hands the batch in i.enc to the function and returns a view of
// its output, valid until the next call.
func (i *wasmInstance) call() ([]byte, error) {
	if i.mod == nil {
		if err := i.restart(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(i.base, i.w.fn.Timeout)
	defer cancel()
	i.stderr.b = i.stderr.b[:0]
	buf := i.enc.buf
	if len(buf) > int(i.bufLen) {
		// Room for this batch and twice its size: fewer calls of
		// etld_alloc as batches grow.
		want := uint32(min(2*len(buf), 1<<30))
		i.stack[0] = uint64(want)
		if err := i.alloc.CallWithStack(ctx, i.stack); err != nil {
			return nil, i.failed(ctx, fmt.Errorf("%s: %w", exportAlloc, callError(ctx, err)))
		}
		i.buf, i.bufLen = uint32(i.stack[0]), want
	}
	ptr := i.buf
	if !i.mem.Write(ptr, buf) {
		return nil, i.failed(ctx, fmt.Errorf("%s(%d) gave address %d, outside the module's memory of %d bytes", exportAlloc, i.bufLen, ptr, i.mem.Size()))
	}
	i.stack[0], i.stack[1] = uint64(ptr), uint64(len(buf))
	if err := i.fn.CallWithStack(ctx, i.stack); err != nil {
		return nil, i.failed(ctx, callError(ctx, err))
	}
	optr, olen := uint32(i.stack[0]>>32), uint32(i.stack[0])
	view, ok := i.mem.Read(optr, olen)
	if !ok {
		return nil, i.failed(ctx, fmt.Errorf("returned %d bytes at address %d, outside the module's memory of %d bytes", olen, optr, i.mem.Size()))
	}
	return view, nil
}

// failed drops the module after a failed call; the run's end is fatal.
func (i *wasmInstance) failed(ctx context.Context, err error) error {
	if i.mod != nil {
		_ = i.mod.Close(context.WithoutCancel(ctx))
		i.mod = nil
	}
	if i.base.Err() != nil {
		return &fatalError{context.Cause(i.base)}
	}
	if said := i.stderr.line(); said != "" {
		return fmt.Errorf("%w (the module wrote: %s)", err, said)
	}
	return err
}

// chunkEnd is where the chunk of rows from lo ends.
func chunkEnd(args [][]row.Value, lo, n int) int {
	size := 0
	hi := lo
	for hi < n && hi-lo < chunkRows {
		for _, col := range args {
			size += len(col[hi].Str())
		}
		hi++
		if size >= chunkBytes {
			break
		}
	}
	return hi
}

// encodeArgs writes a batch of rows lo..hi of args.
func (i *wasmInstance) encodeArgs(kind int, args [][]row.Value, lo, hi int, results []row.Type) error {
	if err := i.enc.header(kind, hi-lo, len(args), results); err != nil {
		return err
	}
	return i.encodeColumns(args, lo, hi)
}

func (i *wasmInstance) encodeColumns(args [][]row.Value, lo, hi int) error {
	for k, col := range args {
		if err := i.enc.column(i.w.fn.Params[k], col[lo:hi]); err != nil {
			return err
		}
	}
	return nil
}

// Scalar implements Instance.
func (i *wasmInstance) Scalar(args [][]row.Value, n int, out []row.Value, errs []error) error {
	for lo := 0; lo < n; {
		hi := chunkEnd(args, lo, n)
		if err := i.scalarChunk(args, lo, hi, out, errs); err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

func (i *wasmInstance) scalarChunk(args [][]row.Value, lo, hi int, out []row.Value, errs []error) error {
	if err := i.encodeArgs(KindScalar, args, lo, hi, []row.Type{i.w.fn.Returns}); err != nil {
		return err
	}
	view, err := i.call()
	if err != nil {
		return i.retry(err, lo, hi, errs, func(r int) error { return i.scalarChunk(args, r, r+1, out, errs) })
	}
	d := &decoder{buf: view}
	if cnt := d.u32(); cnt != hi-lo && d.err == nil {
		failRows(errs, lo, hi, fmt.Errorf("returned %d results for %d rows", cnt, hi-lo))
		return nil
	}
	d.rowErrors(errs, lo, hi)
	d.column(i.w.fn.Returns, out[lo:hi])
	if d.err != nil {
		failRows(errs, lo, hi, d.err)
	}
	for r := lo; r < hi; r++ {
		if errs[r] != nil {
			out[r] = row.NullValue
		}
	}
	return nil
}

// retry handles a failed call of rows lo..hi: a fatal error ends the
// instance; a single row takes the error; a batch is called again row
// by row (one, each, through one) to find the rows that fail.
func (i *wasmInstance) retry(err error, lo, hi int, errs []error, one func(r int) error) error {
	var fatal *fatalError
	switch {
	case errors.As(err, &fatal):
		return err
	case hi-lo == 1:
		errs[lo] = err
		return nil
	}
	timeouts := 0
	for r := lo; r < hi; r++ {
		if timeouts >= maxTimeouts {
			errs[r] = fmt.Errorf("not called: the function ran past its time limit on %d rows of this batch", timeouts)
			continue
		}
		if err := one(r); err != nil {
			return err
		}
		if errors.Is(errs[r], ErrTimeout) {
			timeouts++
		}
	}
	return nil
}

func failRows(errs []error, lo, hi int, err error) {
	for r := lo; r < hi; r++ {
		errs[r] = err
	}
}

// rowErrors reads the errors a function reported, each a u32 row (of
// the batch from lo, or 0xFFFFFFFF for all of them), a u32 length and
// the message.
func (d *decoder) rowErrors(errs []error, lo, hi int) {
	n := d.count(8)
	for range n {
		r := d.u32()
		msg := d.take(d.u32())
		if d.err != nil {
			return
		}
		err := errors.New(string(msg))
		switch {
		case uint32(r) == wholeCall:
			failRows(errs, lo, hi, err)
		case r < hi-lo:
			errs[lo+r] = err
		default:
			d.fail("an error for row %d of a batch of %d", r, hi-lo)
		}
	}
}

// wholeCall is the row number of an error that fails every row of a
// batch.
const wholeCall = 0xFFFFFFFF

// Table implements Instance.
func (i *wasmInstance) Table(args [][]row.Value, n int, errs []error) ([]int, []row.Row, error) {
	var rowOf []int
	var rows []row.Row
	for lo := 0; lo < n; {
		hi := chunkEnd(args, lo, n)
		ro, rs, err := i.tableChunk(args, lo, hi, errs)
		if err != nil {
			return nil, nil, err
		}
		rowOf, rows = append(rowOf, ro...), append(rows, rs...)
		lo = hi
	}
	return rowOf, rows, nil
}

func (i *wasmInstance) tableChunk(args [][]row.Value, lo, hi int, errs []error) (rowOf []int, rows []row.Row, _ error) {
	cols := i.w.fn.Columns
	types := make([]row.Type, len(cols))
	for k, c := range cols {
		types[k] = c.Type
	}
	if err := i.encodeArgs(KindTable, args, lo, hi, types); err != nil {
		return nil, nil, err
	}
	view, err := i.call()
	if err != nil {
		err = i.retry(err, lo, hi, errs, func(r int) error {
			ro, rs, err := i.tableChunk(args, r, r+1, errs)
			rowOf, rows = append(rowOf, ro...), append(rows, rs...)
			return err
		})
		return rowOf, rows, err
	}
	d := &decoder{buf: view}
	cnt := d.count(4)
	d.rowErrors(errs, lo, hi)
	of := make([]int, cnt)
	last := 0
	for j := range of {
		r := d.u32()
		if d.err == nil && (r < last || r >= hi-lo) {
			d.fail("output row %d belongs to input row %d, out of order or past the batch of %d", j, r, hi-lo)
		}
		of[j], last = lo+r, r
	}
	vals := make([]row.Value, cnt*len(cols))
	for k := range cols {
		col := make([]row.Value, cnt)
		d.column(types[k], col)
		for j, v := range col {
			vals[j*len(cols)+k] = v
		}
	}
	if d.err != nil {
		failRows(errs, lo, hi, d.err)
		return nil, nil, nil
	}
	for j := range cnt {
		if errs[of[j]] != nil {
			continue
		}
		rowOf = append(rowOf, of[j])
		rows = append(rows, vals[j*len(cols):(j+1)*len(cols):(j+1)*len(cols)])
	}
	return rowOf, rows, nil
}

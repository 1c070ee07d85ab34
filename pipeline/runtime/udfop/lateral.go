package udfop

import (
	"context"
	"fmt"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// TableFunc is a running table function, called from one goroutine.
type TableFunc interface {
	// Table computes the function over n rows of args: its output rows,
	// each with the input row it belongs to (rowOf, in input order), and
	// errs[i] for an input row it failed on; an error return ends the
	// run.
	Table(args [][]row.Value, n int, errs []error) (rowOf []int, rows []row.Row, err error)
	Close(ctx context.Context) error
}

// Lateral is `input CROSS JOIN LATERAL TABLE(f(x))`: each input row
// joined with every row f gives for it, as Flink's correlate. Left
// (`LEFT JOIN LATERAL TABLE(...) ON TRUE`) keeps a row f gives nothing
// for, its function columns NULL. It keeps no state, and each output row
// carries the kind of its input row, so an update retracts the rows of
// the old row and adds those of the new.
type Lateral struct {
	Name string
	Args []func(row.Row) (row.Value, error)
	// Width is the number of columns the function gives.
	Width        int
	NullTolerant bool
	Left         bool
	Start        func(ctx context.Context) (TableFunc, error)
	// Reject, Input, Op and Transform are as Calls'.
	Reject    func(connector.BadRecord) error
	Input     row.Schema
	Op        string
	Transform string

	fn   TableFunc
	args [][]row.Value
	idx  []int
	errs []error
}

// Open implements operator.Opener.
func (l *Lateral) Open(ctx context.Context) error {
	f, err := l.Start(ctx)
	if err != nil {
		return err
	}
	l.fn = f
	return nil
}

// Close implements operator.Opener.
func (l *Lateral) Close(ctx context.Context) error {
	if l.fn == nil {
		return nil
	}
	err := l.fn.Close(ctx)
	l.fn = nil
	return err
}

// Process implements operator.Operator.
func (l *Lateral) Process(in *row.Batch, out operator.Emitter) error {
	if l.fn == nil {
		return fmt.Errorf("%s: not opened", l.Op)
	}
	n := len(in.Changes)
	failed := make([]error, n)
	if len(l.args) < len(l.Args) {
		l.args = make([][]row.Value, len(l.Args))
	}
	args := l.args[:len(l.Args)]
	for a := range args {
		args[a] = args[a][:0]
	}
	l.idx = l.idx[:0]
	for i, ch := range in.Changes {
		null := false
		var err error
		for a, arg := range l.Args {
			var v row.Value
			if v, err = arg(ch.Row); err != nil {
				break
			}
			null = null || v.IsNull()
			args[a] = append(args[a], v)
		}
		if err != nil {
			failed[i] = err
		}
		if err != nil || null && !l.NullTolerant {
			for a := range args {
				args[a] = args[a][:len(l.idx)]
			}
			continue
		}
		l.idx = append(l.idx, i)
	}
	var rowOf []int
	var rows []row.Row
	if cnt := len(l.idx); cnt > 0 {
		l.errs = resizeErrs(l.errs, cnt)
		var err error
		if rowOf, rows, err = l.fn.Table(args, cnt, l.errs); err != nil {
			return fmt.Errorf("function %s: %w", l.Name, err)
		}
		for x, i := range l.idx {
			if l.errs[x] != nil {
				failed[i] = fmt.Errorf("function %s: %w", l.Name, l.errs[x])
			}
		}
	}
	tr := operator.TrackerOf(in, out)
	j := 0 // the next output row of the function
	x := 0 // the next called row
	for i, ch := range in.Changes {
		if tr != nil {
			tr.At(i)
		}
		if failed[i] != nil {
			if err := rejectRow(in, i, l.Transform, l.Input, failed[i], l.Reject); err != nil {
				return err
			}
			for x < len(l.idx) && l.idx[x] <= i {
				x++
			}
			continue
		}
		emitted := false
		if x < len(l.idx) && l.idx[x] == i {
			for ; j < len(rowOf) && rowOf[j] == x; j++ {
				out.Emit(ch.Kind, l.joined(ch.Row, rows[j]))
				emitted = true
			}
			x++
		}
		if !emitted && l.Left {
			out.Emit(ch.Kind, l.joined(ch.Row, nil))
		}
	}
	return nil
}

// joined is r followed by the function's columns f (NULL when f is nil).
func (l *Lateral) joined(r, f row.Row) row.Row {
	w := len(r)
	out := make(row.Row, w+l.Width)
	copy(out, r)
	copy(out[w:], f)
	return out
}

// Watermark implements operator.Operator.
func (l *Lateral) Watermark(int64, operator.Emitter) error { return nil }

// Finish implements operator.Operator.
func (l *Lateral) Finish(operator.Emitter) error { return nil }

var (
	_ operator.Operator = (*Lateral)(nil)
	_ operator.Opener   = (*Lateral)(nil)
)

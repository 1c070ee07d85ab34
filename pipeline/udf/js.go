package udf

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// JavaScript functions run on goja, a JavaScript engine in pure Go. A
// function's script is compiled once at load; each instance is a runtime
// of its own that ran the script, and calls the function row by row
// inside a batch (a call of a JavaScript function from Go is cheap; the
// batch is what the time limit bounds). A script has no file system, no
// network, no require and no console: only the language. A deterministic
// function's Date and Math.random are fixed.

// jsStackDepth bounds a script's call depth: a runaway recursion is an
// error, not the process's stack.
const jsStackDepth = 1000

// jsLineRE reads the position out of a syntax error's text.
var jsLineRE = regexp.MustCompile(`Line (\d+):(\d+) (.*?)(?: \(and \d+ more errors\))?$`)

// jsEpoch is what Date.now() gives a deterministic function.
var jsEpoch = time.Unix(0, 0)

type jsImpl struct {
	fn   *Function
	prog *goja.Program
}

// loadJS compiles f's script and checks, in a runtime that runs it once,
// that it defines the function.
func loadJS(f *Function) (impl, error) {
	d := f.Decl
	prog, err := goja.Compile(d.Name+".js", d.Code, false)
	if err != nil {
		return nil, jsPlaced(d, err)
	}
	j := &jsImpl{fn: f, prog: prog}
	inst, err := j.start()
	if err != nil {
		return nil, err
	}
	inst.vm = nil
	return j, nil
}

// jsPlaced places a script's error (its line and column in the code) in
// the pipeline file.
func jsPlaced(d *spec.Function, err error) error {
	line, col := 0, 0
	var ce *goja.CompilerSyntaxError
	var ex *goja.Exception
	switch {
	case errors.As(err, &ce):
		msg := ce.Message
		if ce.File != nil {
			line, col = ce.File.Position(ce.Offset).Line, ce.File.Position(ce.Offset).Column
		} else if m := jsLineRE.FindStringSubmatch(msg); m != nil {
			// The parser's errors come as their text.
			line, _ = strconv.Atoi(m[1])
			col, _ = strconv.Atoi(m[2])
			msg = "SyntaxError: " + m[3]
		}
		err = errors.New(msg)
	case errors.As(err, &ex):
		if st := ex.Stack(); len(st) > 0 {
			p := st[0].Position()
			line, col = p.Line, p.Column
		}
		err = errors.New(ex.Value().String())
	}
	pos := d.CodePos
	if line > 0 {
		pos.Line += line - 1
		// The code's lines are indented under code: in the file.
		pos.Col += col - 1
	}
	return spec.Errorf(pos, d.Path+".code", "function %s: %v", d.Name, err)
}

func (j *jsImpl) close(context.Context) error { return nil }

func (j *jsImpl) newInstance(ctx context.Context) (Instance, error) {
	inst, err := j.start()
	if err != nil {
		return nil, err
	}
	inst.base = ctx
	return inst, nil
}

// jsInstance is a runtime that ran the script.
type jsInstance struct {
	j    *jsImpl
	base context.Context
	vm   *goja.Runtime
	fn   goja.Callable
	// rows is Array.from, which makes a table function's result (an
	// array, a generator, any iterable) an array.
	rows goja.Callable
	args []goja.Value
	// mu guards the interrupt against the end of the call it was meant
	// for: a timer that fires late must not interrupt the next one.
	mu       sync.Mutex
	inCall   bool
	deadline bool
}

func (j *jsImpl) start() (*jsInstance, error) {
	d := j.fn.Decl
	vm := goja.New()
	vm.SetMaxCallStackSize(jsStackDepth)
	if d.Deterministic {
		vm.SetTimeSource(func() time.Time { return jsEpoch })
		r := rand.New(rand.NewPCG(1, 2))
		vm.SetRandSource(r.Float64)
	}
	i := &jsInstance{j: j, vm: vm, args: make([]goja.Value, len(j.fn.Params))}
	var err error
	i.guard(func() { _, err = vm.RunProgram(j.prog) })
	if err != nil {
		return nil, jsPlaced(d, err)
	}
	fn, ok := goja.AssertFunction(vm.Get(d.Export))
	if !ok {
		return nil, spec.Errorf(d.CodePos, d.Path+".code", "function %s: the code defines no function %s(...)", d.Name, d.Export)
	}
	i.fn = fn
	i.rows, _ = goja.AssertFunction(vm.Get("Array").ToObject(vm).Get("from"))
	return i, nil
}

// guard runs f (a use of the runtime) under the time limit.
func (i *jsInstance) guard(f func()) {
	i.mu.Lock()
	i.inCall, i.deadline = true, false
	i.mu.Unlock()
	t := time.AfterFunc(i.j.fn.Timeout, func() {
		i.mu.Lock()
		defer i.mu.Unlock()
		if i.inCall {
			i.deadline = true
			i.vm.Interrupt(ErrTimeout)
		}
	})
	f()
	t.Stop()
	i.mu.Lock()
	i.inCall = false
	i.mu.Unlock()
	i.vm.ClearInterrupt()
}

// Close implements Instance.
func (i *jsInstance) Close(context.Context) error { return nil }

// callRow calls the function over row r of args.
func (i *jsInstance) callRow(args [][]row.Value, r int) (goja.Value, error) {
	for k, col := range args {
		v, err := toJS(i.vm, col[r], i.j.fn.Params[k])
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", k+1, err)
		}
		i.args[k] = v
	}
	res, err := i.fn(goja.Undefined(), i.args...)
	if err != nil {
		return nil, jsError(err)
	}
	return res, nil
}

// jsError is a script's failure as a row's error.
func jsError(err error) error {
	var ie *goja.InterruptedError
	var ex *goja.Exception
	var so *goja.StackOverflowError
	switch {
	case errors.As(err, &ie):
		if e, ok := ie.Value().(error); ok {
			return e
		}
	case errors.As(err, &so):
		return fmt.Errorf("the script's calls nest deeper than %d", jsStackDepth)
	case errors.As(err, &ex):
		msg := ex.Value().String()
		if st := ex.Stack(); len(st) > 0 {
			p := st[0].Position()
			msg += fmt.Sprintf(" (line %d of the code)", p.Line)
		}
		return errors.New(msg)
	}
	return err
}

// each runs one(r) for the rows of a batch, under the time limit: a
// row that runs past it fails, the rest of the batch gets a fresh limit,
// and after maxTimeouts such rows the rest fail without a call.
func (i *jsInstance) each(n int, errs []error, one func(r int) error) error {
	r := 0
	timeouts := 0
	for r < n {
		if i.base != nil && i.base.Err() != nil {
			return &fatalError{context.Cause(i.base)}
		}
		i.guard(func() {
			for ; r < n; r++ {
				if err := one(r); err != nil {
					errs[r] = err
					if errors.Is(err, ErrTimeout) {
						r++
						return
					}
				}
			}
		})
		if r > 0 && errors.Is(errs[r-1], ErrTimeout) {
			timeouts++
			if timeouts >= maxTimeouts {
				for ; r < n; r++ {
					errs[r] = fmt.Errorf("not called: the function ran past its time limit on %d rows of this batch", timeouts)
				}
			}
		}
	}
	return nil
}

// Scalar implements Instance.
func (i *jsInstance) Scalar(args [][]row.Value, n int, out []row.Value, errs []error) error {
	t := i.j.fn.Returns
	return i.each(n, errs, func(r int) error {
		res, err := i.callRow(args, r)
		if err == nil {
			out[r], err = fromJS(res, t)
		}
		if err != nil {
			out[r] = row.NullValue
		}
		return err
	})
}

// Table implements Instance: the function returns an array (or any
// iterable) of rows, each an array of the columns in order, an object of
// them by name, or for a function of one column the value itself.
func (i *jsInstance) Table(args [][]row.Value, n int, errs []error) ([]int, []row.Row, error) {
	var rowOf []int
	var rows []row.Row
	cols := i.j.fn.Columns
	err := i.each(n, errs, func(r int) error {
		res, err := i.callRow(args, r)
		if err != nil {
			return err
		}
		if goja.IsNull(res) || goja.IsUndefined(res) {
			return nil
		}
		arr, err := i.rows(goja.Undefined(), res)
		if err != nil {
			return fmt.Errorf("a table function returns an array or an iterable of rows: %w", jsError(err))
		}
		items, _ := arr.Export().([]any)
		mark := len(rows)
		for _, it := range items {
			out, err := tableRow(it, cols)
			if err != nil {
				rows, rowOf = rows[:mark], rowOf[:mark]
				return err
			}
			rows, rowOf = append(rows, out), append(rowOf, r)
		}
		return nil
	})
	return rowOf, rows, err
}

func tableRow(it any, cols []row.Field) (row.Row, error) {
	out := make(row.Row, len(cols))
	switch x := it.(type) {
	case []any:
		if len(x) != len(cols) {
			return nil, fmt.Errorf("a row of %d values, the function returns %d columns", len(x), len(cols))
		}
		for k, c := range cols {
			v, err := fromGo(x[k], c.Type)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			out[k] = v
		}
	case map[string]any:
		for k, c := range cols {
			v, err := fromGo(x[c.Name], c.Type)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			out[k] = v
		}
	default:
		if len(cols) != 1 {
			return nil, fmt.Errorf("a row is an array or an object of the %d columns, not %s", len(cols), jsTypeName(it))
		}
		v, err := fromGo(it, cols[0].Type)
		if err != nil {
			return nil, err
		}
		out[0] = v
	}
	return out, nil
}

// errNoJSAggregate: JavaScript functions are scalar or table (Load
// refuses a JavaScript aggregate).
var errNoJSAggregate = errors.New("a JavaScript function cannot be an aggregate")

// AggUpdate implements Instance.
func (i *jsInstance) AggUpdate([][]byte, []int, [][]row.Value, []bool) ([][]byte, []row.Value, error) {
	return nil, nil, errNoJSAggregate
}

// AggMerge implements Instance.
func (i *jsInstance) AggMerge(_, _ [][]byte) ([][]byte, error) { return nil, errNoJSAggregate }

// AggResult implements Instance.
func (i *jsInstance) AggResult([][]byte) ([]row.Value, error) { return nil, errNoJSAggregate }

func jsTypeName(x any) string {
	if x == nil {
		return "null"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", x), "goja.")
}

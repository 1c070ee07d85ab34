// Package udf holds the user-defined functions a pipeline file declares
// under `functions:`: WebAssembly modules run on wazero (wasm.go) and
// inline JavaScript run on goja (js.go), scalar, table and aggregate. It
// loads and checks them (Load: `etld validate` compiles every module and
// checks its exports), resolves a call to a declaration by its argument
// types (Registry.Resolve), and gives each operator an Instance of its own
// to call a batch of rows at a time. The layout of a batch, the ABI every
// WebAssembly module implements whatever its language, is in abi.go and
// docs/udf.md.
//
// Sandbox: a WebAssembly instance has a memory cap, no file system, no
// network, and a fake clock and random source unless it is declared
// `deterministic: false`; every call has a time limit, and a call that
// runs past it is stopped. A script gets the time limit and a bounded
// call stack. A function that traps, runs out of time or returns a value
// of the wrong type fails the rows of its batch, each an error the
// operator hands to its source's on_error policy.
package udf

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// Kind is what a function computes.
type Kind uint8

const (
	// Scalar gives one value per row.
	Scalar Kind = iota + 1
	// Table gives zero or more rows per row (LATERAL TABLE).
	Table
	// Aggregate folds the rows of a group into one value.
	Aggregate
)

func (k Kind) String() string {
	switch k {
	case Table:
		return "table"
	case Aggregate:
		return "aggregate"
	}
	return "scalar"
}

// Defaults of the sandbox.
const (
	DefaultMemoryLimit = 64 << 20
	DefaultTimeout     = 5 * time.Second
)

// Function is a declared function, loaded: its module compiled or its
// script parsed.
type Function struct {
	Name     string
	Kind     Kind
	Language string
	// Params are the parameter types, in order.
	Params []row.Type
	// Returns is a scalar or aggregate function's result type (nullable);
	// Columns are a table function's result columns.
	Returns row.Type
	Columns []row.Field
	// Deterministic is false when the function may give another result
	// for the same arguments (it then gets the real clock and random
	// source): the pipeline's output is then not exactly once.
	Deterministic bool
	// NullTolerant: rows with a NULL argument are passed to the function;
	// otherwise their result is NULL and the function is not called.
	NullTolerant bool
	Timeout      time.Duration
	// Decl is the declaration in the pipeline file.
	Decl *spec.Function
	impl impl
}

// impl is a language's loaded function.
type impl interface {
	newInstance(ctx context.Context) (Instance, error)
	close(ctx context.Context) error
}

// Signature is the function as SQL shows it: name(TYPE, ...).
func (f *Function) Signature() string {
	types := make([]string, len(f.Params))
	for i, t := range f.Params {
		types[i] = t.String()
	}
	return fmt.Sprintf("%s(%s)", f.Name, strings.Join(types, ", "))
}

// NewInstance starts a copy of the function for one operator; ctx
// bounds its calls (each also has the function's time limit). The
// operator calls it from one goroutine and closes it when done.
func (f *Function) NewInstance(ctx context.Context) (Instance, error) {
	inst, err := f.impl.newInstance(ctx)
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", f.Name, err)
	}
	return inst, nil
}

// Instance is a running copy of a function, used from one goroutine.
type Instance interface {
	// Scalar computes the function over n rows; args[k][i] is argument k
	// of row i. It sets out[i], or errs[i] for a row the function failed
	// on (a trap, a time-out, an error it reported, a result of the wrong
	// type). An error return means the instance can no longer run.
	Scalar(args [][]row.Value, n int, out []row.Value, errs []error) error
	// Table computes a table function over n rows: the output rows,
	// each with the input row it belongs to (rowOf, in input order), and
	// errs[i] for an input row the function failed on (its output rows
	// are left out).
	Table(args [][]row.Value, n int, errs []error) (rowOf []int, rows []row.Row, err error)
	// AggUpdate, AggMerge and AggResult are an aggregate function's
	// calls over accumulators (aggregate.go); a failure of any fails the
	// pipeline.
	AggUpdate(accs [][]byte, group []int, args [][]row.Value, add []bool) ([][]byte, []row.Value, error)
	AggMerge(accs, others [][]byte) ([][]byte, error)
	AggResult(accs [][]byte) ([]row.Value, error)
	Close(ctx context.Context) error
}

// ErrTimeout is the cause of a call stopped at its time limit.
var ErrTimeout = errors.New("the call ran past its time limit")

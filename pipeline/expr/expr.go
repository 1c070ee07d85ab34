// Package expr compiles SQL expressions (pipeline/sql ASTs) into typed Go
// closures, once, at plan time. Evaluating a compiled expression never walks
// the tree and never switches on types per row: every operator and function
// is specialised for its argument types when it is compiled, constants are
// folded, and numeric expressions do not allocate.
//
// Semantics follow Flink SQL: SQL NULL with three-valued logic (TRUE, FALSE,
// UNKNOWN), implicit numeric widening INT < BIGINT < DECIMAL < FLOAT <
// DOUBLE, Flink's DECIMAL result types up to 38 digits (LogicalTypeMerging;
// a DECIMAL result or CAST that does not fit its type is NULL, as Flink's
// DecimalData.fromBigDecimal), Java integer arithmetic (INT and BIGINT wrap
// on overflow), integer division and modulo by zero fail, DOUBLE division
// by zero gives Infinity or NaN. The session time zone is UTC: TIMESTAMP and
// TIMESTAMP_LTZ hold the same microseconds.
//
// Where etld deliberately differs from Flink it says so next to the code:
// a DECIMAL result that may overflow (its type was cut to 38 digits) or a
// CAST to a too narrow DECIMAL is nullable even over NOT NULL operands,
// since it may be NULL; a constant that cannot be
// computed (CAST('12x' AS INT) outside any CASE branch) is a plan-time
// error; regular expressions are Go's RE2 (no backreferences, lookaround
// or possessive quantifiers: refused at plan time when literal, a run-time
// error when computed, where Flink returns NULL); LIKE's % and _ match
// line breaks too.
//
// Errors: anything wrong with the expression itself (unknown column or
// function, type mismatch, impossible CAST, bad literal pattern) is a
// *sql.Error with the position of the offending node, found at Compile.
// A value that fails at run time (CAST('12x' AS INT), integer division by
// zero) makes Eval return an *EvalError naming the expression; the runtime
// hands it to the source's on_error policy.
package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// Compiled is a compiled expression.
type Compiled struct {
	// Type is the result type; NotNull when the result is provably never
	// NULL.
	Type row.Type
	// Eval computes the expression over one input row. r must have the
	// scope's columns in order, each value of its column's type or NULL.
	// Eval is safe for concurrent use.
	Eval func(r row.Row) (row.Value, error)
	// Const reports that the expression was folded to Value at compile
	// time: it reads no column and calls nothing nondeterministic.
	Const bool
	Value row.Value
	// Clock names a function the expression calls that reads the clock
	// (NOW(), PROCTIME(), ...) or is random (UUID()), "" when it calls
	// none: a run that reads the same rows again gets other values.
	Clock string
	// Sequential names a call whose value for a row depends on the rows
	// the expression was evaluated over before it (RAND with a constant
	// seed draws the next value of its sequence) or on the watermark the
	// operator has seen (CURRENT_WATERMARK), "" when it calls none: it
	// must be evaluated on one goroutine, over the rows in their order,
	// each run with a fresh copy (Fresh).
	Sequential string
	// ReadsWatermark reports that the expression calls CURRENT_WATERMARK:
	// compile it again with WithWatermark for each run of its operator
	// (Fresh), which sets the watermark as it passes.
	ReadsWatermark bool
	// WatermarkOf are the input columns CURRENT_WATERMARK is called on,
	// which the planner checks are the input's event-time attribute.
	WatermarkOf []int
	// Reads lists the input columns the expression reads, each once: what
	// the planner may not leave undecoded (projection pushdown).
	Reads []int
	// IsColumn reports that the expression is one input column as it is
	// (a column reference, perhaps retyped to a wider nullability):
	// Column, whose value is the expression's for every row.
	IsColumn bool
	Column   int
	// Infallible reports that Eval never fails: the expression is a
	// constant, a column, or a field of one (or of a field of one).
	Infallible bool
	// Shifted reports that the expression is a TIMESTAMP column plus a
	// constant day-time interval (event_time - INTERVAL '1' SECOND, a
	// watermark's usual form): for a row whose column ShiftColumn is not
	// NULL, Eval gives its microseconds plus ShiftMicros, or an error
	// when that overflows. A watermark is then read without a call per
	// operand (plan's eventTime).
	Shifted     bool
	ShiftColumn int
	ShiftMicros int64
	// Paths are the chains of field accesses over input columns the
	// expression reads (r.f.g), each where it is read (two reads of one
	// field are two paths), none a prefix of another of the same read;
	// Whole the columns of Reads it reads other than as the start of a
	// path. A column of Reads not in Whole is read only through Paths:
	// nested projection pushdown (FieldPath.ReadAt).
	Paths []*FieldPath
	Whole []int

	// src, scope and opts are what it was compiled from, and all every
	// path its compiling made, for Share to compile it again.
	src   sql.Expr
	scope Scope
	opts  []Option
	all   []*FieldPath
}

// True evaluates a predicate: it reports whether the expression is TRUE
// for r (FALSE and UNKNOWN both fail a WHERE clause).
func (c *Compiled) True(r row.Row) (bool, error) {
	v, err := c.Eval(r)
	return err == nil && v.Type() == row.Boolean && v.Bool(), err
}

// Scope resolves the column references of an expression.
type Scope interface {
	// Resolve finds the column qualifier.name (qualifier "" when the
	// reference is unqualified). The error's text is reported at the
	// reference's position, so it should say what is wrong and what would
	// be right.
	Resolve(qualifier, name string) (index int, t row.Type, err error)
}

// Table is the scope of an expression over one input: a source, a
// transform or a subquery, known as Name or, when written, Alias.
// Names compare without regard to case.
type Table struct {
	Name   string
	Alias  string
	Schema row.Schema
}

// Resolve implements Scope.
func (t Table) Resolve(qualifier, name string) (int, row.Type, error) {
	label := t.Name
	if t.Alias != "" {
		label = t.Alias
	}
	if qualifier != "" && !strings.EqualFold(qualifier, t.Name) && !strings.EqualFold(qualifier, t.Alias) {
		known := quoteList([]string{t.Alias, t.Name})
		return 0, row.Type{}, fmt.Errorf("table %q is not in scope here (the input is %s)", qualifier, known)
	}
	if i := t.Schema.Index(name); i >= 0 {
		return i, t.Schema.Fields[i].Type, nil
	}
	msg := fmt.Sprintf("column %q not found in table %s", name, label)
	if label == "" {
		msg = fmt.Sprintf("column %q not found", name)
	}
	if s := suggest(name, t.Schema.Names()); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else if t.Schema.Len() > 0 && t.Schema.Len() <= 12 {
		msg += " (its columns are " + strings.Join(t.Schema.Names(), ", ") + ")"
	}
	return 0, row.Type{}, fmt.Errorf("%s", msg)
}

func quoteList(names []string) string {
	var q []string
	for _, n := range names {
		if n != "" {
			q = append(q, fmt.Sprintf("%q", n))
		}
	}
	return strings.Join(q, " or ")
}

// Option changes how Compile works.
type Option func(*compiler)

// WithClock sets the clock that CURRENT_TIMESTAMP, NOW() and friends read
// (time.Now by default). Tests use it to make them deterministic.
func WithClock(now func() time.Time) Option {
	return func(c *compiler) { c.now = now }
}

// WithSubstitute lets the planner replace subexpressions by columns of the
// input: f is asked about every node before it is compiled, and when it
// returns ok the node compiles to a read of column index of type t. The
// planner uses it for what it computed itself: aggregate calls and GROUP
// BY expressions, in HAVING and in the SELECT list of an aggregate query.
func WithSubstitute(f func(e sql.Expr) (index int, t row.Type, ok bool)) Option {
	return func(c *compiler) { c.subst = f }
}

// Compile type-checks e against the columns of scope and compiles it.
// Errors in e are *sql.Error values positioned in e's SQL text.
func Compile(e sql.Expr, scope Scope, opts ...Option) (*Compiled, error) {
	return compileWith(e, scope, opts, nil)
}

// compileWith is Compile, sharing the subexpressions of memo when it is
// not nil (Share).
func compileWith(e sql.Expr, scope Scope, opts []Option, memo *memoTable) (*Compiled, error) {
	c := &compiler{scope: scope, now: time.Now, memo: memo}
	for _, o := range opts {
		o(c)
	}
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	if isInterval(n.t.ID) {
		return nil, errAt(e.Pos(), "an INTERVAL is not a value here: add it to or subtract it from a timestamp (event_time - INTERVAL '5' SECOND)")
	}
	out := &Compiled{Type: n.t, Eval: n.eval, Const: n.konst, Value: n.val, Clock: c.clock, Reads: c.reads,
		Sequential: c.sequence, ReadsWatermark: c.readsWatermark, WatermarkOf: c.watermarkOf,
		src: e, scope: scope, opts: opts, all: c.paths}
	c.finishPaths(out)
	if n.col >= 0 && !n.konst {
		out.IsColumn, out.Column = true, n.col
	}
	out.Infallible = n.konst || n.col >= 0 || n.path != nil
	if n.shift != nil {
		out.Shifted, out.ShiftColumn, out.ShiftMicros = true, n.shift.col, n.shift.micros
	}
	if n.t.ID == row.Null {
		// The bare NULL literal: give it a type a sink can hold.
		out.Type = row.Of(row.String)
	}
	return out, nil
}

// EvalError is a run-time failure of an expression over one row.
type EvalError struct {
	Expr string // the SQL text of the (sub)expression that failed
	Err  error
}

func (e *EvalError) Error() string { return e.Expr + ": " + e.Err.Error() }

func (e *EvalError) Unwrap() error { return e.Err }

// aggregates are the functions the planner computes; Compile refuses them.
var aggregates = map[string]bool{
	"COUNT": true, "SUM": true, "MIN": true, "MAX": true, "AVG": true,
	"STDDEV_POP": true, "STDDEV_SAMP": true, "VAR_POP": true, "VAR_SAMP": true,
	"FIRST_VALUE": true, "LAST_VALUE": true, "LISTAGG": true, "COLLECT": true,
	"STDDEV": true, "VARIANCE": true, "ARRAY_AGG": true, "JSON_ARRAYAGG": true, "JSON_OBJECTAGG": true,
	"PERCENTILE": true,
}

// IsAggregate reports whether name (any case) is an aggregate function,
// a built-in or a user aggregate the planner marked with
// UserAggregatePrefix.
func IsAggregate(name string) bool {
	return aggregates[strings.ToUpper(name)] || strings.HasPrefix(name, UserAggregatePrefix)
}

// UserAggregatePrefix starts the name the planner gives the calls of a
// pipeline file's own aggregate functions, so that every check for an
// aggregate call takes them for one; no SQL text can write it.
const UserAggregatePrefix = "$udaf:"

// AggregateType is the result type of an aggregate over arg, as Flink
// derives it: COUNT gives BIGINT NOT NULL; SUM
// keeps the argument type (DECIMAL(p, s) widens to DECIMAL(38, s)); AVG
// keeps it too (INT averages are integer, as in Flink; DECIMAL(p, s) gives
// DECIMAL(38, max(6, s))); MIN and MAX keep it. All but COUNT are nullable.
// For COUNT(*) pass the zero Type.
func AggregateType(name string, arg row.Type) (row.Type, error) {
	name = strings.ToUpper(name)
	switch name {
	case "COUNT":
		return row.Type{ID: row.BigInt, NotNull: true}, nil
	case "SUM", "AVG":
		if !arg.ID.Numeric() {
			return row.Type{}, fmt.Errorf("%s needs a numeric argument, not %s", name, arg)
		}
		t := arg.Nullable()
		if t.ID == row.Decimal {
			if name == "SUM" {
				t.Precision = row.MaxDecimalPrecision
			} else {
				t = divDecimalType(row.MaxDecimalPrecision, arg.Scale, 20, 0)
			}
		}
		return t, nil
	case "MIN", "MAX":
		if arg.ID == row.Bytes || arg.ID == row.Null {
			return row.Type{}, fmt.Errorf("%s cannot order values of type %s", name, arg)
		}
		return arg.Nullable(), nil
	}
	return row.Type{}, fmt.Errorf("%s is not an aggregate function", name)
}

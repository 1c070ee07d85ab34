package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

type evalFn = func(r row.Row) (row.Value, error)

// node is a compiled subexpression.
type node struct {
	t     row.Type
	eval  evalFn
	konst bool
	val   row.Value // when konst
	col   int       // the input column when the node only reads one, else -1
	e     sql.Expr
	// path is set on a column read as it is (no Fields) and on a chain of
	// field accesses over one (r.f.g): what nested projection pushdown
	// may read from a column of its own (FieldPath).
	path *FieldPath
	// shift is set on a TIMESTAMP column plus a constant day-time
	// interval (Compiled.Shifted).
	shift *shiftOf
}

// shiftOf is a column's microseconds and the constant added to them.
type shiftOf struct {
	col    int
	micros int64
}

type compiler struct {
	scope Scope
	now   func() time.Time
	// zone is the session time zone, nil for UTC (WithZone).
	zone *time.Location
	// clock names the first function read that reads the clock, "" if none.
	clock string
	subst func(sql.Expr) (int, row.Type, bool)
	// reads holds the input columns the expression reads, in the order
	// first read, for Compiled.Reads.
	reads []int
	// refs counts the references to each input column; rootsUsed those
	// a field access reads a field of; paths are the field-access chains
	// compiled (Compiled.Paths keeps those no longer chain extends).
	refs      map[int]int
	rootsUsed map[int]int
	paths     []*FieldPath
	// lazy counts the enclosing constructs that may not evaluate the node
	// being compiled (CASE branches, the right side of AND): a constant
	// that fails there is left to fail at run time, if ever reached.
	lazy int
	// volatiles counts the nodes compiled that read the clock or are
	// random: a subexpression whose compiling counted one is never
	// shared (memo).
	volatiles int
	// memo, when compiling again for Share, holds the subexpressions
	// to evaluate once per row.
	memo *memoTable
	// sequence names the first call whose value depends on the rows
	// evaluated before (a seeded RAND) or on the operator's watermark
	// (CURRENT_WATERMARK), "" if none: Compiled.Sequential.
	sequence string
	// watermark, if set, is what CURRENT_WATERMARK reads (WithWatermark);
	// readsWatermark says the expression calls it.
	watermark      *Watermark
	readsWatermark bool
	// watermarkOf are the columns CURRENT_WATERMARK is called on.
	watermarkOf []int
}

// sequential notes a call whose value depends on the order the rows are
// evaluated in, or on when (Compiled.Sequential).
func (c *compiler) sequential(e *sql.Call) {
	if c.sequence == "" {
		c.sequence = strings.ToUpper(e.Name) + "(...)"
	}
}

func errAt(p sql.Pos, format string, args ...any) *sql.Error {
	return &sql.Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

func constEval(v row.Value) evalFn {
	return func(row.Row) (row.Value, error) { return v, nil }
}

func constNode(e sql.Expr, t row.Type, v row.Value) *node {
	if v.IsNull() {
		t.NotNull = false
	}
	return &node{t: t, eval: constEval(v), konst: true, val: v, col: -1, e: e}
}

func colNode(e sql.Expr, i int, t row.Type) *node {
	return &node{t: t, eval: func(r row.Row) (row.Value, error) { return r[i], nil }, col: i, e: e}
}

// read notes that the expression reads input column i.
func (c *compiler) read(i int) {
	if c.refs == nil {
		c.refs = map[int]int{}
	}
	c.refs[i]++
	for _, j := range c.reads {
		if j == i {
			return
		}
	}
	c.reads = append(c.reads, i)
}

// finish makes the node for e computed by f from args, folding it to a
// constant when every argument is one.
func (c *compiler) finish(e sql.Expr, t row.Type, f evalFn, args ...*node) (*node, error) {
	n := &node{t: t, eval: f, col: -1, e: e}
	for _, a := range args {
		if !a.konst {
			return n, nil
		}
	}
	v, err := f(nil)
	if err != nil {
		if c.lazy > 0 {
			return n, nil
		}
		return nil, errAt(e.Pos(), "%v", err)
	}
	return constNode(e, t, v), nil
}

// nullEval is NULL for every row, after evaluating the operands that are
// not constants: an operand of type NULL that is not the NULL literal
// (ERROR(...)) still fails the row it fails on.
func nullEval(args ...*node) evalFn {
	var evals []evalFn
	for _, a := range args {
		if !a.konst {
			evals = append(evals, a.eval)
		}
	}
	if len(evals) == 0 {
		return constEval(row.NullValue)
	}
	return func(r row.Row) (row.Value, error) {
		for _, f := range evals {
			if _, err := f(r); err != nil {
				return row.NullValue, err
			}
		}
		return row.NullValue, nil
	}
}

// nullNode is e of type t that is NULL whatever its operands' values (an
// operand of type NULL): a constant when they are, else nullEval.
func nullNode(e sql.Expr, t row.Type, args ...*node) *node {
	for _, a := range args {
		if !a.konst {
			t.NotNull = false
			return &node{t: t, eval: nullEval(args...), col: -1, e: e}
		}
	}
	return constNode(e, t, row.NullValue)
}

// evalErr wraps a run-time failure of e.
func evalErr(text func() string, err error) error { return &EvalError{Expr: text(), Err: err} }

func (c *compiler) compile(e sql.Expr) (*node, error) {
	if e == nil {
		return nil, errAt(sql.Pos{}, "missing expression")
	}
	if c.subst != nil {
		if i, t, ok := c.subst(e); ok {
			c.read(i)
			return colNode(e, i, t), nil
		}
	}
	if c.memo != nil {
		return c.memo.compile(c, e)
	}
	return c.compileNode(e)
}

// compileNode compiles e, whatever its kind, without substitution.
func (c *compiler) compileNode(e sql.Expr) (*node, error) {
	switch e := e.(type) {
	case *sql.Literal:
		return c.literal(e)
	case *sql.IntervalLit:
		if e.YearMonth() {
			return constNode(e, row.Type{ID: typeIntervalYM, NotNull: true}, row.BigIntValue(e.Months)), nil
		}
		us := e.Value.Microseconds()
		return constNode(e, row.Type{ID: typeInterval, NotNull: true}, row.BigIntValue(us)), nil
	case *sql.ColumnRef:
		if c.scope == nil {
			return nil, errAt(e.Pos(), "column %q cannot be used here: the expression has no input table", e.Column.Name)
		}
		if !e.Table.IsZero() {
			return c.qualifiedRef(e)
		}
		i, t, err := c.scope.Resolve(e.Table.Name, e.Column.Name)
		if err != nil {
			return nil, errAt(e.Pos(), "%v", err)
		}
		c.read(i)
		return rootNode(e, i, t), nil
	case *sql.Star:
		return nil, errAt(e.Pos(), "* is allowed only in a SELECT list and in COUNT(*)")
	case *sql.Unary:
		return c.unary(e)
	case *sql.Binary:
		return c.binary(e)
	case *sql.IsExpr:
		return c.isExpr(e)
	case *sql.Between:
		return c.between(e)
	case *sql.InList:
		return c.inList(e)
	case *sql.Like:
		return c.like(e)
	case *sql.Call:
		return c.call(e)
	case *sql.Cast:
		return c.cast(e)
	case *sql.Case:
		return c.caseExpr(e)
	case *sql.Trim:
		return c.trim(e)
	case *sql.Extract:
		return c.extract(e)
	case *sql.Index:
		return c.index(e)
	case *sql.FieldAccess:
		x, err := c.compile(e.X)
		if err != nil {
			return nil, err
		}
		return c.fieldAccess(e, x, e.Field)
	}
	return nil, errAt(e.Pos(), "unsupported expression %T", e)
}

func (c *compiler) literal(e *sql.Literal) (*node, error) {
	switch e.Kind {
	case sql.LitNull:
		return constNode(e, row.Type{ID: row.Null}, row.NullValue), nil
	case sql.LitUnknown:
		return constNode(e, row.Type{ID: row.Boolean}, row.NullValue), nil
	}
	if e.Type.ID == row.Null && !e.Value.IsNull() {
		return nil, errAt(e.Pos(), "literal %s has no type", e.Text)
	}
	return constNode(e, e.Type, e.Value), nil
}

// compileLazy compiles a subexpression that may not be evaluated.
func (c *compiler) compileLazy(e sql.Expr) (*node, error) {
	c.lazy++
	defer func() { c.lazy-- }()
	return c.compile(e)
}

func (c *compiler) compileAll(es []sql.Expr) ([]*node, error) {
	out := make([]*node, len(es))
	for i, e := range es {
		n, err := c.compile(e)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (c *compiler) unary(e *sql.Unary) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case sql.OpPlus:
		if !x.t.ID.Numeric() && !isInterval(x.t.ID) && x.t.ID != row.Null {
			return nil, errAt(e.At, "unary + needs a number, not %s", typeName(x.t))
		}
		return x, nil
	case sql.OpNeg:
		f, err := negate(x)
		if err != nil {
			return nil, errAt(e.At, "%v", err)
		}
		t := x.t
		if t.ID == row.Null {
			t = row.Type{ID: row.Int}
		}
		return c.finish(e, t, f, x)
	case sql.OpNot:
		if x.t.ID != row.Boolean && x.t.ID != row.Null {
			return nil, errAt(e.At, "NOT needs a BOOLEAN, not %s", typeName(x.t))
		}
		return c.finish(e, row.Type{ID: row.Boolean, NotNull: x.t.NotNull}, not(x.eval), x)
	}
	return nil, errAt(e.At, "unknown operator %v", e.Op)
}

func (c *compiler) binary(e *sql.Binary) (*node, error) {
	l, err := c.compile(e.L)
	if err != nil {
		return nil, err
	}
	var r *node
	if e.Op == sql.OpAnd || e.Op == sql.OpOr {
		r, err = c.compileLazy(e.R)
	} else {
		r, err = c.compile(e.R)
	}
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case sql.OpAnd, sql.OpOr:
		return c.logic(e, l, r)
	case sql.OpEq, sql.OpNe, sql.OpLt, sql.OpLe, sql.OpGt, sql.OpGe:
		f, err := c.comparison(e.Op, l, r)
		if err != nil {
			return nil, errAt(e.OpAt, "%v", err)
		}
		return c.finish(e, row.Type{ID: row.Boolean, NotNull: l.t.NotNull && r.t.NotNull}, f, l, r)
	case sql.OpAdd, sql.OpSub, sql.OpMul, sql.OpDiv, sql.OpMod:
		return c.arith(e, e.OpAt, e.Op, l, r)
	case sql.OpConcat:
		return c.concatOp(e, l, r)
	case sql.OpDistinct, sql.OpNotDistinct:
		return c.distinctFrom(e, l, r)
	}
	return nil, errAt(e.OpAt, "unknown operator %v", e.Op)
}

// coerce converts n to type t (a widening conversion: NULL to anything,
// number to a wider number, DATE to TIMESTAMP, TIMESTAMP to
// TIMESTAMP_LTZ). Nullability follows n.
func (c *compiler) coerce(n *node, t row.Type) (*node, error) {
	t.NotNull = n.t.NotNull
	if n.t.Nullable() == t.Nullable() {
		return n, nil
	}
	if n.t.ID == row.Null {
		if !n.konst {
			// ERROR(...) in a CASE branch: it takes the branches' type.
			return &node{t: t, eval: n.eval, col: -1, e: n.e}, nil
		}
		return constNode(n.e, t, row.NullValue), nil
	}
	if n.t.ID == t.ID && t.ID != row.Decimal && !isTimestamp(t.ID) {
		// Same family, other length: no conversion needed.
		return &node{t: t, eval: n.eval, konst: n.konst, val: n.val, col: n.col, e: n.e}, nil
	}
	k, err := castKernel(n.t, t, c.zone)
	if err != nil {
		return nil, err
	}
	text := exprString(n.e)
	ev := n.eval
	f := func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		if err != nil || v.IsNull() {
			return v, err
		}
		out, err := k(v)
		if err != nil {
			return row.NullValue, evalErr(text, err)
		}
		return out, nil
	}
	return c.finish(n.e, t, f, n)
}

// unify converts nodes to their common type, or reports the two types
// that have none.
func (c *compiler) unify(what string, ns []*node) (row.Type, error) {
	t := row.Type{ID: row.Null, NotNull: true}
	for _, n := range ns {
		u, ok := commonType(t, n.t)
		if !ok {
			return row.Type{}, errAt(n.e.Pos(), "%s: %s and %s have no common type; CAST one of them", what, typeName(t), typeName(n.t))
		}
		t = u
	}
	for i, n := range ns {
		m, err := c.coerce(n, t)
		if err != nil {
			return row.Type{}, errAt(n.e.Pos(), "%s: %v", what, err)
		}
		ns[i] = m
	}
	return t, nil
}

package sql

// The nodes of a query: WITH, UNION, the SELECT block and what FROM
// reads. ast.go has the interfaces and the expression nodes.

// Query is a whole query: optional WITH clauses, then one SELECT or
// several combined with UNION ALL / UNION, left to right (SQL gives both
// the same precedence). Parenthesised operands are flattened when that
// keeps the meaning (UNION ALL is associative); otherwise the operand is a
// SELECT * FROM (query). Selects has at least one element.
type Query struct {
	// With holds the common table expressions, in order; each may read
	// the ones before it.
	With    []*CTE
	Selects []*Select
	// UnionAt holds the position of each UNION keyword: UnionAt[i] joins
	// Selects[i] and Selects[i+1].
	UnionAt []Pos
	// Distinct parallels UnionAt: true for UNION (DISTINCT), which removes
	// the duplicates of everything to its left and the SELECT to its right;
	// false for UNION ALL. Nil when every union is UNION ALL.
	Distinct []bool
	// Ops parallels UnionAt when a set operation other than UNION is
	// written: Ops[i] is the operation between Selects[i] and
	// Selects[i+1] (UnionAt then holds its keyword, Distinct whether it
	// is the distinct form). Nil when every operation is a UNION.
	// INTERSECT binds tighter than UNION and EXCEPT, as in SQL.
	Ops []SetOp
	// OrderBy and Limit are the query's ORDER BY keys and the rows it
	// keeps (parse_order.go); Limit is nil for an ORDER BY without a row
	// count (a sort of every row).
	OrderBy []*OrderItem
	OrderAt Pos // the ORDER keyword
	Limit   *Limit
}

// SetOp is a set operation between two SELECTs.
type SetOp uint8

// The set operations; the zero SetOp is UNION.
const (
	Union SetOp = iota
	Intersect
	Except
)

func (o SetOp) String() string { return [...]string{"UNION", "INTERSECT", "EXCEPT"}[o] }

// Op returns the i-th set operation (between Selects[i] and Selects[i+1]).
func (q *Query) Op(i int) SetOp {
	if i < len(q.Ops) {
		return q.Ops[i]
	}
	return Union
}

// CTE is one `name AS (query)` of a WITH clause.
type CTE struct {
	Name  Ident
	Query *Query
}

// UnionDistinct reports whether the i-th union (between Selects[i] and
// Selects[i+1]) removes duplicates.
func (q *Query) UnionDistinct(i int) bool { return i < len(q.Distinct) && q.Distinct[i] }

// Pos returns the position of the first SELECT.
func (q *Query) Pos() Pos {
	if len(q.Selects) == 0 || q.Selects[0] == nil {
		return Pos{}
	}
	return q.Selects[0].Pos()
}

// Select is one SELECT block.
type Select struct {
	At       Pos // the SELECT keyword
	Distinct bool
	// DistinctAt is the position of the DISTINCT keyword, when Distinct.
	DistinctAt Pos
	Items      []*SelectItem
	From       FromItem
	Where      Expr // nil when absent
	GroupBy    []Expr
	GroupByAt  Pos  // the GROUP keyword, when GroupBy is not empty
	Having     Expr // nil when absent
	// Windows is the WINDOW clause: the named windows OVER w refers to.
	Windows []*NamedWindow
}

// Pos returns the position of the SELECT keyword.
func (s *Select) Pos() Pos { return s.At }

// SelectItem is one entry of the select list. Expr is a *Star for `*` and
// `t.*` (the only place a *Star appears). Alias is zero when none was
// written; naming unaliased columns is the planner's job.
type SelectItem struct {
	Expr  Expr
	Alias Ident
}

// Pos returns the position of the item's expression.
func (s *SelectItem) Pos() Pos {
	if s.Expr == nil {
		return Pos{}
	}
	return s.Expr.Pos()
}

// TableRef reads a source or transform by name. AsOf is the X of
// `name FOR SYSTEM_TIME AS OF X [AS alias]` (nil when absent), at AsOfAt
// (the FOR keyword): the planner decides what it means, a temporal join
// when X is an event-time attribute of the probe side and the table is
// versioned, a lookup join when X is a processing-time attribute.
type TableRef struct {
	Name   Ident
	AsOf   Expr
	AsOfAt Pos
	Alias  Ident // zero when absent
}

// Pos returns the position of the table name.
func (t *TableRef) Pos() Pos { return t.Name.At }

// SubqueryRef reads the result of a parenthesised query.
type SubqueryRef struct {
	At    Pos // the opening parenthesis
	Query *Query
	Alias Ident // zero when absent
}

// Pos returns the position of the opening parenthesis.
func (s *SubqueryRef) Pos() Pos { return s.At }

// WindowKind names a window table function.
type WindowKind uint8

// The window table functions. The zero WindowKind is invalid.
const (
	Tumble WindowKind = iota + 1
	Hop
	Cumulate
	Session
)

func (k WindowKind) String() string {
	switch k {
	case Tumble:
		return "TUMBLE"
	case Hop:
		return "HOP"
	case Cumulate:
		return "CUMULATE"
	case Session:
		return "SESSION"
	}
	return "WindowKind(?)"
}

// WindowTVF is a window table function in FROM:
//
//	TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))
//	TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset]))
//	TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset]))
//	TABLE(SESSION(TABLE t [PARTITION BY k, ...], DESCRIPTOR(ts), gap))
//
// or the same with named arguments (DATA => TABLE t, TIMECOL =>
// DESCRIPTOR(ts), SIZE => ..., SLIDE => ..., STEP => ..., OFFSET => ...,
// GAP => ...) in any order. Its rows are the table's columns plus window_start,
// window_end and window_time.
type WindowTVF struct {
	At      Pos // the outer TABLE keyword, or the function name if unwrapped
	Kind    WindowKind
	KindAt  Pos // the function name
	Table   Ident
	TimeCol Ident
	Size    Expr
	Slide   Expr // HOP only, else nil
	Step    Expr // CUMULATE only, else nil
	Offset  Expr // nil when absent
	Gap     Expr // SESSION only, else nil
	// PartitionBy are SESSION's PARTITION BY columns (Flink 1.19+), nil
	// when not written.
	PartitionBy []Ident
	// PartitionParens records PARTITION BY (a, b), for Format.
	PartitionParens bool
	Alias           Ident
	// Named records that the arguments were written by name, so Format
	// can write them back the same way.
	Named bool
}

// Pos returns the position of the outer TABLE keyword.
func (w *WindowTVF) Pos() Pos { return w.At }

func (*TableRef) fromNode()    {}
func (*SubqueryRef) fromNode() {}
func (*WindowTVF) fromNode()   {}

// Interface guards.
var (
	_ FromItem = (*WindowTVF)(nil)
	_ Node     = (*Query)(nil)
	_ Node     = (*SelectItem)(nil)
)

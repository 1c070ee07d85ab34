package sql

import (
	"time"

	"github.com/etld/etld/pipeline/row"
)

// Node is any AST node. Pos is the position of the node's first token,
// except where a node's documentation says otherwise.
type Node interface {
	Pos() Pos
}

// Expr is an expression node: *Literal, *IntervalLit, *ColumnRef, *Star,
// *Unary, *Binary, *IsExpr, *Between, *InList, *Like, *Call, *Over, *Cast,
// *Case, *Trim, *Extract, *Index, *FieldAccess, *Exists or *InQuery.
type Expr interface {
	Node
	// Children returns the node's operands in a fixed order, absent ones
	// left out; the slice is the caller's. children.go says what is and
	// is not a child.
	Children() []Expr
	// MapChildren returns a copy of the node with each child c replaced
	// by f(c), f called in the order of Children; a leaf returns itself.
	// The node is not changed.
	MapChildren(f func(Expr) Expr) Expr
	exprNode()
}

// FromItem is what a FROM clause reads: *TableRef, *SubqueryRef or
// *WindowTVF.
type FromItem interface {
	Node
	fromNode()
}

// Ident is an identifier as written. Quoted identifiers (`order`) may be
// keywords and may hold any character; Name is the unquoted, unescaped text.
// The zero Ident (Name "") means "absent": an optional alias or qualifier
// that was not written. Quoted empty names are rejected by the parser.
type Ident struct {
	At     Pos
	Name   string
	Quoted bool
}

// Pos returns the identifier's position.
func (i Ident) Pos() Pos { return i.At }

// IsZero reports whether the identifier is absent.
func (i Ident) IsZero() bool { return i.Name == "" }

// LitKind says which kind of literal a Literal is.
type LitKind uint8

// The literal kinds. The zero LitKind is invalid.
const (
	LitNull      LitKind = iota + 1 // NULL
	LitBool                         // TRUE, FALSE
	LitUnknown                      // UNKNOWN: the BOOLEAN NULL
	LitInt                          // 42: INT if it fits, else BIGINT
	LitDecimal                      // 1.5: exact, DECIMAL(p, s)
	LitDouble                       // 1.5e3: approximate, DOUBLE
	LitString                       // 'it''s'
	LitBytes                        // X'0aff'
	LitDate                         // DATE '2024-01-01'
	LitTimestamp                    // TIMESTAMP '2024-01-01 10:00:00'
	LitTime                         // TIME '10:00:00'
)

// Literal is a constant. The parser has already checked and converted it:
// Value holds it (NULL for LitNull and LitUnknown) and Type its SQL type,
// NOT NULL for everything but NULL and UNKNOWN:
//
//	42                 INT NOT NULL (BIGINT when it does not fit an INT)
//	1.50               DECIMAL(3, 2) NOT NULL
//	1.5e3              DOUBLE NOT NULL
//	'abc'              STRING NOT NULL
//	X'0a'              BYTES NOT NULL
//	DATE '2024-01-01'  DATE NOT NULL
//	TIMESTAMP '...'    TIMESTAMP(p) NOT NULL, p = the fraction digits written
//	NULL               the NULL type; UNKNOWN is BOOLEAN
//
// A minus sign written directly before a number is part of the literal
// (Text "-5"), so that -2147483648 is an INT and -9223372036854775808 a
// BIGINT.
type Literal struct {
	At   Pos
	Kind LitKind
	// Text is the number as written (sign included), the content of a
	// string or DATE/TIMESTAMP literal with quotes removed and '' undone,
	// or the hex digits of a bytes literal.
	Text  string
	Value row.Value
	Type  row.Type
}

// IntervalUnit is a unit of an interval literal.
type IntervalUnit uint8

// The interval units, from largest to smallest. The zero IntervalUnit means
// "none" (IntervalLit.To of a single-unit interval).
const (
	Day IntervalUnit = iota + 1
	Hour
	Minute
	Second
	// Year and Month make year-month intervals; they sort after the
	// day-time units only because they were added later.
	Year
	Month
)

func (u IntervalUnit) String() string {
	switch u {
	case Day:
		return "DAY"
	case Hour:
		return "HOUR"
	case Minute:
		return "MINUTE"
	case Second:
		return "SECOND"
	case Year:
		return "YEAR"
	case Month:
		return "MONTH"
	}
	return ""
}

// IntervalLit is a day-time interval: INTERVAL '5' SECOND, INTERVAL '10'
// MINUTES, INTERVAL '1:30' MINUTE TO SECOND, INTERVAL '-2' HOUR. Value is
// its length (negative when the text is), at millisecond precision as in
// Flink. A year-month interval (INTERVAL '1' YEAR, INTERVAL '2' MONTH,
// INTERVAL '1-6' YEAR TO MONTH) has Months set and Value zero: a month
// has no fixed length.
type IntervalLit struct {
	At     Pos // the INTERVAL keyword
	Text   string
	Unit   IntervalUnit
	To     IntervalUnit // zero unless written UNIT TO UNIT
	Value  time.Duration
	Months int64
}

// YearMonth reports whether l is a year-month interval.
func (l *IntervalLit) YearMonth() bool { return l.Unit == Year || l.Unit == Month }

// ColumnRef names a column, optionally qualified by a table name or alias
// (t.col). Table is zero when unqualified.
type ColumnRef struct {
	Table  Ident
	Column Ident
}

// Pos returns the position of the qualifier, or of the column when
// unqualified.
func (c *ColumnRef) Pos() Pos {
	if !c.Table.IsZero() {
		return c.Table.At
	}
	return c.Column.At
}

// Star is `*` or `t.*` in a select list. Table is zero for a bare `*`.
type Star struct {
	At    Pos // the qualifier, or the * when unqualified
	Table Ident
}

// UnaryOp is a prefix operator.
type UnaryOp uint8

// The prefix operators. The zero UnaryOp is invalid.
const (
	OpNeg  UnaryOp = iota + 1 // -x
	OpPlus                    // +x
	OpNot                     // NOT x
)

func (op UnaryOp) String() string {
	switch op {
	case OpNeg:
		return "-"
	case OpPlus:
		return "+"
	case OpNot:
		return "NOT"
	}
	return "?"
}

// Unary is a prefix operator applied to X.
type Unary struct {
	At Pos // the operator
	Op UnaryOp
	X  Expr
}

// BinaryOp is an infix operator.
type BinaryOp uint8

// The infix operators. The zero BinaryOp is invalid. != is read as OpNe.
const (
	OpOr          BinaryOp = iota + 1 // OR
	OpAnd                             // AND
	OpEq                              // =
	OpNe                              // <> (also written !=)
	OpLt                              // <
	OpLe                              // <=
	OpGt                              // >
	OpGe                              // >=
	OpAdd                             // +
	OpSub                             // -
	OpMul                             // *
	OpDiv                             // /
	OpMod                             // %
	OpConcat                          // ||
	OpDistinct                        // IS DISTINCT FROM
	OpNotDistinct                     // IS NOT DISTINCT FROM (NULL equals NULL)
)

var binaryNames = [...]string{
	OpOr: "OR", OpAnd: "AND", OpEq: "=", OpNe: "<>", OpLt: "<", OpLe: "<=",
	OpGt: ">", OpGe: ">=", OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/",
	OpMod: "%", OpConcat: "||", OpDistinct: "IS DISTINCT FROM", OpNotDistinct: "IS NOT DISTINCT FROM",
}

// String returns the operator as SQL writes it.
func (op BinaryOp) String() string {
	if int(op) < len(binaryNames) && binaryNames[op] != "" {
		return binaryNames[op]
	}
	return "?"
}

// Binary is L Op R.
type Binary struct {
	OpAt Pos // the operator, for errors about the operation itself
	Op   BinaryOp
	L, R Expr
}

// Pos returns the position of the left operand (the first token).
func (b *Binary) Pos() Pos { return leftPos(b.L, b.OpAt) }

// leftPos is the position of a node's left operand, or of its operator
// when a hand-built node lacks the operand.
func leftPos(x Expr, op Pos) Pos {
	if x == nil {
		return op
	}
	return x.Pos()
}

// IsKind says what an IS test checks.
type IsKind uint8

// The IS tests. The zero IsKind is invalid.
const (
	IsNull       IsKind = iota + 1 // IS NULL
	IsTrue                         // IS TRUE
	IsFalse                        // IS FALSE
	IsUnknown                      // IS UNKNOWN
	IsJSONValue                    // IS JSON [VALUE]
	IsJSONScalar                   // IS JSON SCALAR
	IsJSONArray                    // IS JSON ARRAY
	IsJSONObject                   // IS JSON OBJECT
)

// JSON reports whether k is one of the IS JSON tests.
func (k IsKind) JSON() bool { return k >= IsJSONValue && k <= IsJSONObject }

func (k IsKind) String() string {
	switch k {
	case IsNull:
		return "NULL"
	case IsTrue:
		return "TRUE"
	case IsFalse:
		return "FALSE"
	case IsUnknown:
		return "UNKNOWN"
	case IsJSONValue:
		return "JSON VALUE"
	case IsJSONScalar:
		return "JSON SCALAR"
	case IsJSONArray:
		return "JSON ARRAY"
	case IsJSONObject:
		return "JSON OBJECT"
	}
	return "?"
}

// IsExpr is X IS [NOT] NULL|TRUE|FALSE|UNKNOWN|JSON [VALUE|SCALAR|ARRAY|OBJECT].
type IsExpr struct {
	OpAt Pos // the IS keyword
	X    Expr
	Not  bool
	What IsKind
}

// Pos returns the position of X.
func (e *IsExpr) Pos() Pos { return leftPos(e.X, e.OpAt) }

// Between is X [NOT] BETWEEN Lo AND Hi.
type Between struct {
	OpAt   Pos // the BETWEEN keyword (or NOT before it)
	X      Expr
	Not    bool
	Lo, Hi Expr
}

// Pos returns the position of X.
func (e *Between) Pos() Pos { return leftPos(e.X, e.OpAt) }

// InList is X [NOT] IN (List...). List has at least one element.
type InList struct {
	OpAt Pos // the IN keyword (or NOT before it)
	X    Expr
	Not  bool
	List []Expr
}

// Pos returns the position of X.
func (e *InList) Pos() Pos { return leftPos(e.X, e.OpAt) }

// Like is X [NOT] LIKE Pattern [ESCAPE Escape], or X [NOT] SIMILAR TO
// Pattern [ESCAPE Escape] when Similar is set.
type Like struct {
	OpAt    Pos // the LIKE (SIMILAR) keyword (or NOT before it)
	X       Expr
	Not     bool
	Similar bool
	Pattern Expr
	Escape  Expr // nil when absent
}

// Pos returns the position of X.
func (e *Like) Pos() Pos { return leftPos(e.X, e.OpAt) }

// Call is a function call. Name is upper-cased (function names are
// case-insensitive). COUNT(*) has Star set and no Args; COUNT(DISTINCT x)
// has Distinct set. The special forms read into plain calls:
//
//	SUBSTRING(s FROM i [FOR n])  SUBSTRING(s, i [, n])
//	POSITION(a IN b)             POSITION(a, b)
//	CURRENT_TIMESTAMP            CURRENT_TIMESTAMP() (also CURRENT_DATE,
//	                             CURRENT_TIME, LOCALTIME, LOCALTIMESTAMP)
//
// NOW() and PROCTIME() are ordinary calls. An aggregate call may carry
// FILTER (WHERE Filter): only rows for which Filter is TRUE reach it.
//
// TIMESTAMPADD(unit, n, t) and TIMESTAMPDIFF(unit, a, b) keep their unit
// keyword in Unit (upper-cased) and the other two arguments in Args;
// FLOOR, CEIL and CEILING(x TO unit) keep theirs in Unit and x in Args. The
// SQL/JSON functions keep their clauses in JSON (see JSONClauses).
type Call struct {
	At       Pos // the function name
	Name     string
	Args     []Expr
	Distinct bool
	Star     bool
	Filter   Expr // nil when absent
	FilterAt Pos  // the FILTER keyword, when Filter is set
	Unit     string
	UnitAt   Pos
	JSON     *JSONClauses
	// Nulls is ARRAY_AGG's IGNORE or RESPECT (NULLS), "" when not written.
	Nulls string
}

// JSONBehavior is what a SQL/JSON function does ON EMPTY or ON ERROR:
// Kind is "" when the clause is not written, else NULL, ERROR, DEFAULT
// (the value is Args[Arg]), TRUE, FALSE, UNKNOWN, EMPTY ARRAY or EMPTY
// OBJECT.
type JSONBehavior struct {
	Kind string
	At   Pos
	Arg  int
}

// JSONClauses are the clauses after the arguments of JSON_VALUE,
// JSON_QUERY, JSON_EXISTS, JSON_OBJECT and JSON_ARRAY:
//
//	JSON_VALUE(j, path [RETURNING type] [{NULL | ERROR | DEFAULT x} ON EMPTY]
//	           [{NULL | ERROR | DEFAULT x} ON ERROR])
//	JSON_QUERY(j, path [{WITHOUT | WITH [CONDITIONAL | UNCONDITIONAL]} [ARRAY] WRAPPER]
//	           [{NULL | ERROR | EMPTY ARRAY | EMPTY OBJECT} ON EMPTY] [... ON ERROR])
//	JSON_EXISTS(j, path [{TRUE | FALSE | UNKNOWN | ERROR} ON ERROR])
//	JSON_OBJECT([KEY] k VALUE v, ... [{NULL | ABSENT} ON NULL])  Args: k1, v1, k2, v2...
//	JSON_ARRAY(v, ... [{NULL | ABSENT} ON NULL])
//
// DEFAULT values are appended to Args (after the path), so that code
// walking the arguments sees them.
type JSONClauses struct {
	Returning     row.Type
	ReturningText string // "" when there is no RETURNING clause
	ReturningAt   Pos
	// Wrapper is "", WITHOUT, WITH CONDITIONAL or WITH UNCONDITIONAL.
	Wrapper          string
	OnEmpty, OnError JSONBehavior
	// OnNull is "", NULL or ABSENT.
	OnNull string
	// Keyed is set for JSON_OBJECT: Args alternate keys and values.
	Keyed bool
}

// Cast is CAST(X AS Type) or, with Try, TRY_CAST(X AS Type). Type went
// through row.ParseType; TypeText is the type as written, TypeAt its
// position.
type Cast struct {
	At       Pos // the CAST or TRY_CAST keyword
	X        Expr
	Type     row.Type
	TypeText string
	TypeAt   Pos
	Try      bool
}

// When is one WHEN ... THEN ... arm of a CASE.
type When struct {
	At     Pos // the WHEN keyword
	Cond   Expr
	Result Expr
}

// Case is CASE [Operand] WHEN ... THEN ... [ELSE Else] END. With an
// Operand, each When.Cond is a value compared to it; without, a condition.
type Case struct {
	At      Pos  // the CASE keyword
	Operand Expr // nil for a searched CASE
	Whens   []*When
	Else    Expr // nil when absent
}

// TrimMode says which end TRIM strips.
type TrimMode uint8

// The TRIM modes; BOTH is the default when none is written.
const (
	TrimBoth TrimMode = iota
	TrimLeading
	TrimTrailing
)

func (m TrimMode) String() string {
	switch m {
	case TrimLeading:
		return "LEADING"
	case TrimTrailing:
		return "TRAILING"
	}
	return "BOTH"
}

// Trim is TRIM([BOTH|LEADING|TRAILING] [Chars] FROM X), or TRIM(X). Chars is
// nil when not written (a space).
type Trim struct {
	At    Pos // the TRIM keyword
	Mode  TrimMode
	Chars Expr
	X     Expr
}

// Extract is EXTRACT(Unit FROM X). Unit is upper-cased: one of YEAR,
// QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND,
// MICROSECOND, NANOSECOND, DOW, DOY, ISODOW, ISOYEAR, EPOCH, DECADE,
// CENTURY, MILLENNIUM.
type Extract struct {
	At     Pos // the EXTRACT keyword
	Unit   string
	UnitAt Pos
	X      Expr
}

func (e *Literal) Pos() Pos     { return e.At }
func (e *IntervalLit) Pos() Pos { return e.At }
func (e *Star) Pos() Pos        { return e.At }
func (e *Unary) Pos() Pos       { return e.At }
func (e *Call) Pos() Pos        { return e.At }
func (e *Cast) Pos() Pos        { return e.At }
func (e *Case) Pos() Pos        { return e.At }
func (e *Trim) Pos() Pos        { return e.At }
func (e *Extract) Pos() Pos     { return e.At }
func (w *When) Pos() Pos        { return w.At }

func (*Literal) exprNode()     {}
func (*IntervalLit) exprNode() {}
func (*ColumnRef) exprNode()   {}
func (*Star) exprNode()        {}
func (*Unary) exprNode()       {}
func (*Binary) exprNode()      {}
func (*IsExpr) exprNode()      {}
func (*Between) exprNode()     {}
func (*InList) exprNode()      {}
func (*Like) exprNode()        {}
func (*Call) exprNode()        {}
func (*Cast) exprNode()        {}
func (*Case) exprNode()        {}
func (*Trim) exprNode()        {}
func (*Extract) exprNode()     {}

// Interface guards.
var _ Expr = (*Literal)(nil)

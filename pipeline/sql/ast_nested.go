package sql

// The composite-type expressions: constructors, element and field access,
// and UNNEST in FROM.
//
// The constructors ARRAY[a, b], MAP[k1, v1, k2, v2] and ROW(a, b) are
// read into plain calls named ARRAY, MAP and ROW (Call), so that every
// walk over calls sees their arguments.

// Index is X[Index]: an ARRAY's element (1-based) or a MAP's value.
type Index struct {
	X     Expr
	Open  Pos // the [
	Index Expr
}

// Pos returns the position of X.
func (e *Index) Pos() Pos { return leftPos(e.X, e.Open) }

// FieldAccess is X.Field, a ROW's field. The parser reads a.b as a
// ColumnRef (table a, column b): the planner alone knows whether a is a
// table or a ROW column. Three parts and more (t.r.f, r.f.g) and a field
// of any other expression ((x).f, f(x).g) are FieldAccess nodes.
type FieldAccess struct {
	X     Expr
	Dot   Pos
	Field Ident
}

// Pos returns the position of X.
func (e *FieldAccess) Pos() Pos { return leftPos(e.X, e.Dot) }

// Unnest is `Input CROSS JOIN UNNEST(X) [WITH ORDINALITY] [AS] alias
// [(col, ...)]` (also `Input, UNNEST(...)`): each row of Input joined
// with every element of the ARRAY or entry of the MAP X, a lateral
// correlate per row. Left is `Input LEFT JOIN UNNEST(...) ... ON TRUE`:
// a row without elements is kept, its element columns NULL.
type Unnest struct {
	At         Pos // the UNNEST keyword
	Input      FromItem
	X          Expr
	Left       bool
	Ordinality bool
	Alias      Ident
	Columns    []Ident // the column aliases, nil when not written
}

// Pos returns the position of the UNNEST keyword.
func (u *Unnest) Pos() Pos { return u.At }

func (*Index) exprNode()       {}
func (*FieldAccess) exprNode() {}
func (*Unnest) fromNode()      {}

package sql

// JoinType is the kind of a Join as written.
type JoinType uint8

const (
	InnerJoin JoinType = iota
	LeftJoin
	RightJoin
	FullJoin
	// CommaJoin is `FROM a, b` (and CROSS JOIN): a cross join, which a
	// WHERE equality may turn into an inner join.
	CommaJoin
)

// String is the join as SQL writes it.
func (t JoinType) String() string {
	return [...]string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", ","}[t]
}

// Join is `Left [INNER|LEFT|RIGHT|FULL [OUTER]] JOIN Right ON On`, or
// `Left, Right` (CommaJoin, On nil). Chains nest to the left:
// a JOIN b ON .. JOIN c ON .. is Join{Left: Join{a, b}, Right: c}.
// `JOIN Right USING (a, b)` has Using and no On; `NATURAL ... JOIN Right`
// has Natural, neither Using nor On (the planner finds the columns).
type Join struct {
	At      Pos // the JOIN keyword (the comma of a CommaJoin; NATURAL)
	Type    JoinType
	Left    FromItem
	Right   FromItem
	On      Expr
	Using   []Ident
	Natural bool
}

// Pos returns the position of the left input.
func (j *Join) Pos() Pos { return j.Left.Pos() }

func (*Join) fromNode() {}

// Exists is `EXISTS (query)`; Not for NOT EXISTS.
type Exists struct {
	At    Pos
	Not   bool
	Query *Query
}

// InQuery is `X [NOT] IN (query)`.
type InQuery struct {
	X     Expr
	Not   bool
	At    Pos // the IN keyword
	Query *Query
}

func (e *Exists) Pos() Pos  { return e.At }
func (e *InQuery) Pos() Pos { return e.X.Pos() }
func (*Exists) exprNode()   {}
func (*InQuery) exprNode()  {}

var (
	_ FromItem = (*Join)(nil)
	_ Expr     = (*Exists)(nil)
	_ Expr     = (*InQuery)(nil)
)

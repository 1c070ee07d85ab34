package sql

// ScalarQuery is a parenthesised query in an expression, `(SELECT
// MAX(x) FROM t)`: its one column's value in its one row (NULL when it
// has none). The planner joins it with the table of the expression.
type ScalarQuery struct {
	At    Pos // the opening parenthesis
	Query *Query
}

func (e *ScalarQuery) Pos() Pos                         { return e.At }
func (*ScalarQuery) exprNode()                          {}
func (e *ScalarQuery) Children() []Expr                 { return nil }
func (e *ScalarQuery) MapChildren(func(Expr) Expr) Expr { return e }

var _ Expr = (*ScalarQuery)(nil)

package plan

import (
	"github.com/etld/etld/pipeline/sql"
)

// rewrite returns e with every sub-expression for which f returns a
// replacement replaced, top-down: a replaced node is not descended into.
// Nodes that do not change are shared, not copied.
func rewrite(e sql.Expr, f func(sql.Expr) (sql.Expr, bool)) sql.Expr {
	if e == nil {
		return nil
	}
	if r, ok := f(e); ok {
		return r
	}
	rw := func(x sql.Expr) sql.Expr { return rewrite(x, f) }
	list := func(xs []sql.Expr) []sql.Expr {
		out := make([]sql.Expr, len(xs))
		for i, x := range xs {
			out[i] = rw(x)
		}
		return out
	}
	switch n := e.(type) {
	case *sql.Unary:
		c := *n
		c.X = rw(n.X)
		return &c
	case *sql.Binary:
		c := *n
		c.L, c.R = rw(n.L), rw(n.R)
		return &c
	case *sql.IsExpr:
		c := *n
		c.X = rw(n.X)
		return &c
	case *sql.Between:
		c := *n
		c.X, c.Lo, c.Hi = rw(n.X), rw(n.Lo), rw(n.Hi)
		return &c
	case *sql.InList:
		c := *n
		c.X, c.List = rw(n.X), list(n.List)
		return &c
	case *sql.Like:
		c := *n
		c.X, c.Pattern, c.Escape = rw(n.X), rw(n.Pattern), rw(n.Escape)
		return &c
	case *sql.Call:
		c := *n
		c.Args = list(n.Args)
		c.Filter = rw(n.Filter)
		return &c
	case *sql.Over:
		c := *n
		// The call itself is not offered to f (an aggregate call under
		// OVER is no group aggregate), only its arguments.
		call := *n.Call
		call.Args, call.Filter = list(n.Call.Args), rw(n.Call.Filter)
		c.Call = &call
		w := *n.Window
		w.PartitionBy = list(n.Window.PartitionBy)
		w.OrderBy = make([]*sql.OrderItem, len(n.Window.OrderBy))
		for i, it := range n.Window.OrderBy {
			o := *it
			o.X = rw(it.X)
			w.OrderBy[i] = &o
		}
		c.Window = &w
		return &c
	case *sql.Cast:
		c := *n
		c.X = rw(n.X)
		return &c
	case *sql.Case:
		c := *n
		c.Operand, c.Else = rw(n.Operand), rw(n.Else)
		c.Whens = make([]*sql.When, len(n.Whens))
		for i, w := range n.Whens {
			c.Whens[i] = &sql.When{At: w.At, Cond: rw(w.Cond), Result: rw(w.Result)}
		}
		return &c
	case *sql.Trim:
		c := *n
		c.Chars, c.X = rw(n.Chars), rw(n.X)
		return &c
	case *sql.Extract:
		c := *n
		c.X = rw(n.X)
		return &c
	}
	return e
}

// walk calls f on e and every sub-expression, top-down, until f returns
// false for a node (its children are then skipped).
func walk(e sql.Expr, f func(sql.Expr) bool) {
	rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
		if !f(x) {
			return x, true
		}
		return nil, false
	})
}

package plan

import (
	"github.com/etld/etld/pipeline/sql"
)

// rewrite returns e with every sub-expression for which f returns a
// replacement replaced, top-down: a replaced node is not descended into.
// Every node above a replacement is a copy; leaves that do not change are
// shared. It reaches what sql.Expr's Children call children: not the
// query of a subquery, nor the call under OVER itself (an aggregate call
// under OVER is no group aggregate), only its arguments.
func rewrite(e sql.Expr, f func(sql.Expr) (sql.Expr, bool)) sql.Expr {
	if e == nil {
		return nil
	}
	if r, ok := f(e); ok {
		return r
	}
	return e.MapChildren(func(c sql.Expr) sql.Expr { return rewrite(c, f) })
}

// walk calls f on e and every sub-expression, top-down, until f returns
// false for a node (its children are then skipped).
func walk(e sql.Expr, f func(sql.Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	for _, c := range e.Children() {
		walk(c, f)
	}
}

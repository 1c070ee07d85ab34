package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/matchop"
	"github.com/etld/etld/pipeline/sql"
)

// matchExpr rewrites one DEFINE condition (of variable cur) or measure
// (cur -1) into an expression over the current row and its navigations.
type matchExpr struct {
	mp     *matchPlan
	cur    int
	navs   []matchop.Nav
	fields []row.Field
	bad    error
}

// compile compiles a DEFINE condition of variable cur, or a measure (cur
// -1), for the Match operator.
func (mp *matchPlan) compile(e sql.Expr, cur int) (*matchop.Expr, *expr.Compiled, error) {
	x := &matchExpr{mp: mp, cur: cur}
	out := x.rewrite(e)
	if x.bad != nil {
		return nil, nil, x.bad
	}
	schema := row.NewSchema(append(append([]row.Field(nil), mp.in.Schema.Fields...), x.fields...)...)
	c, err := compileExpr(mp.q.zone(), out, schema, "")
	if err != nil {
		return nil, nil, err
	}
	return &matchop.Expr{Eval: c.Eval, Base: mp.in.Schema.Len(), Navs: x.navs, Text: sql.Format(e)}, c, nil
}

func (x *matchExpr) fail(err error) {
	if x.bad == nil {
		x.bad = err
	}
}

func (x *matchExpr) rewrite(e sql.Expr) sql.Expr {
	return rewrite(e, func(n sql.Expr) (sql.Expr, bool) {
		switch n := n.(type) {
		case *sql.ColumnRef:
			if n.Table.IsZero() {
				return nil, false
			}
			v, ok := x.variable(n.Table)
			if !ok {
				return n, true
			}
			unq := &sql.ColumnRef{Column: n.Column}
			if v == x.cur {
				return unq, true
			}
			return x.nav(matchop.Nav{Func: matchop.NavLast, Var: v}, unq, n.Pos()), true
		case *sql.Call:
			return x.call(n)
		}
		return nil, false
	})
}

// variable resolves a qualifier to a pattern variable.
func (x *matchExpr) variable(id sql.Ident) (int, bool) {
	v := x.mp.varIndex(id.Name)
	if v < 0 {
		x.fail(errAt(id.At, "%s is not a variable of the pattern (%s)", id.Name, strings.Join(x.mp.vars, ", ")))
	}
	return v, v >= 0
}

func (x *matchExpr) call(c *sql.Call) (sql.Expr, bool) {
	name := strings.ToUpper(c.Name)
	switch {
	case name == "FIRST" || name == "LAST":
		if len(c.Args) < 1 || len(c.Args) > 2 {
			x.fail(errAt(c.At, "%s takes a value and an optional offset, got %d arguments", name, len(c.Args)))
			return c, true
		}
		off, ok := x.offset(c, 0)
		if !ok {
			return c, true
		}
		v, arg := x.navArg(c.Args[0])
		f := matchop.NavLast
		if name == "FIRST" {
			f = matchop.NavFirst
		}
		return x.nav(matchop.Nav{Func: f, Var: v, Offset: off}, arg, c.At), true
	case name == "PREV" || name == "NEXT":
		if len(c.Args) < 1 || len(c.Args) > 2 {
			x.fail(errAt(c.At, "%s takes a value and an optional offset, got %d arguments", name, len(c.Args)))
			return c, true
		}
		if off, ok := x.offset(c, 1); ok && off != 0 {
			x.fail(errAt(c.At, "Flink does not support physical offsets within partition: %s(x, %d) reads a row the match may not hold; use LAST(v.x, n) or FIRST(v.x, n)", name, off))
		}
		return x.rewrite(c.Args[0]), true
	case name == "MATCH_ROWTIME":
		// MATCH_ROWTIME() or MATCH_ROWTIME(rowtime): the time of the
		// match's last row.
		if len(c.Args) > 1 || len(c.Args) == 1 && !x.isTimeAttr(c.Args[0]) {
			x.fail(errAt(c.At, "MATCH_ROWTIME takes no argument or the input's event-time attribute %s", x.mp.in.Schema.Fields[x.mp.in.TimeAttr].Name))
			return c, true
		}
		t := x.mp.in.Schema.Fields[x.mp.in.TimeAttr]
		return x.navCol(matchop.Nav{Func: matchop.NavLast, Var: matchop.AnyVar, Col: x.mp.in.TimeAttr}, t.Type, c.At), true
	case name == "MATCH_PROCTIME" || name == "CLASSIFIER" || name == "MATCH_NUMBER" || name == "RUNNING" || name == "FINAL":
		x.fail(errAt(c.At, "%s is not supported in MATCH_RECOGNIZE", name))
		return c, true
	case expr.IsAggregate(name):
		return x.aggregate(c), true
	}
	return nil, false
}

// isTimeAttr reports whether e names the input's event-time attribute,
// unqualified or qualified by a pattern variable.
func (x *matchExpr) isTimeAttr(e sql.Expr) bool {
	c, ok := e.(*sql.ColumnRef)
	return ok && (c.Table.IsZero() || x.mp.varIndex(c.Table.Name) >= 0) &&
		strings.EqualFold(c.Column.Name, x.mp.in.Schema.Fields[x.mp.in.TimeAttr].Name)
}

// offset reads a FIRST/LAST/PREV offset: a non-negative integer literal,
// def when absent.
func (x *matchExpr) offset(c *sql.Call, def int) (int, bool) {
	if len(c.Args) < 2 {
		return def, true
	}
	l, ok := c.Args[1].(*sql.Literal)
	if ok && l.Kind == sql.LitInt {
		var n int
		if _, err := fmt.Sscan(l.Text, &n); err == nil && n >= 0 {
			return n, true
		}
	}
	x.fail(errAt(c.Args[1].Pos(), "the offset of %s must be a non-negative integer literal", strings.ToUpper(c.Name)))
	return 0, false
}

// navArg finds the one variable an argument reads (AnyVar for
// unqualified columns) and returns the argument without qualifiers.
func (x *matchExpr) navArg(e sql.Expr) (int, sql.Expr) {
	v, seen := matchop.AnyVar, false
	out := rewrite(e, func(n sql.Expr) (sql.Expr, bool) {
		c, ok := n.(*sql.ColumnRef)
		if !ok {
			return nil, false
		}
		w := matchop.AnyVar
		if !c.Table.IsZero() {
			if w, ok = x.variable(c.Table); !ok {
				return n, true
			}
		}
		if seen && w != v {
			x.fail(errAt(c.Pos(), "an expression in MATCH_RECOGNIZE's navigation or aggregate must reference one pattern variable only: %s", sql.Format(e)))
		}
		v, seen = w, true
		return &sql.ColumnRef{Column: c.Column}, true
	})
	return v, out
}

// nav adds a navigation reading arg (an expression over the input row)
// and returns the reference to its value.
func (x *matchExpr) nav(n matchop.Nav, arg sql.Expr, at sql.Pos) sql.Expr {
	c, err := compileExpr(x.mp.q.zone(), arg, x.mp.in.Schema, "")
	if err != nil {
		x.fail(err)
		return arg
	}
	n.Col = x.mp.argColumn(c, sql.Format(arg))
	return x.navCol(n, c.Type, at)
}

func (x *matchExpr) navCol(n matchop.Nav, t row.Type, at sql.Pos) sql.Expr {
	x.navs = append(x.navs, n)
	name := fmt.Sprintf("$nav%d", len(x.navs)-1)
	if n.Func != matchop.NavAgg || (n.Agg.Func != aggop.Count && n.Agg.Func != aggop.CountStar) {
		t.NotNull = false
	}
	x.fields = append(x.fields, row.Field{Name: name, Type: t})
	return &sql.ColumnRef{Column: sql.Ident{At: at, Name: name, Quoted: true}}
}

// aggregate plans an aggregate over the rows of one variable.
func (x *matchExpr) aggregate(c *sql.Call) sql.Expr {
	if c.Distinct {
		x.fail(errAt(c.At, "DISTINCT aggregations are not supported in MATCH_RECOGNIZE (as in Flink)"))
		return c
	}
	uc := *c
	v := matchop.AnyVar
	if len(c.Args) > 0 {
		uc.Args = append([]sql.Expr(nil), c.Args...)
		v, uc.Args[0] = x.navArg(c.Args[0])
	}
	call, err := x.mp.q.aggCall(&uc, x.mp.in.Schema, "", x.mp.argColumn)
	if err != nil {
		x.fail(err)
		return c
	}
	if call.HasFilter {
		x.fail(errAt(c.At, "FILTER on an aggregate in MATCH_RECOGNIZE is not supported"))
		return c
	}
	return x.navCol(matchop.Nav{Func: matchop.NavAgg, Var: v, Col: max(call.Arg, 0), Agg: call}, call.ResultType(), c.At)
}

// argColumn is the input column holding c: its own column, or a computed
// one the Calc before the Match appends.
func (mp *matchPlan) argColumn(c *expr.Compiled, text string) int {
	if c.IsColumn {
		return c.Column
	}
	for i, t := range mp.extraTexts {
		if t == text {
			return mp.in.Schema.Len() + i
		}
	}
	mp.extra = append(mp.extra, c)
	mp.extraTexts = append(mp.extraTexts, text)
	return mp.in.Schema.Len() + len(mp.extra) - 1
}

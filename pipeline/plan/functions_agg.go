package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/sql"
	"github.com/etld/etld/pipeline/udf"
)

// User aggregate functions are planned as the built-in aggregates are,
// in GROUP BY and window aggregates: each call is renamed with
// expr.UserAggregatePrefix when its SELECT is planned, so that every
// check for an aggregate call takes it for one, and aggCall makes it an
// aggop.AggCall whose argument is the ROW of the call's arguments.

// markUserAggregates renames the user aggregate calls of sel.
func (q *queryBuilder) markUserAggregates(sel *sql.Select) *sql.Select {
	has := false
	for _, f := range q.b.plan.funcs.Functions() {
		has = has || f.Kind == udf.Aggregate
	}
	if !has {
		return sel
	}
	marked := false
	var mark func(e sql.Expr) sql.Expr
	mark = func(e sql.Expr) sql.Expr {
		return rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
			c, ok := x.(*sql.Call)
			if !ok {
				return nil, false
			}
			fs := q.userFunction(c)
			if len(fs) == 0 || fs[0].Kind != udf.Aggregate {
				return nil, false
			}
			marked = true
			cp := *c
			cp.Name = expr.UserAggregatePrefix + fs[0].Name
			cp.Args = make([]sql.Expr, len(c.Args))
			for i, a := range c.Args {
				cp.Args[i] = mark(a)
			}
			if c.Filter != nil {
				cp.Filter = mark(c.Filter)
			}
			return &cp, true
		})
	}
	out := *sel
	out.Where, out.Having = mark(sel.Where), mark(sel.Having)
	out.GroupBy = make([]sql.Expr, len(sel.GroupBy))
	for i, g := range sel.GroupBy {
		out.GroupBy[i] = mark(g)
	}
	out.Items = make([]*sql.SelectItem, len(sel.Items))
	for i, it := range sel.Items {
		marked = false
		out.Items[i] = &sql.SelectItem{Expr: mark(it.Expr), Alias: it.Alias}
		if it.Alias.IsZero() && marked {
			// Named as Flink names an aggregate call, not by the marked name.
			out.Items[i].Alias = sql.Ident{Name: fmt.Sprintf("EXPR$%d", i)}
		}
	}
	return &out
}

// aggText is an aggregate call as explain shows it: a user aggregate by
// its declared name, not the name markUserAggregates gave it.
func aggText(c *sql.Call) string {
	if name, ok := strings.CutPrefix(c.Name, expr.UserAggregatePrefix); ok {
		cp := *c
		cp.Name = name
		return sql.Format(&cp)
	}
	return sql.Format(c)
}

// userAggCall makes the call c of the user aggregate name: its arguments
// cast to the declaration's parameter types and passed as one ROW.
func (q *queryBuilder) userAggCall(c *sql.Call, name string, schema row.Schema, table string, addArg func(*expr.Compiled, string) int) (aggop.AggCall, error) {
	if c.Star {
		return aggop.AggCall{}, errAt(c.At, "%s(*) is not allowed; only COUNT(*)", name)
	}
	types := make([]row.Type, len(c.Args))
	for i, a := range c.Args {
		comp, err := compileExpr(q.zone(), a, schema, table)
		if err != nil {
			return aggop.AggCall{}, err
		}
		types[i] = comp.Type
	}
	fn, err := q.b.plan.funcs.Resolve(name, types)
	if err != nil {
		return aggop.AggCall{}, errAt(c.At, "%v", err)
	}
	args := make([]sql.Expr, len(c.Args))
	for i, a := range c.Args {
		args[i] = a
		if types[i].Nullable() != fn.Params[i] {
			args[i] = &sql.Cast{At: a.Pos(), X: a, Type: fn.Params[i], TypeText: fn.Params[i].String()}
		}
	}
	packed := &sql.Call{At: c.At, Name: "ROW", Args: args}
	comp, err := compileExpr(q.zone(), packed, schema, table)
	if err != nil {
		return aggop.AggCall{}, err
	}
	call := aggop.AggCall{Func: aggop.UserDefined, ArgType: comp.Type, Distinct: c.Distinct,
		User: &userAgg{fn: fn}, UserName: fn.Name, UserType: fn.Returns}
	if err := call.Validate(); err != nil {
		return aggop.AggCall{}, errAt(c.At, "%v", err)
	}
	texts := make([]string, len(c.Args))
	for i, a := range c.Args {
		texts[i] = sql.Format(a)
	}
	call.Arg = addArg(comp, "ROW("+strings.Join(texts, ", ")+")")
	return call, nil
}

// freshUserAggs returns aggs with a user aggregate of its own for each
// user call: an operator's function instance is its own.
func freshUserAggs(aggs []aggop.AggCall) []aggop.AggCall {
	var out []aggop.AggCall
	for i, c := range aggs {
		if u, ok := c.User.(*userAgg); ok {
			if out == nil {
				out = slices.Clone(aggs)
			}
			out[i].User = &userAgg{fn: u.fn}
		}
	}
	if out == nil {
		return aggs
	}
	return out
}

// userAgg is a user aggregate function as an aggop.Store calls it, for
// one operator. Its instance starts at the first call and lives until
// the plan's functions are closed at the end of the run.
type userAgg struct {
	fn   *udf.Function
	inst udf.Instance
}

func (u *userAgg) instance() (udf.Instance, error) {
	if u.inst == nil {
		inst, err := u.fn.NewInstance(context.Background())
		if err != nil {
			return nil, err
		}
		u.inst = inst
	}
	return u.inst, nil
}

// Update implements aggop.UserAgg: the ROW of each change's arguments
// unpacked into columns; a change with a NULL argument is left out unless
// the function is null-tolerant (it then changes nothing, as a NULL
// changes no built-in aggregate but COUNT(*)).
func (u *userAgg) Update(accs [][]byte, group []int, args []row.Value, add []bool) ([][]byte, []row.Value, error) {
	inst, err := u.instance()
	if err != nil {
		return nil, nil, err
	}
	cols := make([][]row.Value, len(u.fn.Params))
	var g []int
	var a []bool
	for i, packed := range args {
		null := false
		for k, v := range packed.Items() {
			if k < len(cols) {
				cols[k] = append(cols[k], v)
				null = null || v.IsNull()
			}
		}
		if null && !u.fn.NullTolerant {
			for k := range cols {
				cols[k] = cols[k][:len(g)]
			}
			continue
		}
		g, a = append(g, group[i]), append(a, add[i])
	}
	out, res, err := inst.AggUpdate(accs, g, cols, a)
	if err != nil {
		return nil, nil, fmt.Errorf("function %s: %w", u.fn.Name, err)
	}
	return out, res, nil
}

// Merge implements aggop.UserAgg.
func (u *userAgg) Merge(accs, others [][]byte) ([][]byte, error) {
	inst, err := u.instance()
	if err != nil {
		return nil, err
	}
	out, err := inst.AggMerge(accs, others)
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", u.fn.Name, err)
	}
	return out, nil
}

// Result implements aggop.UserAgg.
func (u *userAgg) Result(accs [][]byte) ([]row.Value, error) {
	inst, err := u.instance()
	if err != nil {
		return nil, err
	}
	out, err := inst.AggResult(accs)
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", u.fn.Name, err)
	}
	return out, nil
}

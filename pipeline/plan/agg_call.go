package plan

import (
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/sql"
)

// aggCall checks one aggregate call and places its argument (and its
// FILTER condition) through addArg, which returns the column.
func (q *queryBuilder) aggCall(c *sql.Call, schema row.Schema, table string, addArg func(*expr.Compiled, string) int) (aggop.AggCall, error) {
	name := strings.ToUpper(c.Name)
	filter, err := aggFilter(c, schema, table)
	if err != nil {
		return aggop.AggCall{}, err
	}
	withFilter := func(call aggop.AggCall) aggop.AggCall {
		if filter != nil {
			call.HasFilter, call.Filter = true, addArg(filter, sql.Format(c.Filter))
		}
		return call
	}
	if user, ok := strings.CutPrefix(c.Name, expr.UserAggregatePrefix); ok {
		call, err := q.userAggCall(c, user, schema, table, addArg)
		if err != nil {
			return aggop.AggCall{}, err
		}
		return withFilter(call), nil
	}
	if c.Star {
		if name != "COUNT" {
			return aggop.AggCall{}, errAt(c.At, "%s(*) is not allowed; only COUNT(*)", name)
		}
		if filter != nil {
			// COUNT(*) FILTER (WHERE f) counts the rows whose f is TRUE:
			// COUNT over the filter column, which the filter already
			// restricts to TRUE.
			call := withFilter(aggop.AggCall{Func: aggop.Count, ArgType: filter.Type})
			call.Arg = call.Filter
			return call, nil
		}
		return aggop.AggCall{Func: aggop.CountStar, Arg: -1}, nil
	}
	nargs := 1
	if name == "LISTAGG" {
		nargs = 2
	}
	if len(c.Args) < 1 || len(c.Args) > nargs {
		if nargs == 2 {
			return aggop.AggCall{}, errAt(c.At, "LISTAGG takes one or two arguments (the value and a separator literal), got %d", len(c.Args))
		}
		return aggop.AggCall{}, errAt(c.At, "%s takes one argument, got %d", name, len(c.Args))
	}
	arg, err := compileExpr(c.Args[0], schema, table)
	if err != nil {
		return aggop.AggCall{}, err
	}
	call := aggop.AggCall{ArgType: arg.Type, Distinct: c.Distinct}
	if err := setAggFunc(&call, name, c, arg.Type); err != nil {
		return aggop.AggCall{}, err
	}
	if err := call.Validate(); err != nil {
		return aggop.AggCall{}, errAt(c.Args[0].Pos(), "%v", err)
	}
	call.Arg = addArg(arg, sql.Format(c.Args[0]))
	return withFilter(call), nil
}

// aggFilter compiles an aggregate call's FILTER (WHERE ...), nil for none.
func aggFilter(c *sql.Call, schema row.Schema, table string) (*expr.Compiled, error) {
	if c.Filter == nil {
		return nil, nil
	}
	if containsAgg(c.Filter) {
		return nil, errAt(c.Filter.Pos(), "aggregate functions cannot be nested in FILTER (WHERE ...)")
	}
	f, err := compileExpr(c.Filter, schema, table)
	if err != nil {
		return nil, err
	}
	if f.Type.ID != row.Boolean {
		return nil, errAt(c.Filter.Pos(), "FILTER (WHERE ...) needs a BOOLEAN condition, got %s", f.Type)
	}
	return f, nil
}

// setAggFunc sets the function of call, the aggregate name with one
// argument (and LISTAGG's separator) of type argType, refusing an
// argument the function does not take.
func setAggFunc(call *aggop.AggCall, name string, c *sql.Call, argType row.Type) error {
	switch name {
	case "COUNT":
		call.Func = aggop.Count
	case "SUM", "AVG":
		if !argType.ID.Numeric() {
			return errAt(c.Args[0].Pos(), "%s needs a numeric argument, got %s", name, argType)
		}
		call.Func = aggop.Sum
		if name == "AVG" {
			call.Func = aggop.Avg
		}
	case "MIN", "MAX":
		if argType.ID.Nested() {
			return errAt(c.Args[0].Pos(), "%s of %s: composite values have no order (Flink refuses it too)", name, argType)
		}
		// MIN(DISTINCT x) is MIN(x): duplicates never change an extreme.
		call.Func, call.Distinct = aggop.Min, false
		if name == "MAX" {
			call.Func = aggop.Max
		}
	case "STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP":
		switch {
		case argType.ID == row.Decimal:
			return errAt(c.Args[0].Pos(), "%s over DECIMAL is not supported yet; CAST the argument AS DOUBLE", name)
		case !argType.ID.Numeric():
			return errAt(c.Args[0].Pos(), "%s needs a numeric argument, got %s", name, argType)
		}
		call.Func = map[string]aggop.AggFunc{"STDDEV_POP": aggop.StddevPop, "STDDEV_SAMP": aggop.StddevSamp,
			"VAR_POP": aggop.VarPop, "VAR_SAMP": aggop.VarSamp}[name]
	case "FIRST_VALUE", "LAST_VALUE":
		if c.Distinct {
			return errAt(c.At, "%s(DISTINCT ...) is not allowed", name)
		}
		call.Func = aggop.FirstValue
		if name == "LAST_VALUE" {
			call.Func = aggop.LastValue
		}
	case "COLLECT":
		call.Func = aggop.Collect
	case "LISTAGG":
		if argType.ID != row.String {
			return errAt(c.Args[0].Pos(), "LISTAGG needs a STRING argument, got %s; CAST it AS STRING", argType)
		}
		call.Func, call.Sep = aggop.ListAgg, ","
		if len(c.Args) == 2 {
			lit, ok := c.Args[1].(*sql.Literal)
			if !ok || lit.Kind != sql.LitString {
				return errAt(c.Args[1].Pos(), "LISTAGG's separator must be a string literal, as in LISTAGG(name, '; ')")
			}
			call.Sep = lit.Value.Str()
		}
	default:
		return errAt(c.At, "aggregate function %s is not supported", name)
	}
	return nil
}

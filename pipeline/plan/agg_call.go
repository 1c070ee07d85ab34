package plan

import (
	"strconv"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/windowop"
	"github.com/etld/etld/pipeline/sql"
)

// aggCall checks one aggregate call and places its argument (and its
// FILTER condition) through addArg, which returns the column.
func (q *queryBuilder) aggCall(c *sql.Call, schema row.Schema, table string, addArg func(*expr.Compiled, string) int) (aggop.AggCall, error) {
	name := strings.ToUpper(c.Name)
	filter, err := aggFilter(q.zone(), c, schema, table)
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
	if name == "JSON_ARRAYAGG" || name == "JSON_OBJECTAGG" {
		if c.Filter != nil {
			return aggop.AggCall{}, errAt(c.FilterAt, "FILTER after %s is not allowed (Flink's parser refuses it); filter in WHERE or a subquery", name)
		}
		call, err := jsonAggCall(q.zone(), c, name, schema, table, addArg)
		if err != nil {
			return aggop.AggCall{}, err
		}
		return withFilter(call), nil
	}
	if name == "PERCENTILE" {
		call, err := percentileCall(q.zone(), c, schema, table, addArg)
		if err != nil {
			return aggop.AggCall{}, err
		}
		return withFilter(call), nil
	}
	if c.Nulls != "" && name != "ARRAY_AGG" {
		return aggop.AggCall{}, errAt(c.At, "%s NULLS belongs to ARRAY_AGG, not %s", c.Nulls, name)
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
	arg, err := compileExpr(q.zone(), c.Args[0], schema, table)
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
func aggFilter(zone *time.Location, c *sql.Call, schema row.Schema, table string) (*expr.Compiled, error) {
	if c.Filter == nil {
		return nil, nil
	}
	if containsAgg(c.Filter) {
		return nil, errAt(c.Filter.Pos(), "aggregate functions cannot be nested in FILTER (WHERE ...)")
	}
	f, err := compileExpr(zone, c.Filter, schema, table)
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
	case "STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP", "STDDEV", "VARIANCE":
		switch {
		case argType.ID == row.Decimal:
			return errAt(c.Args[0].Pos(), "%s over DECIMAL is not supported yet; CAST the argument AS DOUBLE", name)
		case !argType.ID.Numeric():
			return errAt(c.Args[0].Pos(), "%s needs a numeric argument, got %s", name, argType)
		}
		call.Func = map[string]aggop.AggFunc{"STDDEV_POP": aggop.StddevPop, "STDDEV_SAMP": aggop.StddevSamp,
			"VAR_POP": aggop.VarPop, "VAR_SAMP": aggop.VarSamp,
			// Calcite reduces STDDEV and VARIANCE to the sample forms.
			"STDDEV": aggop.StddevSamp, "VARIANCE": aggop.VarSamp}[name]
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
	case "ARRAY_AGG":
		// RESPECT NULLS is the default, as Flink's ArrayAggFunction.
		call.Func, call.KeepNulls = aggop.ArrayAgg, c.Nulls != "IGNORE"
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

// jsonAggCall plans JSON_ARRAYAGG(x [ON NULL]) and JSON_OBJECTAGG(KEY k
// VALUE v [ON NULL]) as Flink does (WrapJsonAggFunctionArgumentsRule):
// the aggregate reads the values' JSON texts, JSON_STRING(x), which nests
// a JSON_OBJECT or JSON_ARRAY value as JSON. JSON_ARRAYAGG leaves NULLs
// out by default and reads 'null' for one under NULL ON NULL;
// JSON_OBJECTAGG writes them as null by default and reads ROW(k, k's
// JSON text, v's JSON text).
func jsonAggCall(zone *time.Location, c *sql.Call, name string, schema row.Schema, table string, addArg func(*expr.Compiled, string) int) (aggop.AggCall, error) {
	if c.Distinct {
		return aggop.AggCall{}, errAt(c.At, "%s(DISTINCT ...) is not allowed (Flink's parser refuses it too)", name)
	}
	text := func(x sql.Expr) sql.Expr { return &sql.Call{At: x.Pos(), Name: "JSON_STRING", Args: []sql.Expr{x}} }
	onNull := c.JSON.OnNull
	var arg sql.Expr
	call := aggop.AggCall{Func: aggop.JSONArrayAgg}
	if name == "JSON_ARRAYAGG" {
		if len(c.Args) != 1 {
			return aggop.AggCall{}, errAt(c.At, "JSON_ARRAYAGG takes one value, got %d", len(c.Args))
		}
		arg = text(c.Args[0])
		if onNull == "NULL" {
			arg = &sql.Call{At: c.Args[0].Pos(), Name: "COALESCE", Args: []sql.Expr{arg, &sql.Literal{At: c.Args[0].Pos(), Kind: sql.LitString, Text: "null", Value: row.StringValue("null"), Type: row.Type{ID: row.String, NotNull: true}}}}
		}
	} else {
		if len(c.Args) != 2 {
			return aggop.AggCall{}, errAt(c.At, "JSON_OBJECTAGG takes one KEY k VALUE v pair")
		}
		k, err := compileExpr(zone, c.Args[0], schema, table)
		if err != nil {
			return aggop.AggCall{}, err
		}
		if k.Type.ID != row.String {
			return aggop.AggCall{}, errAt(c.Args[0].Pos(), "JSON_OBJECTAGG's key must be a character string, got %s (Flink: JSON_OBJECTAGG(<CHARACTER>, <ANY>))", k.Type)
		}
		arg = &sql.Call{At: c.At, Name: "ROW", Args: []sql.Expr{c.Args[0], text(c.Args[0]), text(c.Args[1])}}
		call = aggop.AggCall{Func: aggop.JSONObjectAgg, KeepNulls: onNull != "ABSENT"}
	}
	comp, err := compileExpr(zone, arg, schema, table)
	if err != nil {
		return aggop.AggCall{}, err
	}
	call.ArgType = comp.Type
	if err := call.Validate(); err != nil {
		return aggop.AggCall{}, errAt(c.At, "%v", err)
	}
	call.Arg = addArg(comp, sql.Format(arg))
	return call, nil
}

// mergeableAggs refuses JSON_ARRAYAGG in a window whose windows merge
// accumulators (HOP and CUMULATE merge slices, SESSION merges sessions):
// Flink's JsonArrayAggFunction has no merge, and Flink refuses the plan.
func mergeableAggs(calls []*sql.Call, aggs []aggop.AggCall, kind windowop.WindowKind) error {
	if kind == windowop.Tumble {
		return nil
	}
	for i, a := range aggs {
		if a.Func == aggop.JSONArrayAgg {
			return errAt(calls[i].At, "JSON_ARRAYAGG cannot run in a %s window: its accumulators do not merge (Flink refuses it: JsonArrayAggFunction has no merge method); use a TUMBLE window or ARRAY_AGG", kind)
		}
	}
	return nil
}

// percentileCall plans PERCENTILE(x, p): the aggregate reads x as a
// DOUBLE (Flink's accumulator keeps doubles) and p, a constant in [0, 1].
// The array of percentages and the frequency argument are not supported
// yet.
func percentileCall(zone *time.Location, c *sql.Call, schema row.Schema, table string, addArg func(*expr.Compiled, string) int) (aggop.AggCall, error) {
	if len(c.Args) != 2 {
		return aggop.AggCall{}, errAt(c.At, "PERCENTILE takes a value and one percentage (the frequency argument is not supported yet), got %d arguments", len(c.Args))
	}
	x, err := compileExpr(zone, c.Args[0], schema, table)
	if err != nil {
		return aggop.AggCall{}, err
	}
	if !x.Type.ID.Numeric() {
		return aggop.AggCall{}, errAt(c.Args[0].Pos(), "PERCENTILE needs a numeric value, got %s", x.Type)
	}
	p, err := compileExpr(zone, c.Args[1], schema, table)
	if err != nil {
		return aggop.AggCall{}, err
	}
	if !p.Const || !p.Type.ID.Numeric() || p.Value.IsNull() {
		return aggop.AggCall{}, errAt(c.Args[1].Pos(), "PERCENTILE's percentage must be a numeric constant between 0.0 and 1.0 (an ARRAY of them is not supported yet)")
	}
	pct, _ := strconv.ParseFloat(p.Value.String(), 64)
	if !(pct >= 0 && pct <= 1) {
		return aggop.AggCall{}, errAt(c.Args[1].Pos(), "Percentage of PERCENTILE should be between [0.0, 1.0], but was '%s' (as Flink refuses it)", p.Value)
	}
	if c.Distinct {
		return aggop.AggCall{}, errAt(c.At, "PERCENTILE(DISTINCT ...) is not supported")
	}
	arg := &sql.Cast{At: c.Args[0].Pos(), X: c.Args[0], Type: row.Of(row.Double), TypeText: "DOUBLE"}
	comp, err := compileExpr(zone, arg, schema, table)
	if err != nil {
		return aggop.AggCall{}, err
	}
	call := aggop.AggCall{Func: aggop.Percentile, ArgType: comp.Type, Pct: pct}
	if err := call.Validate(); err != nil {
		return aggop.AggCall{}, errAt(c.At, "%v", err)
	}
	call.Arg = addArg(comp, sql.Format(arg))
	return call, nil
}

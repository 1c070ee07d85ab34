package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/udfop"
	"github.com/etld/etld/pipeline/sql"
	"github.com/etld/etld/pipeline/udf"
)

// User-defined functions (pipeline/udf) are looked up after the
// built-ins: a declaration may not take a built-in's name. A query's
// calls of scalar functions are computed by a FunctionNode under the
// rest of its SELECT, as Flink's PythonCalcSplitRule puts a PythonCalc
// under the Calc: one call per batch of rows. The calls are then columns
// of that node, hidden as a scalar subquery's are (SELECT * leaves them
// out, no SQL text can name them), and the query reads them in place of
// the calls, in the select list, WHERE, GROUP BY, HAVING and aggregate
// arguments alike.

// udfQual qualifies the columns of a FunctionNode.
const udfQual = "$udf"

// takenName reports a name SQL gives a meaning already: a built-in
// scalar, aggregate, window or table function.
func takenName(name string) bool {
	up := strings.ToUpper(name)
	switch up {
	case "ROW_NUMBER", "RANK", "DENSE_RANK", "PERCENT_RANK", "CUME_DIST", "NTILE", "LAG", "LEAD", "NTH_VALUE",
		"TUMBLE", "HOP", "CUMULATE", "SESSION", "UNNEST", "TABLE", "LATERAL":
		return true
	}
	return expr.IsFunction(up) || expr.IsAggregate(up)
}

// loadFunctions loads the file's functions into the plan.
func (b *builder) loadFunctions() {
	funcs, errs := udf.Load(context.Background(), b.plan.Spec.Functions, takenName)
	b.plan.funcs = funcs
	if len(errs) > 0 {
		b.errs.Add(errs)
	}
}

// userFunction returns the declarations of the user function c calls,
// nil when c calls none (or a built-in).
func (q *queryBuilder) userFunction(c *sql.Call) []*udf.Function {
	return q.b.plan.funcs.Lookup(c.Name)
}

// userScalar reports whether x is a call of a user scalar function.
func (q *queryBuilder) userScalar(x sql.Expr) (*sql.Call, bool) {
	c, ok := x.(*sql.Call)
	if !ok {
		return nil, false
	}
	fs := q.userFunction(c)
	return c, len(fs) > 0 && fs[0].Kind == udf.Scalar
}

// hasUserCall reports whether e calls a user scalar function.
func (q *queryBuilder) hasUserCall(e sql.Expr) bool {
	found := false
	walk(e, func(x sql.Expr) bool {
		_, ok := q.userScalar(x)
		found = found || ok
		return !found
	})
	return found
}

// userCalls collects the user scalar calls of e, inner calls first,
// each text once (keyed by its lower-cased text in seen).
func (q *queryBuilder) userCalls(e sql.Expr, seen map[string]bool, out *[]*sql.Call) error {
	if e == nil {
		return nil
	}
	for _, ch := range e.Children() {
		if err := q.userCalls(ch, seen, out); err != nil {
			return err
		}
	}
	c, ok := e.(*sql.Call)
	if !ok {
		return nil
	}
	fs := q.userFunction(c)
	switch {
	case len(fs) == 0:
		return nil
	case fs[0].Kind == udf.Table:
		return errAt(c.At, "%s is a table function: call it in FROM, as `CROSS JOIN LATERAL TABLE(%s(...))`", fs[0].Name, fs[0].Name)
	case fs[0].Kind != udf.Scalar:
		return nil
	case c.Distinct || c.Star || c.Filter != nil:
		return errAt(c.At, "%s is a scalar function: DISTINCT, * and FILTER belong to aggregate calls", fs[0].Name)
	}
	text := strings.ToLower(sql.Format(c))
	if !seen[text] {
		seen[text] = true
		*out = append(*out, c)
	}
	return nil
}

// userScalars plans the user scalar calls of sel over s: a FunctionNode
// on s's table computing them, s then reading it, and sel with each call
// replaced by its column. The WHERE of a query whose condition calls no
// function filters the rows first, so that the functions are called
// only for the rows it keeps.
func (q *queryBuilder) userScalars(sel *sql.Select, s *scope, aggregated bool) (*sql.Select, error) {
	if len(q.b.plan.funcs.Functions()) == 0 {
		return sel, nil
	}
	seen := map[string]bool{}
	var calls []*sql.Call
	exprs := []sql.Expr{sel.Where}
	exprs = append(exprs, sel.GroupBy...)
	for _, it := range sel.Items {
		exprs = append(exprs, it.Expr)
	}
	exprs = append(exprs, sel.Having)
	for _, e := range exprs {
		if err := q.userCalls(e, seen, &calls); err != nil {
			return nil, err
		}
	}
	if len(calls) == 0 {
		return sel, nil
	}
	if aggregated {
		if err := q.checkAggregatedCalls(sel); err != nil {
			return nil, err
		}
	}
	out := *sel
	if sel.Where != nil && !q.hasUserCall(sel.Where) && s.window == nil {
		filter, err := q.compileFilter(sel.Where, s, s.node.Schema)
		if err != nil {
			return nil, err
		}
		s.node = filterNode(s.node, filter, sel.Where)
		out.Where = nil
	}
	refs, err := q.functionNode(s, calls)
	if err != nil {
		return nil, err
	}
	replace := func(e sql.Expr) sql.Expr {
		return rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
			if c, ok := q.userScalar(x); ok {
				if ref := refs[strings.ToLower(sql.Format(c))]; ref != nil {
					return ref, true
				}
			}
			return nil, false
		})
	}
	out.Where = replace(out.Where)
	out.Having = replace(sel.Having)
	out.GroupBy = make([]sql.Expr, len(sel.GroupBy))
	for i, g := range sel.GroupBy {
		out.GroupBy[i] = replace(g)
	}
	out.Items = make([]*sql.SelectItem, len(sel.Items))
	for i, it := range sel.Items {
		out.Items[i] = &sql.SelectItem{Expr: replace(it.Expr), Alias: it.Alias}
		if it.Alias.IsZero() && q.hasUserCall(it.Expr) {
			// Named as the expression it was (EXPR$i), not as the
			// column it now reads.
			out.Items[i].Alias = sql.Ident{Name: fmt.Sprintf("EXPR$%d", i)}
		}
	}
	return &out, nil
}

// checkAggregatedCalls refuses, in an aggregate query, a function call
// over the aggregate's results: one in the select list or HAVING that is
// neither inside an aggregate's argument nor a GROUP BY expression.
func (q *queryBuilder) checkAggregatedCalls(sel *sql.Select) error {
	keys := map[string]bool{}
	for _, g := range sel.GroupBy {
		keys[strings.ToLower(sql.Format(g))] = true
	}
	var bad *sql.Call
	check := func(e sql.Expr) {
		walk(e, func(x sql.Expr) bool {
			if bad != nil {
				return false
			}
			if c, ok := x.(*sql.Call); ok && expr.IsAggregate(c.Name) {
				return false // its arguments are computed before it
			}
			if c, ok := q.userScalar(x); ok && !keys[strings.ToLower(sql.Format(c))] {
				bad = c
				return false
			}
			return !keys[strings.ToLower(sql.Format(x))]
		})
	}
	for _, it := range sel.Items {
		check(it.Expr)
	}
	check(sel.Having)
	if bad != nil {
		return errAt(bad.At, "%s over an aggregate's result or a group key is not supported yet: call it in an outer query, SELECT %s(...) FROM (SELECT ... GROUP BY ...), or group by the call itself", bad.Name, bad.Name)
	}
	return nil
}

// filterNode is a Calc that keeps the rows of in that pass filter.
func filterNode(in *Node, filter *expr.Compiled, where sql.Expr) *Node {
	colMap := make([]int, in.Schema.Len())
	colSrc := make([]int, in.Schema.Len())
	for i := range colMap {
		colMap[i], colSrc[i] = i, i
	}
	return &Node{
		Kind: CalcNode, Input: in, Schema: in.Schema, Mode: calcMode(in.Mode, colMap), TimeAttr: in.TimeAttr, Bounded: in.Bounded,
		op:    &calcOp{filter: filter, colSrc: colSrc, proc: make([]bool, len(colSrc))},
		Label: fmt.Sprintf("Calc(select=[%s], where=[%s])", strings.Join(in.Schema.Names(), ", "), sql.Format(where)),
	}
}

// functionNode puts a FunctionNode computing calls (inner calls first)
// on s's table and makes s read it. It returns the expression that reads
// each call's result, by the call's lower-cased text.
func (q *queryBuilder) functionNode(s *scope, calls []*sql.Call) (map[string]sql.Expr, error) {
	in := s.node
	fields := slices.Clone(in.Schema.Fields)
	used := map[string]bool{}
	for _, f := range fields {
		used[strings.ToLower(f.Name)] = true
	}
	cur := &scope{node: &Node{Schema: in.Schema}, name: s.name, table: s.table, also: s.also, cols: s.tableCols(0)}
	refs := map[string]sql.Expr{}
	replace := func(e sql.Expr) sql.Expr {
		return rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
			if c, ok := q.userScalar(x); ok {
				if ref := refs[strings.ToLower(sql.Format(c))]; ref != nil {
					return ref, true
				}
			}
			return nil, false
		})
	}
	op := &callsOp{}
	var texts []string
	for _, c := range calls {
		fn, args, err := q.resolveCall(c, cur, replace)
		if err != nil {
			return nil, err
		}
		text := callText(fn, c)
		name := uniquify(text, used)
		fields = append(fields, row.Field{Name: name, Type: fn.Returns})
		cur.cols = append(cur.cols, scopeCol{quals: []string{udfQual}, name: name, idx: len(fields) - 1, hidden: true})
		cur.node = &Node{Schema: row.NewSchema(fields...)}
		refs[strings.ToLower(sql.Format(c))] = &sql.ColumnRef{Table: sql.Ident{Name: udfQual}, Column: sql.Ident{At: c.At, Name: name, Quoted: true}}
		op.calls = append(op.calls, userCall{fn: fn, args: args, text: text})
		texts = append(texts, text)
	}
	n := &Node{
		Kind: FunctionNode, Input: in, Schema: row.NewSchema(fields...), Mode: in.Mode,
		TimeAttr: in.TimeAttr, Bounded: in.Bounded, op: op,
		Label: fmt.Sprintf("FunctionCalc(%s)", strings.Join(texts, ", ")),
	}
	*s = scope{node: n, name: s.name, table: s.table, also: s.also, cols: cur.cols, window: s.window, windowSpec: s.windowSpec}
	return refs, nil
}

// resolveCall compiles the arguments of call c over s (replace turning
// the inner calls into their columns), finds the declaration that takes
// their types and casts each argument to its parameter's type.
func (q *queryBuilder) resolveCall(c *sql.Call, s *scope, replace func(sql.Expr) sql.Expr) (*udf.Function, []*expr.Compiled, error) {
	argExprs := make([]sql.Expr, len(c.Args))
	types := make([]row.Type, len(c.Args))
	for i, a := range c.Args {
		argExprs[i] = replace(a)
		comp, err := q.compile(argExprs[i], s, s.node.Schema)
		if err != nil {
			return nil, nil, err
		}
		types[i] = comp.Type
	}
	fn, err := q.b.plan.funcs.Resolve(c.Name, types)
	if err != nil {
		return nil, nil, errAt(c.At, "%v", err)
	}
	args := make([]*expr.Compiled, len(c.Args))
	for i, a := range argExprs {
		if types[i].Nullable() != fn.Params[i] {
			a = &sql.Cast{At: a.Pos(), X: a, Type: fn.Params[i], TypeText: fn.Params[i].String()}
		}
		comp, err := q.compile(a, s, s.node.Schema)
		if err != nil {
			return nil, nil, err
		}
		if comp.ReadsWatermark {
			return nil, nil, watermarkOutsideCalc(a)
		}
		args[i] = comp
	}
	return fn, args, nil
}

// userCall is one call a FunctionNode computes.
type userCall struct {
	fn   *udf.Function
	args []*expr.Compiled
	text string
}

// callsOp is a FunctionNode's calls.
type callsOp struct{ calls []userCall }

func (c *callsOp) operator(b opBuild) (operator.Lifecycle, error) {
	op := &udfop.Calls{Name: b.n.Label, Transform: b.transform, Reject: b.reject(), Input: b.n.Input.Schema}
	for _, call := range c.calls {
		fn := call.fn
		op.Calls = append(op.Calls, udfop.Call{
			Name: fn.Name, Args: evals(call.args), NullTolerant: fn.NullTolerant,
			Start: func(ctx context.Context) (udfop.ScalarFunc, error) { return fn.NewInstance(ctx) },
		})
	}
	return op, nil
}

// nondeterministic names what makes the call's results differ between
// runs: a function declared so, or an argument's clock-reading call; ""
// for nothing.
func (u userCall) nondeterministic() string {
	if !u.fn.Deterministic {
		return fmt.Sprintf("the function %s, declared `deterministic: false`", u.fn.Name)
	}
	if clk := firstClock(u.args); clk != "" {
		return clk + ", which reads the clock or is random"
	}
	return ""
}

// nondeterministicCalls names what makes a FunctionNode's or
// LateralNode's results differ between runs, "" for nothing.
func nondeterministicCalls(n *Node) string {
	switch op := n.op.(type) {
	case *callsOp:
		for _, c := range op.calls {
			if why := c.nondeterministic(); why != "" {
				return why
			}
		}
	case *lateralOp:
		return op.call.nondeterministic()
	}
	return ""
}

// misplacedCall turns the compiler's "unknown function" about a user
// function, called where the planner computes none (a join condition, a
// computed column, a watermark), into what to do instead.
func (b *builder) misplacedCall(msg string) string {
	name, ok := strings.CutPrefix(msg, "unknown function ")
	if !ok {
		return msg
	}
	name, _, _ = strings.Cut(name, ";")
	fs := b.plan.funcs.Lookup(name)
	if len(fs) == 0 {
		return msg
	}
	where := "a transform's SELECT list, WHERE, GROUP BY or HAVING, or an aggregate's argument"
	switch fs[0].Kind {
	case udf.Table:
		where = "FROM, as `CROSS JOIN LATERAL TABLE(" + fs[0].Name + "(...))`"
	case udf.Aggregate:
		where = "the SELECT list or HAVING of a GROUP BY or window aggregate"
	}
	return fmt.Sprintf("%s, a %s function of this file, cannot be called here; call it in %s", fs[0].Name, fs[0].Kind, where)
}

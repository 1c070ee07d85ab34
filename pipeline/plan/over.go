package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/windowop"
	"github.com/etld/etld/pipeline/sql"
)

// OVER aggregates: a SELECT whose list holds agg(...) OVER (window) or
// a row function (LAG, LEAD, ROW_NUMBER, RANK, DENSE_RANK), planned as
//
//	Calc(input columns, partition keys, arguments; WHERE) → OverAggregate → Calc(select list)
//
// Ordered by a time attribute, the OverAggregate emits each input row
// once, with its results appended, when the watermark passes the row's
// event time: insert-only. Ordered by another column, it updates the
// rows after one arriving in their midst (over_nontime.go).

// overCalls returns the OVER calls of the select list, outermost first.
// A Top-N or deduplication (ROW_NUMBER filtered by the outer query) is
// planned before the select list is (rank_topn.go); a ranking function
// reaching here is an OVER aggregate.
func overCalls(items []*sql.SelectItem) (overs []*sql.Over) {
	for _, it := range items {
		walk(it.Expr, func(x sql.Expr) bool {
			if o, ok := x.(*sql.Over); ok {
				overs = append(overs, o)
			}
			return true
		})
	}
	return overs
}

// windowText is the window as Format writes it, for comparing two calls'
// windows and for explain.
func overWindowText(w *sql.WindowSpec) string {
	return sql.Format(&sql.Over{Call: &sql.Call{Name: "X"}, Window: w})[len("X() OVER "):]
}

// overAggregate plans a SELECT with OVER aggregates over s.
func (q *queryBuilder) overAggregate(sel *sql.Select, s *scope, overs []*sql.Over) (*Node, error) {
	o := &overPlan{q: q, sel: sel, s: s, in: s.node, overs: overs}
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := o.firstColumns(); err != nil {
		return nil, err
	}
	if err := o.functions(); err != nil {
		return nil, err
	}
	pre, err := o.firstCalc()
	if err != nil {
		return nil, err
	}
	out, err := o.lastCalc(o.overNode(pre))
	if err != nil {
		return nil, err
	}
	if sel.Distinct {
		return q.distinct(out), nil
	}
	return out, nil
}

// overFn is one OVER call of a SELECT: its text, whether it is a row
// function (LAG, ROW_NUMBER, ...), its index among the aggregates or the
// row functions, and its result type.
type overFn struct {
	text  string
	rowFn bool
	i     int
	typ   row.Type
}

// overPlan is a SELECT with OVER aggregates being planned, in the phases
// of Flink's plan: a first Calc passes the input's columns and appends
// the partition keys and the calls' arguments, the OverAggregate appends
// the results, and a last Calc computes the select list.
type overPlan struct {
	q     *queryBuilder
	sel   *sql.Select
	s     *scope
	in    *Node
	overs []*sql.Over
	spec  windowop.OverSpec
	// nonTime is set when the window is ordered by a column that is not
	// a time attribute (over_nontime.go).
	nonTime *windowop.NonTimeSpec
	// win is the window every call shares, with its frame (over_fn.go).
	win *sql.WindowSpec

	preFields  []row.Field
	preProject []*expr.Compiled
	preTexts   []string
	keyTexts   []string
	// fns are the calls, each once (index finds one by its text); results
	// follow the input's columns, aggregates first, then LAGs.
	fns       []overFn
	index     map[string]int
	aggTexts  []string
	outFields []row.Field
	resultCol []int
}

// check refuses what OVER cannot be mixed with, and windows that differ
// between the calls, and builds the OVER spec.
func (o *overPlan) check() error {
	sel, s, in := o.sel, o.s, o.in
	first := o.overs[0]
	switch {
	case s.window != nil:
		return errAt(first.OverAt, "OVER aggregates over a window table function are not supported; read the window TVF in a subquery with its GROUP BY")
	case len(sel.GroupBy) > 0 || sel.Having != nil:
		return errAt(first.OverAt, "OVER aggregates cannot be mixed with GROUP BY or HAVING in one SELECT; group in a subquery and compute the OVER aggregates around it")
	}
	for _, it := range sel.Items {
		if containsAgg(it.Expr) {
			return errAt(it.Pos(), "an aggregate without OVER cannot stand beside OVER aggregates; give it an OVER window too or aggregate in a subquery")
		}
	}
	w, err := o.window()
	if err != nil {
		return err
	}
	if nt, ok, err := o.nonTimeSpec(w); ok || err != nil {
		o.nonTime = nt
		if err != nil {
			return rankHint(err, o.overs)
		}
		return nil
	}
	if in.Mode.Updating {
		return errAt(first.OverAt, "OVER aggregates ordered by a time attribute take insert-only input; the %s they read is updating (an OVER window ordered by another column takes it)", s.table)
	}
	spec, err := o.q.overSpec(w, s)
	if err != nil {
		return rankHint(err, o.overs)
	}
	o.spec = spec
	return nil
}

// add places an argument or key in the first Calc, returning its column:
// a plain input column is read where it is.
func (o *overPlan) add(name string, c *expr.Compiled, text string) int {
	in := o.in
	if i := in.Schema.Index(strings.Trim(text, "`")); i >= 0 && i < in.Schema.Len() && c.Type == in.Schema.Fields[i].Type {
		return i
	}
	o.preFields = append(o.preFields, row.Field{Name: name, Type: c.Type})
	o.preProject = append(o.preProject, c)
	o.preTexts = append(o.preTexts, text)
	return len(o.preFields) - 1
}

// firstColumns gives the first Calc the input's columns and the
// partition keys.
func (o *overPlan) firstColumns() error {
	s, in := o.s, o.in
	w := o.overs[0].Window
	for _, f := range in.Schema.Fields {
		c, err := compileExpr(o.q.zone(), &sql.ColumnRef{Column: sql.Ident{Name: f.Name, Quoted: true}}, in.Schema, s.table)
		if err != nil {
			return err
		}
		o.preFields = append(o.preFields, f)
		o.preProject = append(o.preProject, c)
		o.preTexts = append(o.preTexts, f.Name)
	}
	for i, k := range w.PartitionBy {
		k, err := s.unqualify(k)
		if err != nil {
			return err
		}
		c, err := compileExpr(o.q.zone(), k, in.Schema, s.table)
		if err != nil {
			return err
		}
		o.spec.Keys = append(o.spec.Keys, o.add(fmt.Sprintf("$p%d", i), c, sql.Format(k)))
		o.keyTexts = append(o.keyTexts, sql.Format(k))
	}
	return nil
}

// functions finds the OVER calls, each once, and places their
// arguments in the first Calc.
func (o *overPlan) functions() error {
	q, s, in := o.q, o.s, o.in
	spec := &o.spec
	o.index = map[string]int{}
	for _, ov := range o.overs {
		oc, err := s.unqualify(ov)
		if err != nil {
			return err
		}
		call := oc.(*sql.Over).Call
		text := sql.Format(call)
		if _, seen := o.index[strings.ToLower(text)]; seen {
			continue
		}
		name := strings.ToUpper(call.Name)
		f := overFn{text: text}
		switch {
		case expr.IsAggregate(name):
			for _, arg := range call.Args {
				if containsAgg(arg) {
					return errAt(arg.Pos(), "aggregate functions cannot be nested")
				}
			}
			j := len(spec.Aggs)
			if name == "JSON_ARRAYAGG" || name == "JSON_OBJECTAGG" {
				return errAt(call.At, "%s cannot take OVER (...): Flink does not run it over a window (its parser refuses the OVER)", name)
			}
			ac, err := q.aggCall(call, in.Schema, s.table, func(c *expr.Compiled, t string) int {
				return o.add(fmt.Sprintf("$arg%d", len(o.preFields)), c, t)
			})
			if err != nil {
				return err
			}
			spec.Aggs = append(spec.Aggs, ac)
			f.i, f.typ = j, ac.ResultType()
		case isRowFunc(name):
			l, typ, err := q.rowFuncCall(call, in.Schema, s.table, o.add)
			if err != nil {
				return err
			}
			f.rowFn, f.i, f.typ = true, len(spec.Funcs), typ
			spec.Funcs = append(spec.Funcs, l)
		case len(q.b.plan.funcs.Lookup(name)) > 0:
			return errAt(call.At, "%s, a function of this file, cannot take OVER (...) yet: user aggregates run in GROUP BY and window aggregates", name)
		default:
			return errAt(call.At, "%s is not an aggregate function and cannot take OVER (...); OVER takes COUNT, SUM, AVG, MIN, MAX, FIRST_VALUE, LAST_VALUE, LISTAGG, COLLECT, ARRAY_AGG, PERCENTILE, STDDEV/VAR, LAG, LEAD, ROW_NUMBER, RANK, DENSE_RANK, NTILE, PERCENT_RANK, CUME_DIST", name)
		}
		o.index[strings.ToLower(text)] = len(o.fns)
		o.fns = append(o.fns, f)
		o.aggTexts = append(o.aggTexts, text)
	}
	return nil
}

// firstCalc builds the Calc under the OverAggregate when it has a WHERE
// or appends columns; otherwise the input is read as it is.
func (o *overPlan) firstCalc() (*Node, error) {
	q, sel, s, in := o.q, o.sel, o.s, o.in
	preFields, preProject, preTexts := o.preFields, o.preProject, o.preTexts
	var where *expr.Compiled
	if sel.Where != nil {
		var err error
		if where, err = q.compileFilter(sel.Where, s, in.Schema); err != nil {
			return nil, err
		}
	}
	pre := in
	if where != nil || len(preFields) > in.Schema.Len() {
		pre = &Node{
			Kind: CalcNode, Input: in, Schema: row.NewSchema(preFields...),
			Mode: in.Mode, TimeAttr: in.TimeAttr, Bounded: in.Bounded,
		}
		c := &calcOp{filter: where}
		if len(preFields) > in.Schema.Len() {
			c.project = preProject
		}
		pre.op = c
		cond := ""
		if sel.Where != nil {
			cond = ", where=[" + sql.Format(sel.Where) + "]"
		}
		pre.Label = fmt.Sprintf("Calc(select=[%s]%s)", strings.Join(preTexts, ", "), cond)
	}
	return pre, nil
}

// overNode builds the OverAggregate: the first Calc's columns, then the
// results, aggregates first, then the row functions.
func (o *overPlan) overNode(pre *Node) *Node {
	q, in, fns, keyTexts, aggTexts := o.q, o.in, o.fns, o.keyTexts, o.aggTexts
	w := o.win
	spec := o.spec
	outFields := append([]row.Field(nil), o.preFields...)
	resultCol := make([]int, len(fns))
	for _, kind := range []bool{false, true} { // aggregates, then row functions
		for j, f := range fns {
			if f.rowFn == kind {
				resultCol[j] = len(outFields)
				outFields = append(outFields, row.Field{Name: fmt.Sprintf("$o%d", j), Type: f.typ})
			}
		}
	}
	if o.nonTime != nil {
		o.outFields, o.resultCol = outFields, resultCol
		return o.nonTimeNode(pre, outFields)
	}
	if !spec.ProcTime {
		spec.TimeCol = in.TimeAttr
	}
	node := &Node{
		Kind: OverAggNode, Input: pre, Schema: row.NewSchema(outFields...),
		Mode: overAggMode(), TimeAttr: in.TimeAttr, Bounded: in.Bounded,
		op: &overOp{spec: &spec, batch: q.b.plan.Batch}, batch: q.b.plan.Batch,
	}
	node.Label = overLabel(keyTexts, in.Schema.Fields[spec.TimeCol].Name, w, aggTexts)

	o.outFields, o.resultCol = outFields, resultCol
	return node
}

// overLabel is the OverAggregate's explain line, as Flink writes it.
func overLabel(keyTexts []string, order string, w *sql.WindowSpec, aggTexts []string) string {
	partition := ""
	if len(keyTexts) > 0 {
		partition = "partitionBy=[" + strings.Join(keyTexts, ", ") + "], "
	}
	frame := defaultFrame
	if w.Frame != nil {
		frame = strings.Trim(overWindowText(&sql.WindowSpec{Frame: w.Frame}), "()")
	}
	return fmt.Sprintf("OverAggregate(%sorderBy=[%s ASC], window=[%s], select=[%s])",
		partition, order, frame, strings.Join(aggTexts, ", "))
}

// lastCalc builds the select list over the OverAggregate's row, each
// OVER call read from its column.
func (o *overPlan) lastCalc(node *Node) (*Node, error) {
	q, sel, s, in, first := o.q, o.sel, o.s, o.in, o.overs[0]
	outFields, resultCol, fns := o.outFields, o.resultCol, o.fns
	var post []*sql.SelectItem
	for i, it := range sel.Items {
		if star, ok := it.Expr.(*sql.Star); ok {
			// * is the input's columns, not the arguments placed after them.
			if !star.Table.IsZero() && !strings.EqualFold(star.Table.Name, s.name) && !strings.EqualFold(star.Table.Name, s.table) {
				return nil, errAt(star.At, "unknown table %q: this query reads %s", star.Table.Name, s.reads())
			}
			for _, f := range in.Schema.Fields {
				post = append(post, &sql.SelectItem{Expr: &sql.ColumnRef{Column: sql.Ident{At: star.At, Name: f.Name, Quoted: true}}})
			}
			continue
		}
		e := rewrite(it.Expr, func(x sql.Expr) (sql.Expr, bool) {
			ov, ok := x.(*sql.Over)
			if !ok {
				return nil, false
			}
			oc, _ := s.unqualify(ov)
			j := o.index[strings.ToLower(sql.Format(oc.(*sql.Over).Call))]
			return &sql.ColumnRef{Column: sql.Ident{At: ov.Pos(), Name: outFields[resultCol[j]].Name, Quoted: true}}, true
		})
		alias := it.Alias
		if _, ok := it.Expr.(*sql.Over); ok && alias.IsZero() {
			alias = sql.Ident{Name: fmt.Sprintf("EXPR$%d", i)}
		}
		post = append(post, &sql.SelectItem{Expr: e, Alias: alias})
	}
	overScope := &scope{node: node, name: s.name, table: s.table}
	out, err := q.projection(post, overScope, node, nil, nil)
	if err != nil {
		return nil, err
	}
	// Flink's explain calls the window w0.
	wname := "w0"
	if !first.Name.IsZero() {
		wname = first.Name.Name
	}
	for j, f := range fns {
		out.Label = strings.ReplaceAll(out.Label, "`"+outFields[resultCol[j]].Name+"`", f.text+" OVER "+wname)
	}
	return out, nil
}

// overSpec checks the window: ORDER BY the input's event-time attribute
// or a processing-time column, ascending; a ROWS frame counts rows, a
// RANGE frame an interval; no frame is RANGE UNBOUNDED PRECEDING, as in
// SQL.
func (q *queryBuilder) overSpec(w *sql.WindowSpec, s *scope) (windowop.OverSpec, error) {
	in := s.node
	spec := windowop.OverSpec{Preceding: windowop.Unbounded}
	timeName := ""
	if in.TimeAttr >= 0 {
		timeName = in.Schema.Fields[in.TimeAttr].Name
	}
	orderHint := "ORDER BY its event-time attribute"
	if timeName != "" {
		orderHint = "ORDER BY " + timeName
	}
	if len(w.OrderBy) != 1 {
		return spec, errAt(w.At, "an OVER window needs exactly one ORDER BY column, ascending (%s, or another column; Flink orders by one column only)", orderHint)
	}
	o := w.OrderBy[0]
	x, err := s.unqualify(o.X)
	if err != nil {
		return spec, err
	}
	ref, ok := x.(*sql.ColumnRef)
	if ok {
		if c := in.Schema.Index(ref.Column.Name); c >= 0 && procTimeCol(in, c) {
			spec.ProcTime, spec.TimeCol = true, c
		}
	}
	if !spec.ProcTime && (!ok || in.TimeAttr < 0 || !strings.EqualFold(ref.Column.Name, timeName)) {
		// A column that is not a time attribute is planned before
		// (over_nontime.go): this is an expression or an unknown name.
		return spec, errAt(o.Pos(), "an OVER window is ordered by a column of %s (%s, or another column): compute %s in a subquery and order by its name", s.table, strings.TrimPrefix(orderHint, "ORDER BY "), sql.Format(o.X))
	}
	if o.Desc {
		return spec, errAt(o.Pos(), "an OVER window orders its time attribute ascending (Flink refuses DESC): drop DESC")
	}
	f := w.Frame
	if f == nil {
		return spec, nil
	}
	spec.Rows = f.Unit == sql.FrameRows
	switch {
	case f.Unbounded:
	case f.Preceding == nil:
		spec.Preceding = 0
	case spec.Rows:
		lit, ok := f.Preceding.(*sql.Literal)
		n, err := strconv.ParseInt(litText(lit, ok), 10, 64)
		if !ok || lit.Kind != sql.LitInt || err != nil || n < 0 {
			return spec, errAt(f.Preceding.Pos(), "ROWS takes a whole number of rows PRECEDING (such as ROWS BETWEEN 9 PRECEDING AND CURRENT ROW)")
		}
		spec.Preceding = n
	default:
		iv, ok := f.Preceding.(*sql.IntervalLit)
		if !ok || iv.YearMonth() || iv.Value < 0 {
			return spec, errAt(f.Preceding.Pos(), "RANGE over a time attribute takes a day-time interval PRECEDING (such as RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)")
		}
		spec.Preceding = iv.Value.Microseconds()
	}
	return spec, nil
}

func litText(l *sql.Literal, ok bool) string {
	if !ok {
		return ""
	}
	return l.Text
}

// overAggMode: an OVER aggregate emits each row once, final: insert-only,
// with no key (Flink derives none either: rows need not be unique).
func overAggMode() Changelog { return Changelog{} }

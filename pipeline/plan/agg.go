package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/windowop"
	"github.com/etld/etld/pipeline/sql"
)

// aggregate plans a SELECT with GROUP BY or aggregate functions as
//
//	Calc(keys, aggregate arguments; WHERE) → GroupAgg or WindowAgg → Calc(select list; HAVING)
//
// The first Calc computes every group key and aggregate argument into a
// column, so the aggregate operators work on column indices; the last one
// computes the select list from the aggregate's output.
func (q *queryBuilder) aggregate(sel *sql.Select, s *scope) (*Node, error) {
	sel, grouping, err := q.groupingSets(sel, s)
	if err != nil {
		return nil, err
	}
	a := &aggPlan{q: q, sel: sel, s: s, in: s.node}
	if err := a.groupKeys(); err != nil {
		return nil, err
	}
	if err := a.collectCalls(); err != nil {
		return nil, err
	}
	pre, err := a.firstCalc()
	if err != nil {
		return nil, err
	}
	if grouping != nil {
		if a.attached != nil {
			return nil, errAt(sel.GroupByAt, "grouping sets over windowed rows are not supported yet; group each way in its own query and UNION ALL them")
		}
		pre = a.expand(pre, grouping)
	}
	top, err := a.scalarAbove(a.aggNode(pre))
	if err != nil {
		return nil, err
	}
	out, err := a.lastCalc(top)
	if err != nil {
		return nil, err
	}
	if sel.Distinct {
		return q.distinct(out), nil
	}
	return out, nil
}

// aggPlan is a GROUP BY or window aggregate being planned, in the
// phases Flink's plan shows: the group keys and the aggregate calls are
// found, then a first Calc computes the keys, the calls' arguments and
// (windows) the time attribute, then the aggregate, then a last Calc
// computes the select list and HAVING over the aggregate's row.
type aggPlan struct {
	q   *queryBuilder
	sel *sql.Select
	s   *scope
	in  *Node
	// attached: the rows carry their windows already and the GROUP BY
	// names them (attachedWindow).
	attached *windowProps

	keyExprs []sql.Expr
	// calls are the aggregate calls of the select list and HAVING, each
	// once; callIndex finds one by its text.
	calls     []*sql.Call
	callIndex map[string]int
	items     []*sql.SelectItem
	having    sql.Expr

	// The first Calc's columns: keys, then arguments, then the time.
	preFields  []row.Field
	preProject []*expr.Compiled
	preTexts   []string
	keyNames   []string
	keys       []int
	aggs       []aggop.AggCall
	aggMono    []monotonicity
	window     *windowop.WindowSpec
	aggNames   []string
	// state maps the first Calc's columns to the aggregate's state
	// columns, when aggregates share an argument column.
	state argColumns
}

// groupKeys finds the group keys. With a window TVF, window_start and
// window_end name the window and are not keys of their own. Over rows
// that carry their windows already, grouping by both makes a window
// aggregate of those windows (attached).
func (a *aggPlan) groupKeys() error {
	sel, s, in := a.sel, a.s, a.in
	attached, err := a.q.attachedWindow(sel.GroupBy, s)
	if err != nil {
		return err
	}
	a.attached = attached
	var keyExprs []sql.Expr
	var startExpr sql.Expr // attached: the window_start key, last
	var hasStart, hasEnd bool
	var windowRefAt sql.Pos
	for _, g := range sel.GroupBy {
		g, err := s.unqualify(g)
		if err != nil {
			return err
		}
		if attached != nil {
			if ref, ok := g.(*sql.ColumnRef); ok {
				switch i := in.Schema.Index(ref.Column.Name); {
				case i == attached.start:
					startExpr = g
					continue
				case i == attached.end:
					continue
				case strings.EqualFold(ref.Column.Name, "window_time"):
					continue
				}
			}
		}
		if s.window != nil {
			if ref, ok := g.(*sql.ColumnRef); ok {
				switch strings.ToLower(ref.Column.Name) {
				case "window_start":
					hasStart, windowRefAt = true, ref.Pos()
					continue
				case "window_end":
					hasEnd, windowRefAt = true, ref.Pos()
					continue
				case "window_time":
					// Flink accepts it beside window_start and
					// window_end: a property of the window, not a key.
					continue
				}
			}
		}
		keyExprs = append(keyExprs, g)
	}
	if startExpr != nil {
		keyExprs = append(keyExprs, startExpr)
	}
	if s.window != nil && !(hasStart && hasEnd) {
		at := sel.GroupByAt
		if windowRefAt.Line > 0 {
			at = windowRefAt
		}
		missing := "window_end"
		if !hasStart {
			missing = "window_start"
		}
		if !hasStart && !hasEnd {
			missing = "window_start, window_end"
		}
		return errAt(at, "a window aggregate groups by both window_start and window_end; without %s Flink plans this as a regular GROUP BY that updates its rows (a common trap). Add %s to the GROUP BY to get one final row per window", missing, missing)
	}

	if s.window != nil && s.window.Kind == sql.Session {
		// Sessions merge per group key; Flink partitions them by the
		// PARTITION BY columns, so both must agree.
		for _, p := range s.window.PartitionBy {
			found := false
			for _, k := range keyExprs {
				if ref, ok := k.(*sql.ColumnRef); ok && strings.EqualFold(ref.Column.Name, p.Name) {
					found = true
				}
			}
			if !found {
				return errAt(p.At, "the SESSION window's PARTITION BY column %q must also be a GROUP BY column: sessions are kept per group", p.Name)
			}
		}
	}

	a.keyExprs = keyExprs
	return nil
}

// collectCalls finds the aggregate calls of the select list and HAVING,
// each once, refusing nested ones and SELECT *.
func (a *aggPlan) collectCalls() error {
	sel, s := a.sel, a.s
	var err error
	var calls []*sql.Call
	callIndex := map[string]int{}
	collect := func(e sql.Expr) error {
		var ferr error
		walk(e, func(x sql.Expr) bool {
			c, ok := x.(*sql.Call)
			if !ok || !expr.IsAggregate(c.Name) {
				return true
			}
			for _, arg := range c.Args {
				if containsAgg(arg) && ferr == nil {
					ferr = errAt(arg.Pos(), "aggregate functions cannot be nested")
				}
			}
			text := strings.ToLower(sql.Format(c))
			if _, seen := callIndex[text]; !seen {
				callIndex[text] = len(calls)
				calls = append(calls, c)
			}
			return false
		})
		return ferr
	}
	items := make([]*sql.SelectItem, len(sel.Items))
	for i, it := range sel.Items {
		if star, ok := it.Expr.(*sql.Star); ok {
			return errAt(star.At, "SELECT * cannot be used with GROUP BY or aggregates; list the grouped columns and aggregates")
		}
		e, err := s.unqualify(it.Expr)
		if err != nil {
			return err
		}
		if err := collect(e); err != nil {
			return err
		}
		items[i] = &sql.SelectItem{Expr: e, Alias: it.Alias}
	}
	var having sql.Expr
	if sel.Having != nil {
		if having, err = s.unqualify(sel.Having); err != nil {
			return err
		}
		if err := collect(having); err != nil {
			return err
		}
	}

	a.calls, a.callIndex, a.items, a.having = calls, callIndex, items, having
	return nil
}

// firstCalc builds the Calc under the aggregate: the WHERE, then the
// keys, the aggregate arguments and (windows) the time attribute.
func (a *aggPlan) firstCalc() (*Node, error) {
	q, sel, s, in := a.q, a.sel, a.s, a.in
	var where *expr.Compiled
	if sel.Where != nil {
		var err error
		if where, err = q.compileFilter(sel.Where, s, in.Schema); err != nil {
			return nil, err
		}
	}
	var preFields []row.Field
	var preProject []*expr.Compiled
	var preTexts []string
	var keyNames []string
	keys := make([]int, len(a.keyExprs))
	for i, k := range a.keyExprs {
		c, err := compileExpr(a.q.zone(), k, in.Schema, s.table)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("$g%d", i)
		if _, ok := k.(*sql.ColumnRef); ok && c.IsColumn {
			// A column keeps its name; r.f (a field of ROW column r)
			// is no column.
			name = in.Schema.Fields[c.Column].Name
		}
		keys[i] = len(preFields)
		keyNames = append(keyNames, name)
		preFields = append(preFields, row.Field{Name: name, Type: c.Type})
		preProject = append(preProject, c)
		preTexts = append(preTexts, sql.Format(k))
	}
	// An argument (or FILTER condition) that several aggregates write
	// alike (SUM(amount), MAX(amount)) is computed into one column, as
	// Flink's Calc projects it once: the aggregate then copies and checks
	// each row's value once. Its saved state stays per aggregate, so the
	// state's columns (stateFields, each read from the input column
	// stateCols names) keep one argument per aggregate, as they were
	// before arguments were shared: a checkpoint of either plan restores
	// into the other. A call that reads the clock or is random (NOW(),
	// UUID()) gives each aggregate a value of its own.
	stateFields := append([]row.Field(nil), preFields...)
	stateCols := make([]int, len(preFields))
	for i := range stateCols {
		stateCols[i] = i
	}
	argCol := map[string]int{}
	aggs := make([]aggop.AggCall, len(a.calls))
	for j, c := range a.calls {
		call, err := q.aggCall(c, in.Schema, s.table, func(comp *expr.Compiled, text string) int {
			field := row.Field{Name: fmt.Sprintf("$arg%d", j), Type: comp.Type}
			stateFields = append(stateFields, field)
			same := comp.Type.String() + "\x00" + text
			if col, ok := argCol[same]; ok && comp.Clock == "" {
				stateCols = append(stateCols, col)
				return col
			}
			if comp.Clock == "" {
				argCol[same] = len(preFields)
			}
			stateCols = append(stateCols, len(preFields))
			preFields = append(preFields, field)
			preProject = append(preProject, comp)
			preTexts = append(preTexts, text)
			return len(preFields) - 1
		})
		if err != nil {
			return nil, err
		}
		aggs[j] = call
	}
	var window *windowop.WindowSpec
	if s.window != nil || a.attached != nil {
		var w windowop.WindowSpec
		if a.attached != nil {
			// The rows' window_end stands for their time.
			w = a.attached.spec
			w.TimeCol = a.attached.end
		} else {
			w = *s.windowSpec
		}
		tc := in.Schema.Fields[w.TimeCol]
		c, err := compileExpr(a.q.zone(), &sql.ColumnRef{Column: sql.Ident{Name: tc.Name, Quoted: true}}, in.Schema, s.table)
		if err != nil {
			return nil, err
		}
		w.TimeCol = len(preFields)
		stateFields, stateCols = append(stateFields, tc), append(stateCols, len(preFields))
		preFields = append(preFields, tc)
		preProject = append(preProject, c)
		preTexts = append(preTexts, tc.Name)
		window = &w
		if err := mergeableAggs(a.calls, aggs, w.Kind); err != nil {
			return nil, err
		}
	}
	pre := &Node{
		Kind: CalcNode, Input: in, Schema: row.NewSchema(preFields...),
		Mode: Changelog{Updating: in.Mode.Updating}, TimeAttr: -1, Bounded: in.Bounded,
	}
	preSrc, aggMono := aggSources(a.keyExprs, a.calls, aggs, len(preFields), in.Schema, sel.Where)
	pre.op = &calcOp{filter: where, project: preProject, colSrc: preSrc}
	cond := ""
	if sel.Where != nil {
		cond = ", where=[" + sql.Format(sel.Where) + "]"
	}
	pre.Label = fmt.Sprintf("Calc(select=[%s]%s)", strings.Join(preTexts, ", "), cond)

	a.preFields, a.preProject, a.preTexts = preFields, preProject, preTexts
	if len(stateFields) != len(preFields) {
		a.state = argColumns{fields: stateFields, cols: stateCols}
	}
	a.keyNames, a.keys, a.aggs, a.aggMono, a.window = keyNames, keys, aggs, aggMono, window
	return pre, nil
}

// aggNode builds the aggregate over the first Calc: its row is the keys,
// [window_start, window_end, window_time], then the results.
func (a *aggPlan) aggNode(pre *Node) *Node {
	q, s, in := a.q, a.s, a.in
	keys, keyNames, aggs, window, attached, preFields := a.keys, a.keyNames, a.aggs, a.window, a.attached, a.preFields
	var outFields []row.Field
	for i := range keys {
		outFields = append(outFields, preFields[keys[i]])
	}
	var aggTexts []string
	for _, c := range a.calls {
		aggTexts = append(aggTexts, aggText(c))
	}
	agg := &Node{Input: pre, Bounded: in.Bounded, TimeAttr: -1, batch: q.b.plan.Batch}
	keyLabel := strings.Join(keyNames, ", ")
	switch {
	case attached != nil:
		// [keys..., window_start (the last key), window_end, window_time]
		wtype := row.Type{ID: row.Timestamp, Precision: 3, NotNull: true}
		ttype := wtype
		if attached.ltz {
			ttype.ID = row.TimestampLTZ
		}
		outFields = append(outFields,
			row.Field{Name: in.Schema.Fields[attached.end].Name, Type: wtype},
			row.Field{Name: "window_time", Type: ttype})
		agg.Kind = WindowAggNode
		agg.op = &windowAggOp{keys: keys, aggs: aggs, window: window, attached: true, attachedLTZ: attached.ltz, batch: agg.batch, state: a.state}
		agg.TimeAttr = len(keys) + 1
		agg.Mode = windowAggMode(outputKey(len(keys), 1))
		keyLabel = strings.Join(keyNames[:len(keyNames)-1], ", ")
		agg.Label = fmt.Sprintf("WindowAggregate(window=[%s], groupBy=[%s], select=[%s])", flinkWindowText(attached.spec, in.Schema, *attached), keyLabel, strings.Join(aggTexts, ", "))
	case window != nil:
		wtype := row.Type{ID: row.Timestamp, Precision: 3, NotNull: true}
		ttype := row.Type{ID: preFields[window.TimeCol].Type.ID, Precision: 3, NotNull: true}
		outFields = append(outFields,
			row.Field{Name: "window_start", Type: wtype},
			row.Field{Name: "window_end", Type: wtype},
			row.Field{Name: "window_time", Type: ttype})
		agg.Kind = WindowAggNode
		agg.op = &windowAggOp{keys: keys, aggs: aggs, window: window, batch: agg.batch, updating: in.Mode.Updating, state: a.state}
		if !window.ProcTime {
			// A processing-time window's window_time is no event time.
			agg.TimeAttr = len(keys) + 2
		}
		agg.Mode = windowAggMode(outputKey(len(keys), 2))
		agg.Label = fmt.Sprintf("WindowAggregate(window=[%s], groupBy=[%s], select=[%s])", windowText(s.window), keyLabel, strings.Join(aggTexts, ", "))
	default:
		agg.Kind = GroupAggNode
		agg.op = &groupAggOp{keys: keys, aggs: aggs, aggMono: a.aggMono, batch: agg.batch, state: a.state}
		agg.Mode = groupAggMode(len(keys), q.b.plan.Batch)
		agg.Label = fmt.Sprintf("GroupAggregate(groupBy=[%s], select=[%s])", keyLabel, strings.Join(aggTexts, ", "))
	}
	aggNames := make([]string, len(aggs))
	for j, call := range aggs {
		aggNames[j] = fmt.Sprintf("$a%d", j)
		outFields = append(outFields, row.Field{Name: aggNames[j], Type: call.ResultType()})
	}
	agg.Schema = row.NewSchema(outFields...)

	a.aggNames = aggNames
	return agg
}

// outputKey is the key of a window aggregate's row: its n group keys,
// which come first, and the window columns after them that name the
// window (window_start, and window_end unless the rows carry their
// windows).
func outputKey(n, windowCols int) []int {
	key := make([]int, n+windowCols)
	for i := range key {
		key[i] = i
	}
	return key
}

// lastCalc builds the select list and HAVING over the aggregate's row:
// an aggregate call or a group key becomes a reference to its column.
func (a *aggPlan) lastCalc(agg *Node) (*Node, error) {
	q, sel, s, in := a.q, a.sel, a.s, a.in
	keyExprs, keyNames, aggNames, callIndex, calls := a.keyExprs, a.keyNames, a.aggNames, a.callIndex, a.calls
	var err error
	keyText := map[string]string{}
	for i, k := range keyExprs {
		keyText[strings.ToLower(sql.Format(k))] = keyNames[i]
	}
	replace := func(e sql.Expr) sql.Expr {
		return rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
			text := strings.ToLower(sql.Format(x))
			if c, ok := x.(*sql.Call); ok && expr.IsAggregate(c.Name) {
				return &sql.ColumnRef{Column: sql.Ident{At: c.At, Name: aggNames[callIndex[text]], Quoted: true}}, true
			}
			if name, ok := keyText[text]; ok {
				return &sql.ColumnRef{Column: sql.Ident{At: x.Pos(), Name: name, Quoted: true}}, true
			}
			return nil, false
		})
	}
	check := func(e sql.Expr) error {
		var ferr error
		walk(e, func(x sql.Expr) bool {
			if ref, ok := x.(*sql.ColumnRef); ok && ferr == nil && agg.Schema.Index(ref.Column.Name) < 0 {
				if in.Schema.Index(ref.Column.Name) >= 0 {
					ferr = errAt(ref.Pos(), "column %q is neither in the GROUP BY nor inside an aggregate function", ref.Column.Name)
				} else {
					// Said of the input, the table the query names: the
					// aggregate's row has internal names ($a0).
					_, _, err := expr.Table{Name: s.table, Schema: in.Schema}.Resolve("", ref.Column.Name)
					ferr = errAt(ref.Pos(), "%v", err)
				}
			}
			return true
		})
		return ferr
	}
	post := make([]*sql.SelectItem, len(a.items))
	for i, it := range a.items {
		e := replace(it.Expr)
		if err := check(e); err != nil {
			return nil, err
		}
		alias := it.Alias
		if alias.IsZero() {
			if ref, ok := it.Expr.(*sql.ColumnRef); ok {
				alias = ref.Column
			} else {
				alias = sql.Ident{Name: fmt.Sprintf("EXPR$%d", i)}
			}
		}
		post[i] = &sql.SelectItem{Expr: e, Alias: alias}
	}
	aggScope := &scope{node: agg, name: s.name, table: s.table, also: s.also}
	var havingC *expr.Compiled
	if a.having != nil {
		h := replace(a.having)
		if err := check(h); err != nil {
			return nil, err
		}
		if havingC, err = q.compileFilter(h, aggScope, agg.Schema); err != nil {
			return nil, err
		}
	}
	out, err := q.projection(post, aggScope, agg, havingC, sel.Having)
	if err != nil {
		return nil, err
	}
	// Show aggregate calls, not their internal column names, in explain.
	for j, name := range aggNames {
		out.Label = strings.ReplaceAll(out.Label, "`"+name+"`", aggText(calls[j]))
	}
	for i, k := range keyExprs {
		out.Label = strings.ReplaceAll(out.Label, "`"+keyNames[i]+"`", sql.Format(k))
	}
	return out, nil
}

// attachedWindow returns the windows of s's rows when a GROUP BY over
// them is a window aggregate of those windows (Flink's
// WindowAttachedWindowingStrategy): the rows come from a window join,
// aggregate or Top-N that kept window_start and window_end, in streaming
// mode, and the GROUP BY names both columns. It returns nil otherwise:
// the GROUP BY is a regular one.
func (q *queryBuilder) attachedWindow(groupBy []sql.Expr, s *scope) (*windowProps, error) {
	in := s.node
	if s.window != nil || q.b.plan.Batch || in.Mode.Updating {
		return nil, nil
	}
	p, ok := windowPropsOf(in)
	if !ok || p.spec.Kind == windowop.Session {
		return nil, nil
	}
	var hasStart, hasEnd bool
	for _, g := range groupBy {
		g, err := s.unqualify(g)
		if err != nil {
			return nil, err
		}
		if ref, ok := g.(*sql.ColumnRef); ok {
			switch in.Schema.Index(ref.Column.Name) {
			case p.start:
				hasStart = true
			case p.end:
				hasEnd = true
			}
		}
	}
	if !hasStart || !hasEnd {
		return nil, nil
	}
	return &p, nil
}

func windowText(w *sql.WindowTVF) string {
	parts := []string{w.TimeCol.Name}
	if len(w.PartitionBy) > 0 {
		names := make([]string, len(w.PartitionBy))
		for i, p := range w.PartitionBy {
			names[i] = p.Name
		}
		parts = append(parts, "PARTITION BY "+strings.Join(names, ", "))
	}
	for _, e := range []sql.Expr{w.Slide, w.Step, w.Size, w.Offset, w.Gap} {
		if e != nil {
			parts = append(parts, sql.Format(e))
		}
	}
	return fmt.Sprintf("%s(%s)", w.Kind, strings.Join(parts, ", "))
}

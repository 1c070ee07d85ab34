package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/matchop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/sql"
)

// MATCH_RECOGNIZE plans as
//
//	[Calc(input columns, computed arguments)] → Match
//
// The Match emits one row per match: the partition columns, then the
// measures. Its DEFINE conditions and measures are compiled over the
// current row (a measure's: the match's last row) followed by one column
// per value read from the match's rows (a variable's column, FIRST, LAST,
// an aggregate, MATCH_ROWTIME), which the operator computes (matchop.Nav).
// What Flink's planner refuses is refused with its reason.

// matchOp is a MatchNode's spec.
type matchOp struct{ spec *matchop.Spec }

func (m *matchOp) operator(opBuild) (operator.Lifecycle, error) { return matchop.New(*m.spec) }

// matchPlan plans one MATCH_RECOGNIZE.
type matchPlan struct {
	q    *queryBuilder
	m    *sql.MatchRecognize
	in   *Node
	vars []string
	// extra are the computed arguments of navigations and aggregates,
	// appended to the input's columns by a Calc.
	extra      []*expr.Compiled
	extraTexts []string
}

// matchScope plans `input MATCH_RECOGNIZE (...) [AS alias]`.
func (q *queryBuilder) matchScope(m *sql.MatchRecognize) (*scope, error) {
	ins, err := q.from(m.Input)
	if err != nil {
		return nil, err
	}
	if ins.cols != nil || ins.window != nil {
		return nil, errAt(m.At, "MATCH_RECOGNIZE reads a table or a subquery; put a join or a window function in a subquery")
	}
	mp := &matchPlan{q: q, m: m, in: ins.node}
	if err := mp.check(); err != nil {
		return nil, err
	}
	spec := &matchop.Spec{TimeCol: mp.in.TimeAttr, Vars: mp.vars, Batch: q.b.plan.Batch}
	var outFields []row.Field
	var keyTexts []string
	for _, k := range m.PartitionBy {
		c, ok := k.(*sql.ColumnRef)
		i := -1
		if ok && c.Table.IsZero() {
			i = mp.in.Schema.Index(c.Column.Name)
		}
		if i < 0 {
			return nil, errAt(k.Pos(), "PARTITION BY of MATCH_RECOGNIZE takes columns of its input; %s is not one", sql.Format(k))
		}
		spec.Keys = append(spec.Keys, i)
		outFields = append(outFields, mp.in.Schema.Fields[i])
		keyTexts = append(keyTexts, mp.in.Schema.Fields[i].Name)
	}
	if err := mp.order(spec); err != nil {
		return nil, err
	}
	if err := mp.pattern(spec); err != nil {
		return nil, err
	}
	spec.Define = make([]*matchop.Expr, len(mp.vars))
	for _, d := range m.Define {
		v := mp.varIndex(d.Var.Name)
		if v < 0 {
			// Flink ignores the condition of a variable the pattern
			// does not use.
			continue
		}
		e, c, err := mp.compile(d.Cond, v)
		if err != nil {
			return nil, err
		}
		if c.Type.ID != row.Boolean && c.Type.ID != row.Null {
			return nil, errAt(d.Cond.Pos(), "the condition of %s must be BOOLEAN, this one is %s", d.Var.Name, c.Type)
		}
		spec.Define[v] = e
	}
	timeAttr := -1
	var measureNames []string
	for _, it := range m.Measures {
		e, c, err := mp.compile(it.Expr, -1)
		if err != nil {
			return nil, err
		}
		if call, ok := it.Expr.(*sql.Call); ok && strings.EqualFold(call.Name, "MATCH_ROWTIME") && timeAttr < 0 {
			timeAttr = len(outFields)
		}
		if containsName(keyTexts, it.Alias.Name) || containsName(measureNames, it.Alias.Name) {
			return nil, errAt(it.Alias.At, "columns ambiguously defined: {%s} (the output has the partition columns, then the measures)", it.Alias.Name)
		}
		measureNames = append(measureNames, it.Alias.Name)
		spec.Measures = append(spec.Measures, e)
		outFields = append(outFields, row.Field{Name: it.Alias.Name, Type: c.Type})
	}
	if m.Within != nil {
		iv, ok := m.Within.(*sql.IntervalLit)
		if !ok || iv.YearMonth() || iv.Value <= 0 {
			return nil, errAt(m.Within.Pos(), "only constant intervals with millisecond resolution are supported as time constraints of patterns")
		}
		spec.Within = iv.Value.Microseconds()
	}
	pre := mp.preCalc()
	node := &Node{
		Kind: MatchNode, Input: pre, Schema: row.NewSchema(outFields...),
		Mode: Changelog{}, TimeAttr: timeAttr, Bounded: mp.in.Bounded,
		op: &matchOp{spec: spec}, batch: q.b.plan.Batch,
	}
	node.Label = mp.label(keyTexts)
	name := m.Alias.Name
	return &scope{node: node, name: name, table: "MATCH_RECOGNIZE"}, nil
}

func containsName(names []string, n string) bool {
	for _, x := range names {
		if strings.EqualFold(x, n) {
			return true
		}
	}
	return false
}

// check refuses what Flink's planner refuses before it looks at the
// expressions.
func (mp *matchPlan) check() error {
	m, in := mp.m, mp.in
	if in.Mode.Updating {
		return errAt(m.At, "MATCH_RECOGNIZE doesn't support consuming update and delete changes, and its input is updating: it reads append-only tables")
	}
	if m.AllRows {
		return errAt(m.RowsAt, "all rows per match mode is not supported yet (Flink supports ONE ROW PER MATCH only)")
	}
	seen := map[string]bool{}
	for i, t := range m.Pattern.Terms {
		// CEP's Pattern.optional() (`*` and `?`) refuses to follow a
		// greedy variable; {0,m} sets the quantifier without that check.
		if i > 0 && t.Min == 0 && (t.Max == 1 || t.Max == sql.PatternUnbounded) && greedyTerm(m.Pattern.Terms[i-1]) {
			return errAt(t.QuantAt, "optional pattern cannot be preceded by greedy pattern (Flink's CEP rule): %s%s follows the greedy %s%s", t.Var.Name, t.Quant, m.Pattern.Terms[i-1].Var.Name, m.Pattern.Terms[i-1].Quant)
		}
		name := strings.ToUpper(t.Var.Name)
		if seen[name] {
			return errAt(t.Var.At, "pattern variables must be unique (Flink's rule): %s appears twice", t.Var.Name)
		}
		seen[name] = true
		mp.vars = append(mp.vars, t.Var.Name)
		if t.Min == 0 && t.Max != 1 && t.Max != sql.PatternUnbounded {
			// CEP's times(0, m): Flink builds {0,m} as times and Times.of
			// refuses a lower bound of 0.
			return errAt(t.QuantAt, "the from should be a positive number greater than 0 (Flink runs %s%s as times(0, %d), which it refuses): write %s{1,%d} or make the variable optional with ?", t.Var.Name, t.Quant, t.Max, t.Var.Name, t.Max)
		}
		if t.Reluctant && t.Min == 0 && t.Max == 1 {
			return errAt(t.QuantAt, "reluctant optional variables are not supported yet (Flink supports the greedy ? only)")
		}
	}
	empty := true
	for _, t := range m.Pattern.Terms {
		empty = empty && t.Min == 0
	}
	if empty {
		return errAt(m.Pattern.At, "patterns that can produce empty matches are not supported: there must be at least one non-optional state")
	}
	if last := m.Pattern.Terms[len(m.Pattern.Terms)-1]; greedyTerm(last) {
		return errAt(last.QuantAt, "greedy quantifiers are not allowed as the last element of a pattern yet: finish the pattern with either a simple variable or a reluctant quantifier")
	}
	return nil
}

// greedyTerm reports whether Flink's planner makes a variable greedy: a
// greedy quantifier that is neither `?` nor of a fixed count.
func greedyTerm(t *sql.PatternTerm) bool {
	return !t.Reluctant && !(t.Min == 0 && t.Max == 1) && t.Min != t.Max
}

func (mp *matchPlan) varIndex(name string) int {
	for i, v := range mp.vars {
		if strings.EqualFold(v, name) {
			return i
		}
	}
	return -1
}

// order checks ORDER BY: the event-time attribute ascending first, then
// columns.
func (mp *matchPlan) order(spec *matchop.Spec) error {
	m, in := mp.m, mp.in
	first := m.OrderBy[0]
	c, ok := first.X.(*sql.ColumnRef)
	if !ok || !c.Table.IsZero() || in.TimeAttr < 0 || !strings.EqualFold(c.Column.Name, in.Schema.Fields[in.TimeAttr].Name) {
		hint := "the input has no event-time attribute: declare `watermark:` on its source"
		if in.TimeAttr >= 0 {
			hint = fmt.Sprintf("the input's is %s", in.Schema.Fields[in.TimeAttr].Name)
		}
		return errAt(first.X.Pos(), "you must specify either rowtime or proctime for order by as the first one: MATCH_RECOGNIZE orders by an event-time attribute first (%s)", hint)
	}
	if first.Desc {
		return errAt(first.X.Pos(), "primary sort order of a streaming table must be ascending on time")
	}
	for _, o := range m.OrderBy[1:] {
		c, ok := o.X.(*sql.ColumnRef)
		i := -1
		if ok && c.Table.IsZero() {
			i = in.Schema.Index(c.Column.Name)
		}
		if i < 0 {
			return errAt(o.X.Pos(), "ORDER BY of MATCH_RECOGNIZE takes columns of its input; %s is not one", sql.Format(o.X))
		}
		spec.Order = append(spec.Order, matchop.OrderKey{Col: i, Desc: o.Desc})
	}
	return nil
}

// pattern sets the terms and the skip strategy.
func (mp *matchPlan) pattern(spec *matchop.Spec) error {
	m := mp.m
	for i, t := range m.Pattern.Terms {
		max := t.Max
		if max == sql.PatternUnbounded {
			max = matchop.Unbounded
		}
		if max == 0 {
			return errAt(t.QuantAt, "the quantifier of %s allows no row", t.Var.Name)
		}
		spec.Terms = append(spec.Terms, matchop.Term{Var: i, Min: t.Min, Max: max, Greedy: !t.Reluctant})
	}
	switch m.Skip {
	case sql.SkipPastLastRow:
		spec.Skip = matchop.SkipPastLastRow
	case sql.SkipToFirst, sql.SkipToLast:
		spec.Skip = matchop.SkipToFirst
		if m.Skip == sql.SkipToLast {
			spec.Skip = matchop.SkipToLast
		}
		if spec.SkipVar = mp.varIndex(m.SkipVar.Name); spec.SkipVar < 0 {
			return errAt(m.SkipVar.At, "AFTER MATCH SKIP TO names %s, which is not a variable of the PATTERN", m.SkipVar.Name)
		}
	default:
		spec.Skip = matchop.SkipToNextRow
	}
	return nil
}

// preCalc is the Calc that appends the computed arguments, or the input
// itself when there are none.
func (mp *matchPlan) preCalc() *Node {
	in := mp.in
	if len(mp.extra) == 0 {
		return in
	}
	fields := append([]row.Field(nil), in.Schema.Fields...)
	var project []*expr.Compiled
	var texts []string
	for i, f := range in.Schema.Fields {
		project = append(project, &expr.Compiled{Type: f.Type, IsColumn: true, Column: i, Reads: []int{i}, Eval: colEval(i)})
		texts = append(texts, f.Name)
	}
	for i, c := range mp.extra {
		fields = append(fields, row.Field{Name: fmt.Sprintf("$m%d", i), Type: c.Type})
		project = append(project, c)
		texts = append(texts, mp.extraTexts[i])
	}
	return &Node{
		Kind: CalcNode, Input: in, Schema: row.NewSchema(fields...), TimeAttr: in.TimeAttr, Bounded: in.Bounded,
		op: &calcOp{project: project}, Label: fmt.Sprintf("Calc(select=[%s])", strings.Join(texts, ", ")),
	}
}

func colEval(i int) func(row.Row) (row.Value, error) {
	return func(r row.Row) (row.Value, error) { return r[i], nil }
}

// label is Flink's explain text of the Match.
func (mp *matchPlan) label(keys []string) string {
	m := mp.m
	var b strings.Builder
	b.WriteString("Match(")
	if len(keys) > 0 {
		fmt.Fprintf(&b, "partitionBy=[%s], ", strings.Join(keys, ", "))
	}
	var order []string
	for _, o := range m.OrderBy {
		dir := " ASC"
		if o.Desc {
			dir = " DESC"
		}
		order = append(order, sql.Format(o.X)+dir)
	}
	var measures, define, pattern []string
	for _, it := range m.Measures {
		measures = append(measures, sql.Format(it.Expr)+" AS "+it.Alias.Name)
	}
	for _, t := range m.Pattern.Terms {
		pattern = append(pattern, t.Var.Name+t.Quant)
	}
	for _, d := range m.Define {
		define = append(define, d.Var.Name+"="+sql.Format(d.Cond))
	}
	fmt.Fprintf(&b, "orderBy=[%s], measures=[%s], rowsPerMatch=[ONE ROW PER MATCH], after=[%s", strings.Join(order, ", "), strings.Join(measures, ", "), m.Skip)
	if m.Skip == sql.SkipToFirst || m.Skip == sql.SkipToLast {
		b.WriteString(" " + m.SkipVar.Name)
	}
	fmt.Fprintf(&b, "], pattern=[%s]", strings.Join(pattern, " "))
	if m.Within != nil {
		fmt.Fprintf(&b, ", within=[%s]", sql.Format(m.Within))
	}
	fmt.Fprintf(&b, ", define=[%s])", strings.Join(define, ", "))
	return b.String()
}

package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/windowop"
	"github.com/etld/etld/pipeline/spec"
	"github.com/etld/etld/pipeline/sql"
)

// queryBuilder plans one transform's query.
type queryBuilder struct {
	b   *builder
	env *cteEnv // the WITH queries in scope
	// commaWhere is the WHERE of a SELECT over a chain of comma joins
	// while its FROM is planned: the inner ones take their conditions
	// from it (join.go).
	commaWhere sql.Expr
	// top is the transform's query: its ORDER BY without a row count
	// sorts (order_sort.go), a subquery's is dropped.
	top *sql.Query
}

func errAt(p sql.Pos, format string, args ...any) error {
	return &sql.Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// scope is what a SELECT's expressions can name: one input table.
type scope struct {
	node  *Node
	name  string // the table name or alias
	table string // the table's own name, for messages
	// window and windowSpec are set when FROM is a window TVF: node is
	// then the table the window reads, and the aggregate applies it.
	window     *sql.WindowTVF
	windowSpec *windowop.WindowSpec
	// also holds further qualifiers the columns may be named by: the
	// input's names and the alias of a CROSS JOIN UNNEST (unnest.go).
	also []string
	// cols, for a join, are the columns of all its tables (join.go).
	cols []scopeCol
}

// reads names the scope's tables for a message: a subquery with no
// alias has no name to qualify its columns by, so it is described.
func (s *scope) reads() string {
	names := strings.Split(s.name, ", ")
	for i, n := range names {
		if n == "" {
			names[i] = "a subquery with no alias (give it one: FROM (SELECT ...) AS x)"
		}
	}
	return strings.Join(names, ", ")
}

// knows reports whether qualifier names the scope's table.
func (s *scope) knows(qualifier string) bool {
	if s.cols != nil {
		return s.knowsJoined(qualifier)
	}
	if strings.EqualFold(qualifier, s.name) || strings.EqualFold(qualifier, s.table) {
		return true
	}
	for _, a := range s.also {
		if strings.EqualFold(qualifier, a) {
			return true
		}
	}
	return false
}

// from plans a FROM item.
func (q *queryBuilder) from(f sql.FromItem) (*scope, error) {
	switch f := f.(type) {
	case *sql.TableRef:
		if f.AsOf != nil {
			return nil, errAt(f.AsOfAt, "FOR SYSTEM_TIME AS OF is only supported on the right side of a JOIN (a temporal or lookup join)")
		}
		root, table, err := q.named(f.Name)
		if err != nil {
			return nil, err
		}
		name := table
		if !f.Alias.IsZero() {
			name = f.Alias.Name
		}
		return &scope{node: root, name: name, table: table}, nil
	case *sql.SubqueryRef:
		n, err := q.query(f.Query)
		if err != nil {
			return nil, err
		}
		return &scope{node: n, name: f.Alias.Name, table: "subquery"}, nil
	case *sql.WindowTVF:
		return q.windowScope(f)
	case *sql.Unnest:
		return q.unnestScope(f)
	case *sql.LateralTable:
		return q.lateralScope(f)
	case *sql.Values:
		return valuesScope(q.zone(), f)
	case *sql.Join:
		return q.joinScope(f)
	case *sql.MatchRecognize:
		return q.matchScope(f)
	}
	return nil, fmt.Errorf("unsupported FROM item %T", f)
}

// named plans a table name: a WITH query in scope, else a source or
// transform. It returns the table's plan and its name.
func (q *queryBuilder) named(id sql.Ident) (*Node, string, error) {
	if c := q.env.find(id.Name); c != nil {
		n, err := q.cte(c)
		return n, id.Name, err
	}
	tab, err := q.b.table(id.Name, id.At)
	if err != nil {
		return nil, "", err
	}
	return tab.Root, tab.Name, nil
}

// windowScope plans the table of a window TVF: its columns plus
// window_start, window_end and window_time. The window itself is applied
// by the aggregate that must follow.
func (q *queryBuilder) windowScope(w *sql.WindowTVF) (*scope, error) {
	in, tabName, err := q.named(w.Table)
	if err != nil {
		return nil, err
	}
	spec, err := q.windowSpec(w, in, tabName)
	if err != nil {
		return nil, err
	}
	name := tabName
	if !w.Alias.IsZero() {
		name = w.Alias.Name
	}
	return &scope{node: in, name: name, table: tabName, window: w, windowSpec: spec}, nil
}

// windowSpec checks window w over the table in (named tabName) and
// returns its spec: the time column must be in's event-time attribute
// or a processing-time attribute (a PROCTIME() column, procTimeCol), the
// sizes positive interval literals.
func (q *queryBuilder) windowSpec(w *sql.WindowTVF, in *Node, tabName string) (*windowop.WindowSpec, error) {
	var err error
	col := in.Schema.Index(w.TimeCol.Name)
	if col < 0 {
		return nil, errAt(w.TimeCol.At, "column %q not found in table %s%s", w.TimeCol.Name, tabName, suggest(w.TimeCol.Name, in.Schema.Names()))
	}
	proc := col != in.TimeAttr && procTimeCol(in, col)
	if proc {
		if err := procWindowAllowed(w, q.b.plan.Batch); err != nil {
			return nil, err
		}
	}
	if col != in.TimeAttr && !proc {
		switch {
		case in.TimeAttr >= 0:
			// A transform keeps one time attribute (a join keeps its left
			// side's): name it rather than advise a watermark.
			return nil, errAt(w.TimeCol.At, "%s needs a time attribute, and %q is not one of %s: its event-time attribute is %q, and a processing-time attribute is a PROCTIME() column", w.Kind, w.TimeCol.Name, tabName, in.Schema.Fields[in.TimeAttr].Name)
		case in.Kind == ScanNode:
			return nil, errAt(w.TimeCol.At, "%s needs a time attribute, and %q is not one: declare `watermark:` on the source for it (e.g. `watermark: %s - INTERVAL '5' SECOND`), or window on a PROCTIME() column", w.Kind, w.TimeCol.Name, w.TimeCol.Name)
		default:
			return nil, errAt(w.TimeCol.At, "%s needs a time attribute, and %s has none: select its source's watermark column or a PROCTIME() column unchanged in the transform (a computed or aggregated column is not one; a join keeps at most one input's)", w.Kind, tabName)
		}
	}
	// A changelog only in a streaming TUMBLE, HOP or CUMULATE aggregate
	// on event time, as Flink's (windowTable, group windows refuse it).
	if in.Mode.Updating && (proc || q.b.plan.Batch || w.Kind == sql.Session) {
		return nil, updatingWindowErr(w, tabName)
	}
	spec := &windowop.WindowSpec{TimeCol: col, ProcTime: proc}
	dur := func(e sql.Expr, what string) (int64, error) {
		if e == nil {
			return 0, nil
		}
		iv, ok := e.(*sql.IntervalLit)
		if !ok || iv.Value <= 0 && what != "offset" {
			return 0, errAt(e.Pos(), "the window %s must be a positive interval literal such as INTERVAL '1' MINUTE", what)
		}
		return iv.Value.Microseconds(), nil
	}
	if spec.Size, err = dur(w.Size, "size"); err != nil {
		return nil, err
	}
	if spec.Offset, err = dur(w.Offset, "offset"); err != nil {
		return nil, err
	}
	switch w.Kind {
	case sql.Tumble:
		spec.Kind = windowop.Tumble
	case sql.Hop:
		spec.Kind = windowop.Hop
		if spec.Slide, err = dur(w.Slide, "slide"); err != nil {
			return nil, err
		}
		if spec.Size%spec.Slide != 0 {
			return nil, errAt(w.Size.Pos(), "the HOP size must be a whole multiple of its slide")
		}
	case sql.Session:
		spec.Kind = windowop.Session
		if spec.Gap, err = dur(w.Gap, "gap"); err != nil {
			return nil, err
		}
		for _, p := range w.PartitionBy {
			if in.Schema.Index(p.Name) < 0 {
				return nil, errAt(p.At, "column %q not found in table %s%s", p.Name, tabName, suggest(p.Name, in.Schema.Names()))
			}
		}
	case sql.Cumulate:
		spec.Kind = windowop.Cumulate
		if spec.Step, err = dur(w.Step, "step"); err != nil {
			return nil, err
		}
		if spec.Size%spec.Step != 0 {
			return nil, errAt(w.Size.Pos(), "the CUMULATE size must be a whole multiple of its step")
		}
	}
	if err := windowsPerRow(w, spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// maxWindowsPerRow bounds the windows a HOP or CUMULATE puts each row in
// (size / slide, size / step). Each of them is emitted for every key that
// has rows in it, so one row makes that many output rows, and a HOP
// window merges its size / slide slices when it fires: the work of a
// burst of rows grows with the square of the ratio. At 10,000, 20 rows
// over 3 keys take 0.65 s; HOP(1 s, 1 DAY) (86,400) takes 135 s, and
// HOP(1 s, 365 DAY) holds 920 MB of window ends for 20 rows and does not
// end. Flink has no such limit (its windows cost the same).
const maxWindowsPerRow = 10_000

// windowsPerRow refuses a HOP or CUMULATE whose size / slide (step) ratio
// passes maxWindowsPerRow, at its slide (step).
func windowsPerRow(w *sql.WindowTVF, spec *windowop.WindowSpec) error {
	div, at, what := spec.Slide, w.Slide, "slide"
	if spec.Kind == windowop.Cumulate {
		div, at, what = spec.Step, w.Step, "step"
	}
	if spec.Kind != windowop.Hop && spec.Kind != windowop.Cumulate || div <= 0 || spec.Size/div <= maxWindowsPerRow {
		return nil
	}
	n := spec.Size / div
	merge := ""
	if spec.Kind == windowop.Hop {
		merge = fmt.Sprintf(", and a window merges its %d slices when it fires (HOP(1 s, 1 DAY) takes minutes for 20 rows)", n)
	}
	return errAt(at.Pos(), "%s(%s, %s) puts each row in %d windows (size / %s); etld refuses more than %d: each window is emitted for every key with rows in it, so one row makes up to %d output rows%s. Flink has no such limit. Use a larger %s or a smaller size",
		w.Kind, flinkDuration(div), flinkDuration(spec.Size), n, what, maxWindowsPerRow, n, merge, what)
}

func suggest(name string, names []string) string {
	if c := spec.Closest(name, names); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

// unqualify drops qualifiers that name the scope's table and refuses
// others.
func (s *scope) unqualify(e sql.Expr) (sql.Expr, error) {
	if s.cols != nil {
		return s.unqualifyJoined(e)
	}
	var bad error
	out := rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
		c, ok := x.(*sql.ColumnRef)
		if !ok || c.Table.IsZero() {
			return nil, false
		}
		if !s.knows(c.Table.Name) {
			if s.node != nil && s.node.Schema.Index(c.Table.Name) >= 0 {
				// r.f: field f of the ROW column r (expr resolves it).
				return x, true
			}
			if bad == nil {
				bad = errAt(c.Table.At, "unknown table %q: this query reads %s", c.Table.Name, s.reads())
			}
			return x, true
		}
		return &sql.ColumnRef{Column: c.Column}, true
	})
	return out, bad
}

func (q *queryBuilder) compile(e sql.Expr, s *scope, schema row.Schema) (*expr.Compiled, error) {
	e, err := s.unqualify(e)
	if err != nil {
		return nil, err
	}
	c, err := compileCalcExpr(q.zone(), e, schema, s.table)
	if err != nil || c.WatermarkOf == nil {
		return c, err
	}
	if q.b.plan.Batch {
		// No rowtime attributes in batch mode, as in Flink, which
		// refuses the call there.
		return nil, errAt(watermarkCall(e), "CURRENT_WATERMARK needs an event-time attribute, and a batch pipeline has none (no watermarks): it runs in streaming mode only")
	}
	for _, col := range c.WatermarkOf {
		if s.node == nil || col != s.node.TimeAttr {
			return nil, watermarkNotRowtime(e)
		}
	}
	return c, nil
}

func (q *queryBuilder) selectBlock(sel *sql.Select) (*Node, error) {
	sel = q.markUserAggregates(sel)
	s, sel, err := q.selectFrom(sel)
	if err != nil {
		return nil, err
	}
	if sel, err = q.groupWindow(sel, s); err != nil {
		return nil, err
	}
	aggregated := len(sel.GroupBy) > 0 || containsAgg(sel.Having)
	for _, it := range sel.Items {
		aggregated = aggregated || containsAgg(it.Expr)
	}
	if sel, err = q.scalarSubqueries(sel, s, aggregated); err != nil {
		return nil, err
	}
	if sel, err = q.userScalars(sel, s, aggregated); err != nil {
		return nil, err
	}
	if sel.Where != nil && containsAgg(sel.Where) {
		var at sql.Pos
		walk(sel.Where, func(x sql.Expr) bool {
			if c, ok := x.(*sql.Call); ok && expr.IsAggregate(c.Name) && at.Line == 0 {
				at = c.At
			}
			return true
		})
		return nil, errAt(at, "aggregate functions are not allowed in WHERE; use HAVING")
	}
	if overs := overCalls(sel.Items); len(overs) > 0 {
		return q.overAggregate(sel, s, overs)
	}
	if aggregated {
		return q.aggregate(sel, s)
	}
	if s.window != nil {
		// A window TVF read as a table (Flink's WindowTableFunction):
		// each row once per window holding it, with the window columns.
		var err error
		if s, err = q.windowTable(s); err != nil {
			return nil, err
		}
	}
	if sel.Having != nil {
		return nil, errAt(sel.Having.Pos(), "HAVING needs GROUP BY or an aggregate")
	}
	var filter *expr.Compiled
	where := sel.Where
	if where != nil {
		if where, err = q.pushJoinFilters(s, where); err != nil {
			return nil, err
		}
	}
	if where != nil {
		if filter, err = q.compileFilter(where, s, s.node.Schema); err != nil {
			return nil, err
		}
	}
	calc, err := q.projection(sel.Items, s, s.node, filter, where)
	if err != nil {
		return nil, err
	}
	if sel.Distinct {
		return q.distinct(calc), nil
	}
	return calc, nil
}

func (q *queryBuilder) compileFilter(e sql.Expr, s *scope, schema row.Schema) (*expr.Compiled, error) {
	c, err := q.compile(e, s, schema)
	if err != nil {
		return nil, err
	}
	if c.Type.ID != row.Boolean && c.Type.ID != row.Null {
		return nil, errAt(e.Pos(), "a condition must be BOOLEAN, this one is %s", c.Type)
	}
	return c, nil
}

// projection plans the SELECT list over in (with an optional filter) as a
// Calc node.
func (q *queryBuilder) projection(items []*sql.SelectItem, s *scope, in *Node, filter *expr.Compiled, where sql.Expr) (*Node, error) {
	p := newProjector(in, len(items))
	p.zone = q.zone()
	for i, it := range items {
		var err error
		if star, ok := it.Expr.(*sql.Star); ok {
			err = p.star(star, s)
		} else {
			err = p.item(q, i, it, s)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(p.fields) != in.Schema.Len() {
		p.identity = false
	}
	n := &Node{
		Kind: CalcNode, Input: in, Schema: row.NewSchema(p.fields...),
		Mode: calcMode(in.Mode, p.colMap), TimeAttr: p.timeAttr, Bounded: in.Bounded, Renamed: p.renamed,
	}
	c := &calcOp{filter: filter, colSrc: p.colSrc, proc: p.proc}
	if !p.identity {
		c.project = p.project
	}
	n.op = c
	cond := ""
	if where != nil {
		cond = ", where=[" + sql.Format(where) + "]"
	}
	n.Label = fmt.Sprintf("Calc(select=[%s]%s)", strings.Join(aliased(p.texts, p.fields), ", "), cond)
	return n, nil
}

// projector gathers a Calc's output columns: their fields, expressions
// and texts, which input column each copies (colSrc, colMap), where the
// time attribute lands, and whether the Calc passes its input as it is
// (identity).
type projector struct {
	in       *Node
	zone     *time.Location // the session zone (compileExpr)
	fields   []row.Field
	project  []*expr.Compiled
	texts    []string
	colMap   []int  // each input column's first output column, -1 for none
	colSrc   []int  // each output column's input column, -1 when computed
	proc     []bool // each output column is a bare PROCTIME() call
	identity bool
	timeAttr int
	names    map[string]bool
	renamed  bool
}

func newProjector(in *Node, items int) *projector {
	p := &projector{in: in, colMap: make([]int, in.Schema.Len()), identity: true, timeAttr: -1, names: make(map[string]bool, items)}
	for i := range p.colMap {
		p.colMap[i] = -1
	}
	return p
}

// unique returns name, or when a column of that name is already in the
// list, the first of name0, name1, ... that is not: Calcite's
// uniquifying of a select list (SqlValidatorUtil.uniquify with its
// EXPR_SUGGESTER), so `SELECT o.id, c.id` has the columns id and id0 as
// a Flink query's result has. Flink numbers only the final result; a
// FROM subquery keeps the repeated name there, which an outer reference
// finds ambiguous. Names are compared ignoring case, as etld resolves
// them.
func (p *projector) unique(name string) string {
	u := uniquify(name, p.names)
	p.renamed = p.renamed || u != name
	return u
}

// uniquify returns name or its first free variant name0, name1, ...
// and marks it used in used (keys in lower case).
func uniquify(name string, used map[string]bool) string {
	if key := strings.ToLower(name); !used[key] {
		used[key] = true
		return name
	}
	for j := 0; ; j++ {
		alt := fmt.Sprintf("%s%d", name, j)
		if key := strings.ToLower(alt); !used[key] {
			used[key] = true
			return alt
		}
	}
}

func (p *projector) add(name string, c *expr.Compiled, srcCol int, text string) {
	p.colSrc = append(p.colSrc, srcCol)
	p.proc = append(p.proc, false)
	if srcCol >= 0 && p.colMap[srcCol] < 0 {
		p.colMap[srcCol] = len(p.fields)
	}
	if srcCol >= 0 && srcCol == p.in.TimeAttr && p.timeAttr < 0 {
		p.timeAttr = len(p.fields)
	}
	if srcCol != len(p.fields) {
		p.identity = false
	}
	p.fields = append(p.fields, row.Field{Name: name, Type: c.Type})
	p.project = append(p.project, c)
	p.texts = append(p.texts, text)
}

// item adds the column of select item i, named by its alias, the column
// it reads or the field it accesses, or else EXPR$i.
func (p *projector) item(q *queryBuilder, i int, it *sql.SelectItem, s *scope) error {
	in := p.in
	c, err := q.compile(it.Expr, s, in.Schema)
	if err != nil {
		return err
	}
	src := -1
	name := it.Alias.Name
	switch ref := it.Expr.(type) {
	case *sql.ColumnRef:
		if s.cols != nil {
			src, _ = s.resolve(ref)
			if name == "" && src >= 0 {
				name = ref.Column.Name
			}
			break
		}
		if !ref.Table.IsZero() && !s.knows(ref.Table.Name) {
			// r.f, a field of the ROW column r: named as the field,
			// as Flink does.
			if name == "" {
				name = ref.Column.Name
			}
			break
		}
		src = in.Schema.Index(ref.Column.Name)
		if name == "" && src >= 0 {
			name = in.Schema.Fields[src].Name
		}
	case *sql.FieldAccess:
		if name == "" {
			name = ref.Field.Name
		}
	}
	if name == "" {
		name = fmt.Sprintf("EXPR$%d", i)
	}
	p.add(p.unique(name), c, src, sql.Format(it.Expr))
	if call, ok := it.Expr.(*sql.Call); ok && strings.EqualFold(call.Name, "PROCTIME") && len(call.Args) == 0 {
		p.proc[len(p.proc)-1] = true
	}
	return nil
}

func aliased(texts []string, fields []row.Field) []string {
	out := make([]string, len(texts))
	for i, t := range texts {
		if strings.EqualFold(t, fields[i].Name) {
			out[i] = t
		} else {
			out[i] = t + " AS " + fields[i].Name
		}
	}
	return out
}

// distinct plans SELECT DISTINCT over n.
func (q *queryBuilder) distinct(n *Node) *Node {
	keys := make([]int, n.Schema.Len())
	for i := range keys {
		keys[i] = i
	}
	d := &Node{
		Kind: DistinctNode, Input: n, Schema: n.Schema, TimeAttr: -1, Bounded: n.Bounded,
		Mode: distinctMode(n.Schema.Len(), n.Mode.Updating, q.b.plan.Batch), op: &distinctOp{keys: keys, batch: q.b.plan.Batch}, batch: q.b.plan.Batch,
	}
	d.Label = fmt.Sprintf("Distinct(%s)", strings.Join(n.Schema.Names(), ", "))
	return d
}

func containsAgg(e sql.Expr) bool {
	found := false
	if e == nil {
		return false
	}
	walk(e, func(x sql.Expr) bool {
		if c, ok := x.(*sql.Call); ok && expr.IsAggregate(c.Name) {
			found = true
		}
		return !found
	})
	return found
}

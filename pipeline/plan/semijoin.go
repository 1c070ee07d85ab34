package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/sql"
)

// subqueryQualifier names a subquery's columns in the condition of the
// semi join made of `x IN (subquery)`; no SQL text can name it.
const subqueryQualifier = "$subquery"

// subqueryJoins turns the conjuncts of sel's WHERE that are
// `x [NOT] IN (query)`, `EXISTS (query)` or `NOT EXISTS (query)` into
// semi and anti joins of s (Flink's SubQueryRemoveRule), and returns sel
// with the rest of its WHERE.
func (q *queryBuilder) subqueryJoins(s *scope, sel *sql.Select) (*sql.Select, error) {
	if sel.Where == nil {
		return sel, nil
	}
	var rest []sql.Expr
	changed := false
	for _, c := range conjuncts(sel.Where) {
		var err error
		switch x := c.(type) {
		case *sql.InQuery:
			err = q.inJoin(s, x)
		case *sql.Exists:
			err = q.existsJoin(s, x, false)
		case *sql.Unary:
			if e, ok := x.X.(*sql.Exists); ok && x.Op == sql.OpNot {
				err = q.existsJoin(s, e, true)
				break
			}
			rest = append(rest, c)
			continue
		default:
			rest = append(rest, c)
			continue
		}
		if err != nil {
			return nil, err
		}
		changed = true
	}
	if !changed {
		return sel, nil
	}
	cp := *sel
	cp.Where = andAll(rest)
	return &cp, nil
}

// inJoin plans `x [NOT] IN (query)` as a semi (anti) join on x = the
// query's one column; NOT IN follows SQL's NULL rule (null-aware).
func (q *queryBuilder) inJoin(s *scope, in *sql.InQuery) error {
	if ok, err := q.correlatedIn(s, in); ok || err != nil {
		return err
	}
	sub, err := q.query(in.Query)
	if err != nil {
		return err
	}
	// `(a, b) IN (SELECT x, y ...)` compares a row of values with the
	// query's columns, one by one.
	xs := []sql.Expr{in.X}
	if row, ok := in.X.(*sql.Call); ok && row.Name == "ROW" && len(row.Args) > 1 {
		if in.Not {
			return errAt(in.At, "NOT IN with a row of values is not supported yet (Flink runs it as a null-aware anti join on every column); write NOT EXISTS with the equalities")
		}
		xs = row.Args
	}
	if sub.Schema.Len() != len(xs) {
		if len(xs) > 1 {
			return errAt(in.Query.Pos(), "the query of IN must select %d columns, one for each value of the row before IN, this one selects %d (%s)", len(xs), sub.Schema.Len(), strings.Join(sub.Schema.Names(), ", "))
		}
		return errAt(in.Query.Pos(), "the query of IN must select one column, this one selects %d (%s)", sub.Schema.Len(), strings.Join(sub.Schema.Names(), ", "))
	}
	subScope := &scope{node: sub, name: subqueryQualifier, table: "subquery"}
	var cond sql.Expr
	for i, x := range xs {
		eq := &sql.Binary{OpAt: in.At, Op: sql.OpEq, L: x,
			R: &sql.ColumnRef{Table: sql.Ident{Name: subqueryQualifier}, Column: sql.Ident{At: in.At, Name: sub.Schema.Fields[i].Name, Quoted: true}}}
		if cond == nil {
			cond = eq
		} else {
			cond = &sql.Binary{OpAt: in.At, Op: sql.OpAnd, L: cond, R: eq}
		}
	}
	kind := joinop.SemiJoin
	if in.Not {
		kind = joinop.AntiJoin
	}
	return q.semiJoin(s, subScope, cond, kind, in.Not, false)
}

// correlatedIn plans `x [NOT] IN (SELECT c FROM t WHERE cond)` whose
// cond names the outer table (as Flink's window semi joins do) as the
// semi (anti) join of s with t on `x = c AND cond`. It reports false when
// the subquery does not name the outer table.
func (q *queryBuilder) correlatedIn(s *scope, in *sql.InQuery) (bool, error) {
	qu := in.Query
	if len(qu.Selects) != 1 || len(qu.With) > 0 {
		return false, nil
	}
	inner := qu.Selects[0]
	if inner.Where == nil || len(inner.Items) != 1 {
		return false, nil
	}
	outer := false
	walk(inner.Where, func(x sql.Expr) bool {
		if c, ok := x.(*sql.ColumnRef); ok && !c.Table.IsZero() && s.knows(c.Table.Name) {
			outer = true
		}
		return !outer
	})
	is, err := q.from(inner.From)
	if err != nil {
		return true, err
	}
	// An unqualified name the subquery's table lacks and the outer table
	// has is the outer table's column, as SQL scopes names.
	if !outer && !namesOuter(inner.Where, s, is) {
		return false, nil
	}
	if len(inner.GroupBy) > 0 || inner.Having != nil || inner.Distinct {
		return true, errAt(in.At, "a correlated IN over GROUP BY, HAVING or DISTINCT is not supported")
	}
	col, ok := inner.Items[0].Expr.(*sql.ColumnRef)
	x, xok := in.X.(*sql.ColumnRef)
	if !ok || !xok {
		return true, errAt(in.At, "a correlated IN compares a column with the column its subquery selects (x IN (SELECT c FROM t WHERE ...))")
	}
	// Qualify both sides: in the join scope an unqualified name the two
	// tables share means the subquery's.
	if col.Table.IsZero() {
		col = &sql.ColumnRef{Table: sql.Ident{Name: is.name}, Column: col.Column}
	}
	if x.Table.IsZero() {
		x = &sql.ColumnRef{Table: sql.Ident{Name: s.name}, Column: x.Column}
	}
	cond := andAll([]sql.Expr{&sql.Binary{OpAt: in.At, Op: sql.OpEq, L: x, R: col}, inner.Where})
	kind := joinop.SemiJoin
	if in.Not {
		kind = joinop.AntiJoin
	}
	if err := q.semiJoin(s, is, cond, kind, in.Not, true); err != nil {
		return true, err
	}
	if in.Not {
		// SQL's NULL rule is kept on x = c alone, which the window join
		// (its only key besides the window) applies; a regular anti
		// join's null-aware state covers one key without correlation.
		if wj := s.node.windowJoin(); wj == nil || len(wj.LeftKeys) != 1 {
			return true, errAt(in.At, "a correlated NOT IN is supported as a window anti join only (correlated on window_start and window_end, with no other equality): write NOT EXISTS (SELECT ... WHERE x = c AND ...) instead, which has no NULL rule")
		}
	}
	return true, nil
}

// namesOuter reports whether e names, unqualified, a column that the
// subquery's scope is lacks and the outer scope s has.
func namesOuter(e sql.Expr, s, is *scope) bool {
	has := func(sc *scope, name string) bool {
		if sc.cols != nil {
			return slices.ContainsFunc(sc.cols, func(c scopeCol) bool { return strings.EqualFold(c.name, name) })
		}
		return sc.node.Schema.Index(name) >= 0
	}
	found := false
	walk(e, func(x sql.Expr) bool {
		if c, ok := x.(*sql.ColumnRef); ok && c.Table.IsZero() && !has(is, c.Column.Name) && has(s, c.Column.Name) {
			found = true
		}
		return !found
	})
	return found
}

// existsJoin plans `[NOT] EXISTS (SELECT ... FROM t WHERE cond)`: a semi
// (anti) join of s with t on cond, which names columns of both.
func (q *queryBuilder) existsJoin(s *scope, e *sql.Exists, not bool) error {
	qu := e.Query
	if len(qu.Selects) != 1 || len(qu.With) > 0 {
		return errAt(e.At, "EXISTS supports one SELECT ... FROM ... WHERE ... without UNION or WITH")
	}
	inner := qu.Selects[0]
	if len(inner.GroupBy) > 0 || inner.Having != nil || inner.Distinct {
		return errAt(e.At, "EXISTS over GROUP BY, HAVING or DISTINCT is not supported; EXISTS only asks whether a row exists")
	}
	if inner.Where == nil {
		return errAt(e.At, "EXISTS without a WHERE relating the subquery to the outer table is not supported: write the condition (WHERE t.k = outer.k)")
	}
	is, err := q.from(inner.From)
	if err != nil {
		return err
	}
	kind := joinop.SemiJoin
	if not {
		kind = joinop.AntiJoin
	}
	return q.semiJoin(s, is, inner.Where, kind, false, true)
}

// semiJoin replaces s's node by its semi (anti) join with r on cond.
// With correlated, r's columns take an unqualified name both have.
func (q *queryBuilder) semiJoin(s *scope, r *scope, cond sql.Expr, kind joinop.JoinKind, nullAware, correlated bool) error {
	// A window TVF read directly (FROM TABLE(TUMBLE(...)) R) is read as
	// a table with its window columns, as joinScope reads a joined one:
	// else R.window_start names no column, and the window semi join of
	// Flink's WindowJoinITCase is refused. The outer table's TVF is read
	// so only when the condition names its window columns, so that an
	// aggregate after the semi join stays a window aggregate.
	if r.window != nil {
		ws, err := q.windowTable(r)
		if err != nil {
			return err
		}
		r = ws
	}
	if s.window != nil && namesWindowColumn(cond) {
		ws, err := q.windowTable(s)
		if err != nil {
			return err
		}
		*s = *ws
	}
	left, right := s.node, r.node
	lw := left.Schema.Len()
	rcols := r.tableCols(lw)
	for i := range rcols {
		rcols[i].inner = correlated
		rcols[i].hidden = !correlated
	}
	cols := append(s.tableCols(0), rcols...)
	fields := make([]row.Field, 0, lw+right.Schema.Len())
	used := map[string]bool{}
	for _, f := range append(slices.Clone(left.Schema.Fields), right.Schema.Fields...) {
		name := f.Name
		for n := 0; used[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s%d", f.Name, n)
		}
		used[strings.ToLower(name)] = true
		fields = append(fields, row.Field{Name: name, Type: f.Type})
	}
	n := &Node{Kind: JoinNode, Inputs: []*Node{left, right}, Schema: row.NewSchema(fields...), TimeAttr: -1,
		Bounded: left.Bounded && right.Bounded}
	both := &scope{node: n, name: s.name + ", " + r.name, table: "join", cols: cols}
	if err := q.joinCondition(n, both, cond, kind); err != nil {
		return err
	}
	pair := n.Schema.Names()
	n.joined().join.NullAware = nullAware
	if n.windowJoin() != nil {
		n.windowJoin().NullAware = nullAware
	}
	if nullAware {
		n.Label = strings.Replace(n.Label, "joinType=[LeftAntiJoin]", "joinType=[LeftAntiJoin], nullAware=[true]", 1)
	}
	// The left input may have gained key columns (keyCols): the join
	// emits its rows, and a Calc drops them.
	n.Schema = n.Inputs[0].Schema
	n.TimeAttr = left.TimeAttr
	if kind == joinop.AntiJoin && !q.b.plan.Batch && n.windowJoin() == nil {
		n.TimeAttr = -1 // rows are retracted: no longer insert-only
	}
	n.Label = strings.Replace(n.Label, ", select=["+strings.Join(pair, ", ")+"]", ", select=["+strings.Join(n.Schema.Names(), ", ")+"]", 1)
	s.node = withoutKeyCols(n, lw, 0)
	return nil
}

// namesWindowColumn reports whether e names window_start, window_end or
// window_time.
func namesWindowColumn(e sql.Expr) bool {
	found := false
	walk(e, func(x sql.Expr) bool {
		if c, ok := x.(*sql.ColumnRef); ok {
			switch strings.ToLower(c.Column.Name) {
			case "window_start", "window_end", "window_time":
				found = true
			}
		}
		return !found
	})
	return found
}

package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/sql"
)

// Scalar subqueries, `(SELECT MAX(x) FROM t)` in WHERE or the select
// list, are planned as Flink's SubQueryRemoveRule plans them: a LEFT
// join of the query's table with the subquery's one-row result (NULL
// when it has no row), the expression then reading the joined column.
// A subquery whose form does not make it one row (anything but a global
// aggregate) goes through a SingleRow, which fails the pipeline at a
// second row as Flink's SINGLE_VALUE aggregate fails the job. Both
// sides get a constant column to join on: every row of the table meets
// the subquery's row, as Flink's join on TRUE does. A subquery related
// to the outer table by equalities is decorrelated as Flink does: it is
// grouped by its columns of those equalities and joined on them.

// scalarQual prefixes the qualifiers of the columns a scalar subquery's
// join adds; no SQL text can name them, and SELECT * leaves them out.
const scalarQual = "$scalar"

// scalarSubqueries joins s with the scalar subqueries of sel's WHERE and,
// when the query does not aggregate, of its select list, and returns sel
// with each subquery replaced by its column.
func (q *queryBuilder) scalarSubqueries(sel *sql.Select, s *scope, aggregated bool) (*sql.Select, error) {
	var found []*sql.ScalarQuery
	find := func(e sql.Expr) {
		walk(e, func(x sql.Expr) bool {
			if sq, ok := x.(*sql.ScalarQuery); ok {
				found = append(found, sq)
				return false
			}
			return true
		})
	}
	find(sel.Where)
	if !aggregated {
		for _, it := range sel.Items {
			find(it.Expr)
		}
	}
	if len(found) == 0 {
		return sel, nil
	}
	if s.window != nil {
		return nil, errAt(found[0].At, "a scalar subquery over a window table function is not supported yet; read the window in a FROM subquery")
	}
	cols := map[*sql.ScalarQuery]sql.Expr{}
	for _, sq := range found {
		ref, err := q.scalarJoin(s, sq, len(cols))
		if err != nil {
			return nil, err
		}
		cols[sq] = ref
	}
	replace := func(e sql.Expr) sql.Expr {
		return rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
			if sq, ok := x.(*sql.ScalarQuery); ok && cols[sq] != nil {
				return cols[sq], true
			}
			return nil, false
		})
	}
	out := *sel
	out.Where = replace(sel.Where)
	out.Items = make([]*sql.SelectItem, len(sel.Items))
	for i, it := range sel.Items {
		out.Items[i] = &sql.SelectItem{Expr: replace(it.Expr), Alias: it.Alias}
		if it.Alias.IsZero() && findScalarQuery(it.Expr) != nil {
			// Named as the expression it was, not as the column it reads.
			out.Items[i].Alias = sql.Ident{Name: fmt.Sprintf("EXPR$%d", i)}
		}
	}
	return &out, nil
}

// scalarJoin plans subquery sq (the k-th of its query) and makes s the
// LEFT join of s with it. It returns the expression that reads its value.
func (q *queryBuilder) scalarJoin(s *scope, sq *sql.ScalarQuery, k int) (sql.Expr, error) {
	qual := fmt.Sprintf("%s%d", scalarQual, k)
	corr, err := q.correlation(s, sq)
	if err != nil {
		return nil, err
	}
	var sub *Node
	if corr != nil {
		sub, err = q.query(&sql.Query{Selects: []*sql.Select{corr.sel}})
	} else {
		sub, err = q.query(sq.Query)
	}
	if err != nil {
		return nil, err
	}
	if corr == nil && sub.Schema.Len() != 1 {
		return nil, errAt(sq.At, "a scalar subquery selects one column, this one selects %d (%s)", sub.Schema.Len(), strings.Join(sub.Schema.Names(), ", "))
	}
	valueCol := sub.Schema.Len() - 1
	if corr == nil && !oneRowByForm(sub) {
		sub = &Node{Kind: SingleRowNode, Input: sub, Schema: sub.Schema, Mode: Changelog{Updating: sub.Mode.Updating},
			TimeAttr: -1, Bounded: sub.Bounded, op: &singleRowOp{}, Label: fmt.Sprintf("SingleValue(%s)", sub.Schema.Fields[0].Name)}
	}
	left, right := s.node, sub
	cols := s.tableCols(0)
	ref := func(table, col string) *sql.ColumnRef {
		return &sql.ColumnRef{Table: sql.Ident{Name: table}, Column: sql.Ident{At: sq.At, Name: col, Quoted: true}}
	}
	var conds []sql.Expr
	if corr == nil {
		// No correlation: every row meets the subquery's row, on a
		// constant key of both sides.
		keyName := qual + "_key"
		if left, err = sideMarked(q.zone(), left, 0, keyName); err != nil {
			return nil, err
		}
		if right, err = sideMarked(q.zone(), right, 0, keyName); err != nil {
			return nil, err
		}
		cols = append(cols, scopeCol{quals: []string{qual + "_left"}, name: keyName, idx: left.Schema.Len() - 1, hidden: true})
		conds = append(conds, &sql.Binary{OpAt: sq.At, Op: sql.OpEq, L: ref(qual+"_left", keyName), R: ref(qual, keyName)})
	}
	lw := left.Schema.Len()
	for i, f := range right.Schema.Fields {
		cols = append(cols, scopeCol{quals: []string{qual}, name: f.Name, idx: lw + i, hidden: true})
	}
	if corr != nil {
		for i, outer := range corr.outer {
			conds = append(conds, &sql.Binary{OpAt: sq.At, Op: sql.OpEq, L: outer, R: ref(qual, right.Schema.Fields[i].Name)})
		}
	}
	fields := slices.Clone(left.Schema.Fields)
	used := map[string]bool{}
	for _, f := range fields {
		used[strings.ToLower(f.Name)] = true
	}
	for _, f := range right.Schema.Fields {
		f.Name = uniquify(f.Name, used)
		f.Type = f.Type.Nullable()
		fields = append(fields, f)
	}
	n := &Node{Kind: JoinNode, Inputs: []*Node{left, right}, Schema: row.NewSchema(fields...), TimeAttr: -1,
		Bounded: left.Bounded && right.Bounded}
	both := &scope{node: n, name: s.name, table: s.table, also: s.also, cols: cols}
	if err := q.joinCondition(n, both, andAll(conds), joinop.LeftJoin); err != nil {
		return nil, err
	}
	*s = *both
	var value sql.Expr = ref(qual, sub.Schema.Fields[valueCol].Name)
	if corr != nil && corr.count {
		// A group with no rows is no row of the grouped subquery, whose
		// COUNT would have been 0.
		value = &sql.Call{At: sq.At, Name: "COALESCE", Args: []sql.Expr{value, bigintLit(0)}}
	}
	return value, nil
}

// scalarCorrelation is a correlated scalar subquery decorrelated as
// Flink decorrelates it: sel groups the subquery by its columns that
// equal outer ones (selecting them, then the value), and outer are the
// outer columns to join them on.
type scalarCorrelation struct {
	sel   *sql.Select
	outer []sql.Expr
	count bool // the value is a bare COUNT
}

// correlation returns sq decorrelated, or nil when it names no column of
// the outer scope s.
func (q *queryBuilder) correlation(s *scope, sq *sql.ScalarQuery) (*scalarCorrelation, error) {
	qu := sq.Query
	if len(qu.Selects) != 1 || len(qu.With) > 0 || qu.Selects[0].Where == nil {
		return nil, nil
	}
	inner := qu.Selects[0]
	is, err := q.from(inner.From)
	if err != nil {
		return nil, err
	}
	outerRef := func(e sql.Expr) bool {
		c, ok := e.(*sql.ColumnRef)
		if !ok {
			return false
		}
		if !c.Table.IsZero() {
			// An aliased table is named by its alias only, as SQL scopes
			// names: `FROM o o2 WHERE o2.k = o.k` names the outer o.
			inner := is.knows(c.Table.Name)
			if is.cols == nil {
				inner = strings.EqualFold(c.Table.Name, is.name) || slices.ContainsFunc(is.also, func(a string) bool { return strings.EqualFold(a, c.Table.Name) })
			}
			return s.knows(c.Table.Name) && !inner
		}
		return namesOuter(c, s, is)
	}
	mentions := func(e sql.Expr) bool { return walkFinds(e, outerRef) }
	if !mentions(inner.Where) {
		return nil, nil
	}
	corr := &scalarCorrelation{}
	var innerKeys, rest []sql.Expr
	for _, c := range conjuncts(inner.Where) {
		b, ok := c.(*sql.Binary)
		switch {
		case !mentions(c):
			rest = append(rest, c)
			continue
		case ok && b.Op == sql.OpEq && outerRef(b.L) && !mentions(b.R):
			corr.outer, innerKeys = append(corr.outer, b.L), append(innerKeys, b.R)
			continue
		case ok && b.Op == sql.OpEq && outerRef(b.R) && !mentions(b.L):
			corr.outer, innerKeys = append(corr.outer, b.R), append(innerKeys, b.L)
			continue
		}
		return nil, errAt(c.Pos(), "a correlated scalar subquery relates to the outer table by equalities of its columns only (inner.k = outer.k)")
	}
	if len(inner.Items) != 1 || len(inner.GroupBy) > 0 || inner.Having != nil || inner.Distinct || !containsAgg(inner.Items[0].Expr) {
		return nil, errAt(sq.At, "a correlated scalar subquery is supported as one aggregate without GROUP BY (SELECT MAX(x) FROM t WHERE t.k = outer.k)")
	}
	item := inner.Items[0]
	if call, ok := item.Expr.(*sql.Call); ok && call.Name == "COUNT" {
		corr.count = true
	} else if walkFinds(item.Expr, func(x sql.Expr) bool { c, ok := x.(*sql.Call); return ok && c.Name == "COUNT" }) {
		return nil, errAt(sq.At, "a correlated scalar subquery with COUNT inside an expression is not supported (a key with no rows would give NULL, not COUNT's 0): select the COUNT alone")
	}
	sel := *inner
	sel.Where, sel.GroupBy, sel.Items = andAll(rest), innerKeys, nil
	for i, k := range innerKeys {
		sel.Items = append(sel.Items, &sql.SelectItem{Expr: k, Alias: sql.Ident{Name: fmt.Sprintf("$k%d", i)}})
	}
	sel.Items = append(sel.Items, &sql.SelectItem{Expr: item.Expr, Alias: sql.Ident{Name: "$v"}})
	corr.sel = &sel
	return corr, nil
}

// walkFinds reports whether f holds for e or a sub-expression of it.
func walkFinds(e sql.Expr, f func(sql.Expr) bool) bool {
	found := false
	walk(e, func(x sql.Expr) bool {
		found = found || f(x)
		return !found
	})
	return found
}

// oneRowByForm reports whether n has at most one row by its form: a
// global aggregate, under Calcs that only project.
func oneRowByForm(n *Node) bool {
	for n.Kind == CalcNode {
		if c, ok := n.op.(*calcOp); !ok || c.filter != nil {
			return false
		}
		n = n.Input
	}
	g, ok := n.op.(*groupAggOp)
	return ok && n.Kind == GroupAggNode && len(g.keys) == 0
}

// findScalarQuery returns the first scalar subquery in e, or nil.
func findScalarQuery(e sql.Expr) *sql.ScalarQuery {
	var found *sql.ScalarQuery
	walk(e, func(x sql.Expr) bool {
		if sq, ok := x.(*sql.ScalarQuery); ok && found == nil {
			found = sq
		}
		return found == nil
	})
	return found
}

// singleRowOp is a SingleRowNode's operator.
type singleRowOp struct{}

func (*singleRowOp) operator(opBuild) (operator.Lifecycle, error) { return aggop.NewSingleRow(), nil }

// scalarAbove joins the aggregate's row with the scalar subqueries of
// the select list and HAVING of an aggregating query (`SELECT k,
// COUNT(*) * 1.0 / (SELECT COUNT(*) FROM t) FROM t GROUP BY k`), as
// Flink joins them above its aggregate, and rewrites each to the joined
// column. It returns agg itself when there is none.
func (a *aggPlan) scalarAbove(agg *Node) (*Node, error) {
	var found []*sql.ScalarQuery
	for _, e := range append(itemExprs(a.items), a.having) {
		walk(e, func(x sql.Expr) bool {
			if sq, ok := x.(*sql.ScalarQuery); ok {
				found = append(found, sq)
				return false
			}
			return true
		})
	}
	if len(found) == 0 {
		return agg, nil
	}
	s := &scope{node: agg, name: a.s.name, table: a.s.table, also: a.s.also}
	cols := map[*sql.ScalarQuery]sql.Expr{}
	for k, sq := range found {
		if corr, err := a.q.correlation(s, sq); err != nil || corr != nil {
			if err == nil {
				err = errAt(sq.At, "a correlated scalar subquery in the select list or HAVING of an aggregating query is not supported; aggregate in a FROM subquery and correlate over its result")
			}
			return nil, err
		}
		ref, err := a.q.scalarJoin(s, sq, k)
		if err != nil {
			return nil, err
		}
		// The aggregate's last Calc names the joined row's columns
		// unqualified.
		i, err := s.resolve(ref.(*sql.ColumnRef))
		if err != nil {
			return nil, err
		}
		cols[sq] = &sql.ColumnRef{Column: sql.Ident{At: sq.At, Name: s.node.Schema.Fields[i].Name, Quoted: true}}
	}
	replace := func(e sql.Expr) sql.Expr {
		return rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
			if sq, ok := x.(*sql.ScalarQuery); ok && cols[sq] != nil {
				return cols[sq], true
			}
			return nil, false
		})
	}
	for i, it := range a.items {
		if findScalarQuery(it.Expr) != nil {
			alias := it.Alias
			if alias.IsZero() {
				alias = sql.Ident{Name: fmt.Sprintf("EXPR$%d", i)}
			}
			a.items[i] = &sql.SelectItem{Expr: replace(it.Expr), Alias: alias}
		}
	}
	a.having = replace(a.having)
	return s.node, nil
}

func itemExprs(items []*sql.SelectItem) []sql.Expr {
	out := make([]sql.Expr, len(items))
	for i, it := range items {
		out[i] = it.Expr
	}
	return out
}

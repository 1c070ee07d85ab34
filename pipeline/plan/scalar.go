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
// the subquery's row, as Flink's join on TRUE does.

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
	cols := map[*sql.ScalarQuery]*sql.ColumnRef{}
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
		if it.Alias.IsZero() && out.Items[i].Expr != it.Expr {
			out.Items[i].Alias = sql.Ident{Name: fmt.Sprintf("EXPR$%d", i)}
		}
	}
	return &out, nil
}

// scalarJoin plans subquery sq (the k-th of its query) and makes s the
// LEFT join of s with it. It returns the reference to its column.
func (q *queryBuilder) scalarJoin(s *scope, sq *sql.ScalarQuery, k int) (*sql.ColumnRef, error) {
	sub, err := q.query(sq.Query)
	if err != nil {
		return nil, err
	}
	if sub.Schema.Len() != 1 {
		return nil, errAt(sq.At, "a scalar subquery selects one column, this one selects %d (%s)", sub.Schema.Len(), strings.Join(sub.Schema.Names(), ", "))
	}
	if !oneRowByForm(sub) {
		sub = &Node{Kind: SingleRowNode, Input: sub, Schema: sub.Schema, Mode: Changelog{Updating: sub.Mode.Updating},
			TimeAttr: -1, Bounded: sub.Bounded, op: &singleRowOp{}, Label: fmt.Sprintf("SingleValue(%s)", sub.Schema.Fields[0].Name)}
	}
	qual := fmt.Sprintf("%s%d", scalarQual, k)
	keyName := scalarQual + "_key"
	left, err := sideMarked(s.node, 0, keyName)
	if err != nil {
		return nil, err
	}
	right, err := sideMarked(sub, 0, keyName)
	if err != nil {
		return nil, err
	}
	lw := left.Schema.Len()
	cols := append(s.tableCols(0),
		scopeCol{quals: []string{qual + "_left"}, name: keyName, idx: lw - 1, hidden: true},
		scopeCol{quals: []string{qual}, name: sub.Schema.Fields[0].Name, idx: lw, hidden: true},
		scopeCol{quals: []string{qual}, name: keyName, idx: lw + 1, hidden: true})
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
	cond := &sql.Binary{OpAt: sq.At, Op: sql.OpEq,
		L: &sql.ColumnRef{Table: sql.Ident{Name: qual + "_left"}, Column: sql.Ident{At: sq.At, Name: keyName, Quoted: true}},
		R: &sql.ColumnRef{Table: sql.Ident{Name: qual}, Column: sql.Ident{At: sq.At, Name: keyName, Quoted: true}}}
	if err := q.joinCondition(n, both, cond, joinop.LeftJoin); err != nil {
		return nil, err
	}
	*s = *both
	return &sql.ColumnRef{Table: sql.Ident{Name: qual}, Column: sql.Ident{At: sq.At, Name: sub.Schema.Fields[0].Name, Quoted: true}}, nil
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

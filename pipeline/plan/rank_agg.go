package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/sql"
)

// aggRankSubquery splits a Top-N subquery that aggregates in the same
// SELECT as its ROW_NUMBER() (`SELECT k, SUM(x) AS s, ROW_NUMBER() OVER
// (PARTITION BY ... ORDER BY SUM(x) DESC) AS rn FROM t GROUP BY k`) into
// the aggregate and a ranking SELECT over it, as Flink's plan ranks the
// aggregate's result. The PARTITION BY and ORDER BY expressions that are
// not output columns are computed by the aggregate beside them (under
// the column's own name when they are a column, so a window aggregate's
// window_end stays window_end). It returns nil when inner does not
// aggregate or an output column has no name to be read by.
func aggRankSubquery(sub *sql.SubqueryRef, inner *sql.Select, item int) (*sql.SubqueryRef, *sql.Select) {
	if inner.Distinct || len(inner.GroupBy) == 0 && inner.Having == nil && !anyAgg(inner.Items) {
		return nil, nil
	}
	over, ok := inner.Items[item].Expr.(*sql.Over)
	if !ok || over.Window == nil {
		return nil, nil
	}
	agg := *inner
	agg.Items = nil
	var names []string
	for i, it := range inner.Items {
		if i == item {
			continue
		}
		name := it.Alias.Name
		if c, ok := it.Expr.(*sql.ColumnRef); ok && it.Alias.IsZero() {
			name = c.Column.Name
		}
		if name == "" {
			return nil, nil
		}
		names = append(names, name)
		agg.Items = append(agg.Items, it)
	}
	used := map[string]bool{}
	for _, n := range names {
		used[strings.ToLower(n)] = true
	}
	at := inner.At
	hide := func(x sql.Expr) sql.Expr {
		if c, ok := x.(*sql.ColumnRef); ok && c.Table.IsZero() && used[strings.ToLower(c.Column.Name)] {
			return quotedCol(c.Column.Name, c.Pos())
		}
		name := fmt.Sprintf("$rank%d", len(agg.Items))
		if c, ok := x.(*sql.ColumnRef); ok && !used[strings.ToLower(c.Column.Name)] {
			name = c.Column.Name
		}
		used[strings.ToLower(name)] = true
		agg.Items = append(agg.Items, &sql.SelectItem{Expr: x, Alias: sql.Ident{At: x.Pos(), Name: name, Quoted: true}})
		return quotedCol(name, x.Pos())
	}
	w := *over.Window
	w.PartitionBy = make([]sql.Expr, len(over.Window.PartitionBy))
	for i, p := range over.Window.PartitionBy {
		w.PartitionBy[i] = hide(p)
	}
	w.OrderBy = make([]*sql.OrderItem, len(over.Window.OrderBy))
	for i, o := range over.Window.OrderBy {
		oo := *o
		oo.X = hide(o.X)
		w.OrderBy[i] = &oo
	}
	rn := *over
	rn.Window = &w
	rank := &sql.Select{At: at, From: &sql.SubqueryRef{At: at, Query: &sql.Query{Selects: []*sql.Select{&agg}}, Alias: sql.Ident{At: at, Name: "$agg", Quoted: true}}}
	for i, n := range names {
		if i == item {
			rank.Items = append(rank.Items, &sql.SelectItem{Expr: &rn, Alias: inner.Items[item].Alias})
		}
		rank.Items = append(rank.Items, &sql.SelectItem{Expr: quotedCol(n, at)})
	}
	if item == len(names) {
		rank.Items = append(rank.Items, &sql.SelectItem{Expr: &rn, Alias: inner.Items[item].Alias})
	}
	s := *sub
	s.Query = &sql.Query{Selects: []*sql.Select{rank}}
	return &s, rank
}

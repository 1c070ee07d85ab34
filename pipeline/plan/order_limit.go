package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/sql"
)

// sortedName and rankName name the query under an ORDER BY ... LIMIT and
// its row number while the Top-N over it is planned; hiddenPrefix starts
// the names of keys computed only for the sort.
const (
	sortedName   = "$sorted"
	rankName     = "$rn"
	hiddenPrefix = "$sort"
)

// orderLimit plans `query ORDER BY keys LIMIT n` (or OFFSET m FETCH n) as
// Flink does: a Top-N over the whole query without a partition, keeping
// the rows ranked m+1 to m+n by the keys, without the rank column. A key
// may name an output column, give its position (ORDER BY 2), repeat a
// select item's expression, or (for a single SELECT) use a column the
// select list leaves out, which is then computed beside the output and
// dropped after the sort.
func (q *queryBuilder) orderLimit(qu *sql.Query) (*Node, error) {
	inner := *qu
	inner.OrderBy, inner.Limit = nil, nil
	var sel *sql.Select
	if len(inner.Selects) == 1 {
		c := *inner.Selects[0]
		c.Items = append([]*sql.SelectItem(nil), c.Items...)
		sel = &c
		inner.Selects = []*sql.Select{sel}
	}
	keys := make([]*sql.OrderItem, len(qu.OrderBy))
	itemOf := make([]int, len(qu.OrderBy)) // the select item a key is, or -1
	for i, k := range qu.OrderBy {
		kk := *k
		keys[i], itemOf[i] = &kk, -1
		if pos, ok := ordinal(k.X); ok {
			itemOf[i] = pos - 1
			continue
		}
		if sel == nil || hasStar(sel.Items) {
			continue
		}
		if j := matchingItem(sel.Items, k.X); j >= 0 {
			itemOf[i] = j
			continue
		}
		if sel.Distinct {
			continue
		}
		name := fmt.Sprintf("%s%d", hiddenPrefix, i)
		sel.Items = append(sel.Items, &sql.SelectItem{Expr: k.X, Alias: sql.Ident{At: k.X.Pos(), Name: name, Quoted: true}})
		itemOf[i] = len(sel.Items) - 1
	}
	n, err := q.query(&inner)
	if err != nil {
		return nil, err
	}
	schema := n.Schema
	for i, j := range itemOf {
		if j < 0 {
			continue
		}
		if j >= len(schema.Fields) {
			return nil, errAt(qu.OrderBy[i].X.Pos(), "ORDER BY position %d: the query has %d columns", j+1, len(schema.Fields))
		}
		keys[i].X = quotedCol(schema.Fields[j].Name, qu.OrderBy[i].X.Pos())
	}
	if qu.Limit == nil {
		return q.sortOf(n, keys, qu)
	}
	return q.topNOf(n, keys, qu)
}

// topNOf plans the Top-N over n, a query already planned, as the
// ROW_NUMBER subquery Flink's rule would produce.
func (q *queryBuilder) topNOf(n *Node, keys []*sql.OrderItem, qu *sql.Query) (*Node, error) {
	at := qu.OrderAt
	rn := &sql.Over{
		Call:   &sql.Call{At: at, Name: "ROW_NUMBER"},
		OverAt: at,
		Window: &sql.WindowSpec{At: at, OrderBy: keys},
	}
	ranked := &sql.Select{At: at,
		Items: []*sql.SelectItem{{Expr: &sql.Star{At: at}}, {Expr: rn, Alias: sql.Ident{At: at, Name: rankName, Quoted: true}}},
		From:  &sql.TableRef{Name: sql.Ident{At: at, Name: sortedName, Quoted: true}},
	}
	var items []*sql.SelectItem
	for _, f := range n.Schema.Fields {
		if !strings.HasPrefix(f.Name, hiddenPrefix) {
			items = append(items, &sql.SelectItem{Expr: quotedCol(f.Name, at)})
		}
	}
	lim := qu.Limit
	cond := fmt.Sprintf("`%s` <= %d", rankName, lim.Offset+lim.Fetch)
	if lim.Offset > 0 {
		cond += fmt.Sprintf(" AND `%s` > %d", rankName, lim.Offset)
	}
	where, err := sql.ParseExpr(cond)
	if err != nil {
		return nil, err
	}
	outer := &sql.Select{At: at, Items: items, Where: where,
		From: &sql.SubqueryRef{At: at, Query: &sql.Query{Selects: []*sql.Select{ranked}}, Alias: sql.Ident{At: at, Name: "$ranked", Quoted: true}},
	}
	saved := q.env
	defer func() { q.env = saved }()
	q.env = &cteEnv{name: sortedName, node: n, parent: q.env}
	return q.selectBlock(outer)
}

// ordinal reports the position an ORDER BY key gives as an integer
// literal (ORDER BY 2).
func ordinal(x sql.Expr) (int, bool) {
	l, ok := x.(*sql.Literal)
	if !ok || l.Kind != sql.LitInt {
		return 0, false
	}
	var pos int
	if _, err := fmt.Sscan(l.Text, &pos); err != nil || pos < 1 {
		return 0, false
	}
	return pos, true
}

func hasStar(items []*sql.SelectItem) bool {
	for _, it := range items {
		if _, ok := it.Expr.(*sql.Star); ok {
			return true
		}
	}
	return false
}

// matchingItem is the select item an ORDER BY key names: by its alias,
// by its column's name, or by repeating its expression; -1 when none.
func matchingItem(items []*sql.SelectItem, x sql.Expr) int {
	if c, ok := x.(*sql.ColumnRef); ok && c.Table.IsZero() {
		for j, it := range items {
			if !it.Alias.IsZero() && strings.EqualFold(it.Alias.Name, c.Column.Name) {
				return j
			}
		}
	}
	text := sql.Format(x)
	for j, it := range items {
		if it.Alias.IsZero() && sql.Format(it.Expr) == text {
			return j
		}
	}
	return -1
}

func quotedCol(name string, at sql.Pos) *sql.ColumnRef {
	return &sql.ColumnRef{Column: sql.Ident{At: at, Name: name, Quoted: true}}
}

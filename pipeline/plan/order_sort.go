package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/sql"
)

// sortOf plans `query ORDER BY keys` without a row count over n, the
// query planned (keys name its columns): in batch execution Flink's
// Sort, every row in the keys' order; in streaming execution refused,
// as Flink refuses a sort on anything but an ascending time attribute
// (its temporal sort, which etld does not have yet).
func (q *queryBuilder) sortOf(n *Node, keys []*sql.OrderItem, qu *sql.Query) (*Node, error) {
	at := qu.OrderAt
	if !q.b.plan.Batch {
		if c, ok := keys[0].X.(*sql.ColumnRef); ok && !keys[0].Desc && n.TimeAttr >= 0 && strings.EqualFold(c.Column.Name, n.Schema.Fields[n.TimeAttr].Name) {
			return nil, errAt(at, "ORDER BY the time attribute without LIMIT in streaming execution (Flink's temporal sort) is not supported yet; run it in batch execution, or add LIMIT n for a Top-N")
		}
		return nil, errAt(at, "ORDER BY without LIMIT in streaming execution sorts only by an ascending time attribute in Flink (\"Sort on a non-time-attribute field is not supported\"); run it in batch execution (`execution: batch`), or add LIMIT n for a Top-N")
	}
	spec := make([]rankop.SortKey, len(keys))
	texts := make([]string, len(keys))
	for i, k := range keys {
		c, err := compileExpr(q.zone(), k.X, n.Schema, "")
		if err != nil {
			return nil, err
		}
		if !c.IsColumn {
			return nil, errAt(k.X.Pos(), "ORDER BY %s: over a UNION or SELECT *, order by an output column (or its position)", sql.Format(k.X))
		}
		if c.Type.ID == row.Struct || c.Type.ID == row.Array || c.Type.ID == row.Map {
			return nil, errAt(k.X.Pos(), "ORDER BY a %s value is not supported (composite values have no order)", c.Type)
		}
		spec[i] = rankop.SortKey{Col: c.Column, Desc: k.Desc, NullsFirst: k.NullsFirst()}
		texts[i] = n.Schema.Fields[c.Column].Name + map[bool]string{false: " ASC", true: " DESC"}[k.Desc]
		if k.Nulls != sql.NullsDefault {
			texts[i] += map[bool]string{true: " NULLS FIRST", false: " NULLS LAST"}[k.NullsFirst()]
		}
	}
	s := &Node{Kind: SortNode, Input: n, Schema: n.Schema, Mode: Changelog{}, TimeAttr: -1, Bounded: n.Bounded,
		op: &sortOp{keys: spec}}
	s.Label = fmt.Sprintf("Sort(orderBy=[%s])", strings.Join(texts, ", "))
	var cols []int
	for i, f := range n.Schema.Fields {
		if !strings.HasPrefix(f.Name, hiddenPrefix) {
			cols = append(cols, i)
		}
	}
	if len(cols) == n.Schema.Len() {
		return s, nil
	}
	return pickNode(s, cols), nil
}

// sortOp is a SortNode's sort of a batch input.
type sortOp struct{ keys []rankop.SortKey }

func (s *sortOp) operator(opBuild) (operator.Lifecycle, error) {
	return rankop.NewSort(s.keys), nil
}

package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/sql"
)

// topN plans a Top-N: a subquery whose item `item` is ROW_NUMBER() (or,
// in batch mode, RANK() or DENSE_RANK()) OVER (...), read by sel, whose
// WHERE limits the rank. It returns the subquery's scope and sel without
// the rank condition.
func (q *queryBuilder) topN(sel *sql.Select, sub *sql.SubqueryRef, inner *sql.Select, item int) (*scope, *sql.Select, error) {
	t := &topNPlan{q: q, sel: sel, sub: sub, inner: inner, item: item}
	if err := t.check(); err != nil {
		return nil, nil, err
	}
	calc, err := t.firstCalc()
	if err != nil {
		return nil, nil, err
	}
	node, err := t.rank(calc)
	if err != nil {
		return nil, nil, err
	}
	out, err := t.secondCalc(calc, node)
	if err != nil {
		return nil, nil, err
	}
	rest := *sel
	rest.Where = t.rest
	return &scope{node: out, name: sub.Alias.Name, table: "subquery"}, &rest, nil
}

// topNPlan is a Top-N subquery being planned, in the phases of Flink's
// plan: a first Calc computes the subquery's other items and the
// partition and order keys, the Rank (or window Rank, or Deduplicate)
// follows, and a second Calc puts the subquery's columns in its order.
type topNPlan struct {
	q     *queryBuilder
	sel   *sql.Select
	sub   *sql.SubqueryRef
	inner *sql.Select
	item  int // the ROW_NUMBER() item of inner

	over   *sql.Over
	kind   rankop.RankKind
	rnName string
	rr     rankRange
	rest   sql.Expr // the outer WHERE without the rank condition

	s          *scope
	tvfTime    string // the time column of a window TVF read directly
	partNames  []string
	orderNames []string
	spec       rankop.RankSpec
}

// check refuses what a Top-N subquery cannot hold and finds the outer
// query's limit on the rank.
func (t *topNPlan) check() error {
	q, sel, sub, inner, item := t.q, t.sel, t.sub, t.inner, t.item
	over := inner.Items[item].Expr.(*sql.Over)
	kind := rankFuncs[over.Call.Name]
	if len(over.Call.Args) > 0 || over.Call.Distinct || over.Call.Star {
		return errAt(over.Call.At, "%s() takes no arguments", over.Call.Name)
	}
	if over.Window.Frame != nil {
		return errAt(over.Window.Frame.At, "%s() takes no window frame", over.Call.Name)
	}
	if len(over.Window.OrderBy) == 0 {
		return errAt(over.Window.At, "%s() needs ORDER BY in its OVER clause", over.Call.Name)
	}
	for i, it := range inner.Items {
		if i != item && containsOver(it.Expr) {
			return errAt(it.Pos(), "a Top-N subquery ranks with one ROW_NUMBER() OVER (...) column; OVER aggregates are not supported here")
		}
	}
	switch {
	case inner.Distinct || len(inner.GroupBy) > 0 || inner.Having != nil || anyAgg(inner.Items):
		return errAt(inner.At, "a Top-N subquery cannot aggregate: compute the aggregate in a subquery of its own and rank its result")
	case inner.Where != nil && containsOver(inner.Where):
		return errAt(inner.Where.Pos(), "ROW_NUMBER() cannot be used in WHERE; filter on it in the outer query")
	}
	rnName := inner.Items[item].Alias.Name
	if rnName == "" {
		rnName = fmt.Sprintf("EXPR$%d", item)
	}
	rr, rest, err := rankCondition(sel.Where, rnName, sub.Alias.Name)
	if err != nil {
		return err
	}
	if !rr.found {
		return errAt(over.Call.At, "%s() OVER (...) is planned as a Top-N, which needs the outer query to limit it: add WHERE %s <= N (or = N, < N, BETWEEN) to the query that reads this subquery", over.Call.Name, rnName)
	}
	if !q.b.plan.Batch && kind != rankop.RowNumber {
		return errAt(over.Call.At, "%s() on a streaming table is not supported (as in Flink); use ROW_NUMBER(), or set `execution: batch`", over.Call.Name)
	}

	t.over, t.kind, t.rnName, t.rr, t.rest = over, kind, rnName, rr, rest
	return nil
}

// firstCalc reads the subquery's FROM and builds the Calc under the
// rank: the subquery's other items under their final names, then the
// partition and order keys that are not among them.
func (t *topNPlan) firstCalc() (*Node, error) {
	q, item, over := t.q, t.item, t.over
	s, inner, err := q.fromWhere(t.inner)
	if err != nil {
		return nil, err
	}
	tvfTime := "" // the time column of a window TVF read directly
	if s.window != nil {
		tvfTime = s.node.Schema.Fields[s.windowSpec.TimeCol].Name
		if s, err = q.windowTable(s); err != nil {
			return nil, err
		}
	}
	var filter *expr.Compiled
	if inner.Where != nil {
		if filter, err = q.compileFilter(inner.Where, s, s.node.Schema); err != nil {
			return nil, err
		}
	}

	// The first Calc: the subquery's other items under their final names,
	// then the partition and order keys that are not among them.
	var items []*sql.SelectItem
	hasStar := false
	for i, it := range inner.Items {
		if i == item {
			continue
		}
		c := *it
		if _, star := it.Expr.(*sql.Star); star {
			hasStar = true
		} else if c.Alias.IsZero() {
			if ref, ok := it.Expr.(*sql.ColumnRef); ok {
				if j := s.node.Schema.Index(ref.Column.Name); j >= 0 {
					c.Alias = sql.Ident{Name: s.node.Schema.Fields[j].Name, Quoted: true}
				}
			}
			if c.Alias.IsZero() {
				c.Alias = sql.Ident{Name: fmt.Sprintf("EXPR$%d", i), Quoted: true}
			}
		}
		items = append(items, &c)
	}
	visible := len(items)
	keyCol := func(e sql.Expr) (string, error) {
		e, err := s.unqualify(e)
		if err != nil {
			return "", err
		}
		text := sql.Format(e)
		for _, it := range items {
			if _, star := it.Expr.(*sql.Star); star {
				continue
			}
			x, _ := s.unqualify(it.Expr)
			if sql.Format(x) == text {
				return it.Alias.Name, nil
			}
		}
		if ref, ok := e.(*sql.ColumnRef); ok && hasStar {
			if j := s.node.Schema.Index(ref.Column.Name); j >= 0 {
				return s.node.Schema.Fields[j].Name, nil
			}
		}
		name := fmt.Sprintf("$rank%d", len(items)-visible)
		items = append(items, &sql.SelectItem{Expr: e, Alias: sql.Ident{Name: name, Quoted: true}})
		return name, nil
	}
	partNames := make([]string, len(over.Window.PartitionBy))
	for i, e := range over.Window.PartitionBy {
		if partNames[i], err = keyCol(e); err != nil {
			return nil, err
		}
	}
	orderNames := make([]string, len(over.Window.OrderBy))
	for i, o := range over.Window.OrderBy {
		if orderNames[i], err = keyCol(o.X); err != nil {
			return nil, err
		}
	}
	calc, err := q.projection(items, s, s.node, filter, inner.Where)
	if err != nil {
		return nil, err
	}
	t.s, t.tvfTime, t.partNames, t.orderNames = s, tvfTime, partNames, orderNames
	return calc, nil
}

// rank builds the rank over the first Calc: a window Top-N over rows
// that carry their windows, a deduplication, or a Top-N.
func (t *topNPlan) rank(calc *Node) (*Node, error) {
	q, sel, sub, inner, item, over, kind, rnName, rr := t.q, t.sel, t.sub, t.inner, t.item, t.over, t.kind, t.rnName, t.rr
	s, tvfTime, partNames, orderNames := t.s, t.tvfTime, t.partNames, t.orderNames
	var err error
	col := func(name string) int { return calc.Schema.Index(name) }
	spec := rankop.RankSpec{Start: rr.start, End: rr.end, Kind: kind, Batch: q.b.plan.Batch}
	for _, n := range partNames {
		spec.Partition = append(spec.Partition, col(n))
	}
	for i, o := range over.Window.OrderBy {
		spec.Order = append(spec.Order, rankop.SortKey{Col: col(orderNames[i]), Desc: o.Desc, NullsFirst: o.NullsFirst()})
	}
	outer := *sel
	outer.Where = t.rest
	spec.OutputRank = readsColumn(&outer, rnName, sub.Alias.Name)
	if spec.OutputRank && calc.Schema.Index(rnName) >= 0 {
		return nil, errAt(inner.Items[item].Pos(), "duplicate column name %q in the select list; give it another name with AS", rnName)
	}
	// A processing-time order is known from the column it reads.
	procTime := false
	if ref, ok := over.Window.OrderBy[0].X.(*sql.ColumnRef); ok {
		if j := s.node.Schema.Index(ref.Column.Name); j >= 0 {
			procTime = procTimeCol(s.node, j)
		}
	}
	var node *Node
	if endCol := windowEnd(over, spec); endCol >= 0 && !calc.Mode.Updating && windowed(calc) {
		timeCol := -1
		if tvfTime != "" {
			timeCol = calc.Schema.Index(tvfTime)
			if len(orderNames) == 1 && strings.EqualFold(keyText(over.Window.OrderBy[0].X, orderNames[0]), tvfTime) {
				timeCol = spec.Order[0].Col
			}
		}
		if kind != rankop.RowNumber {
			return nil, errAt(over.Call.At, "a window Top-N ranks with ROW_NUMBER(), as in Flink")
		}
		partText, orderText := rankTexts(over, partNames, orderNames)
		if node, err = q.windowRankNode(calc, spec, endCol, timeCol, rnName, partText, orderText); err != nil {
			return nil, err
		}
	} else {
		if tvfTime != "" {
			return nil, errAt(over.Window.At, "a Top-N over a window table function partitions by window_start and window_end (PARTITION BY window_start, window_end, ...), as Flink's window Top-N does")
		}
		node = q.rankNode(calc, spec, over, rnName, partNames, orderNames, procTime)
	}

	t.spec = spec
	return node, nil
}

// secondCalc puts the subquery's columns in its order, by position in
// the first Calc (a star stands for the input's columns), with the rank
// number where the subquery has it and the outer query reads it.
func (t *topNPlan) secondCalc(calc, node *Node) (*Node, error) {
	q, sub, inner, item, rnName, s, spec := t.q, t.sub, t.inner, t.item, t.rnName, t.s, t.spec
	var err error
	var outItems []*sql.SelectItem
	ref := func(name string) *sql.SelectItem {
		return &sql.SelectItem{Expr: &sql.ColumnRef{Column: sql.Ident{Name: name, Quoted: true}}}
	}
	pos := 0
	for i, it := range inner.Items {
		if i == item {
			if spec.OutputRank {
				outItems = append(outItems, ref(rnName))
			}
			continue
		}
		width := 1
		if star, ok := it.Expr.(*sql.Star); ok {
			width = 0 // t.* of a join stands for t's columns only
			for j := range s.node.Schema.Fields {
				if starCovers(star, s, j) {
					width++
				}
			}
		}
		for range width {
			outItems = append(outItems, ref(calc.Schema.Fields[pos].Name))
			pos++
		}
	}
	out := node
	if !identity(outItems, node) {
		rs := &scope{node: node, name: sub.Alias.Name, table: "subquery"}
		if out, err = q.projection(outItems, rs, node, nil, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

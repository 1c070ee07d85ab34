package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/sql"
)

// This file plans Top-N and deduplication (Flink's Rank and Deduplicate,
// and their window forms): a subquery that ranks its rows with
// ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) AS rn, read by a query
// whose WHERE limits rn. It plans as
//
//	Calc(the subquery's columns, partition and order keys; its WHERE)
//	  → Rank / Deduplicate / WindowRank / WindowDeduplicate
//	  → Calc(the subquery's columns in order, rn if it is read)
//
// and the outer query continues over that, without the rn conditions.

// rankFuncs are the ranking functions a Top-N takes.
var rankFuncs = map[string]rankop.RankKind{"ROW_NUMBER": rankop.RowNumber, "RANK": rankop.Rank, "DENSE_RANK": rankop.DenseRank}

// rankSubquery finds the ranking item of a FROM subquery, or -1.
func rankSubquery(f sql.FromItem) (*sql.SubqueryRef, *sql.Select, int) {
	sub, ok := f.(*sql.SubqueryRef)
	if !ok || len(sub.Query.Selects) != 1 || len(sub.Query.With) > 0 {
		return nil, nil, -1
	}
	inner := sub.Query.Selects[0]
	for i, it := range inner.Items {
		if o, ok := it.Expr.(*sql.Over); ok {
			if _, ok := rankFuncs[o.Call.Name]; ok {
				return sub, inner, i
			}
		}
	}
	return nil, nil, -1
}

// selectFrom plans sel's FROM. A Top-N subquery plans here with the
// outer WHERE's rank conditions; sel comes back without them. A ranking
// function the outer query does not limit is an OVER aggregate.
func (q *queryBuilder) selectFrom(sel *sql.Select) (*scope, *sql.Select, error) {
	if sub, inner, item := rankSubquery(sel.From); sub != nil && limitsRank(sel, sub, inner, item) {
		if s, r := aggRankSubquery(sub, inner, item); s != nil {
			sub, inner = s, r
		}
		return q.topN(sel, sub, inner, item)
	}
	s, sel, err := q.fromWhere(sel)
	if err != nil {
		return nil, nil, err
	}
	sel, err = q.subqueryJoins(s, sel)
	return s, sel, err
}

// fromWhere plans sel's FROM. Over comma joins, FROM a, b WHERE cond is
// a JOIN ON cond, as Flink plans it, so that the WHERE's equalities of
// the two sides are the join's keys: sel comes back without its WHERE.
// Every SELECT reads its FROM here, a Top-N's subquery too, but for a
// correlated subquery (EXISTS, IN, scalar), whose WHERE may name the
// outer query's columns.
func (q *queryBuilder) fromWhere(sel *sql.Select) (*scope, *sql.Select, error) {
	if j, ok := sel.From.(*sql.Join); ok && j.Type == sql.CommaJoin && sel.Where != nil {
		on := *j
		on.On = sel.Where
		saved := q.commaWhere
		q.commaWhere = sel.Where
		defer func() { q.commaWhere = saved }()
		cp := *sel
		cp.From, cp.Where = &on, nil
		sel = &cp
	}
	s, err := q.from(sel.From)
	if err == nil && sel.Where != nil {
		err = s.usingWhere(sel.Where)
	}
	return s, sel, err
}

// rankRange is the rank condition of the outer WHERE: Start..End.
type rankRange struct {
	start, end int64
	found      bool
}

// identity reports whether items list node's columns in order.
func identity(items []*sql.SelectItem, node *Node) bool {
	if len(items) != node.Schema.Len() {
		return false
	}
	for i, it := range items {
		if it.Expr.(*sql.ColumnRef).Column.Name != node.Schema.Fields[i].Name {
			return false
		}
	}
	return true
}

// rankNode builds the Rank, Deduplicate or WindowRank node over calc.
func (q *queryBuilder) rankNode(calc *Node, spec rankop.RankSpec, over *sql.Over, rnName string, partNames, orderNames []string, procTime bool) *Node {
	fields := append([]row.Field(nil), calc.Schema.Fields...)
	rnCol := -1
	if spec.OutputRank {
		rnCol = len(fields)
		fields = append(fields, row.Field{Name: rnName, Type: row.Type{ID: row.BigInt, NotNull: true}})
	}
	n := &Node{Input: calc, Schema: row.NewSchema(fields...), TimeAttr: -1, Bounded: calc.Bounded}
	part, orderText := rankTexts(over, partNames, orderNames)
	if dd, keepLast, rowTime := dedupOf(calc, spec, procTime); dd {
		keep := "FirstRow"
		if keepLast {
			keep = "LastRow"
		}
		order := "PROCTIME"
		if rowTime {
			order = "ROWTIME"
		}
		n.Kind = DedupNode
		n.op = &dedupOp{&rankop.DedupSpec{Key: spec.Partition, TimeCol: spec.Order[0].Col, RowTime: rowTime, KeepLast: keepLast, Batch: spec.Batch}}
		n.Mode = dedupMode(spec.Partition, keepLast, spec.Batch)
		if rowTime {
			// The time attribute survives, as in Flink: keep first emits
			// rows at the watermark, insert-only; keep last replaces a
			// key's row only by a later one, so its changes follow the
			// watermark, and the result can be the versioned table of a
			// temporal join (Flink's versioned view).
			n.TimeAttr = calc.TimeAttr
		}
		n.Label = fmt.Sprintf("Deduplicate(keep=%s, key=%s, order=%s)", keep, part, order)
		return n
	}
	n.Kind = RankNode
	spec.Strategy, spec.RowKey = rankStrategy(calc, spec)
	n.op = &rankOp{spec: &spec}
	n.Mode = rankMode(spec.Partition, spec.Kind == rankop.RowNumber, spec.Start == 1 && spec.End == 1, rnCol, calc.Mode, spec.Batch)
	strategy := "strategy=" + strategyText(spec) + ", "
	if spec.Batch {
		strategy = ""
	}
	rankType := ""
	if spec.Kind != rankop.RowNumber {
		rankType = "rankType=" + spec.Kind.String() + ", "
	}
	noNumber := ""
	if !spec.OutputRank {
		noNumber = ", outputRankNumber=false"
	}
	n.Label = fmt.Sprintf("Rank(%s%srankRange=[%d..%d], partitionBy=%s, orderBy=[%s]%s)",
		strategy, rankType, spec.Start, spec.End, part, strings.Join(orderText, ", "), noNumber)
	return n
}

// rankTexts are a rank's partition ([a, b]) and order keys for its label.
func rankTexts(over *sql.Over, partNames, orderNames []string) (string, []string) {
	orderText := make([]string, len(orderNames))
	for i, o := range over.Window.OrderBy {
		orderText[i] = keyText(o.X, orderNames[i])
		if o.Desc {
			orderText[i] += " DESC"
		}
		if o.Nulls != sql.NullsDefault {
			orderText[i] += map[bool]string{true: " NULLS FIRST", false: " NULLS LAST"}[o.NullsFirst()]
		}
	}
	partText := make([]string, len(partNames))
	for i, e := range over.Window.PartitionBy {
		partText[i] = keyText(e, partNames[i])
	}
	return "[" + strings.Join(partText, ", ") + "]", orderText
}

// keyText names a partition or order key in a label: the column it is,
// or the expression when it is computed.
func keyText(e sql.Expr, col string) string {
	if strings.HasPrefix(col, "$rank") {
		return sql.Format(e)
	}
	return col
}

// dedupOf reports whether a rank is a deduplication (Flink's
// RankUtil.canConvertToDeduplicate): ROW_NUMBER, rank 1 only, the rank
// number not read, and one ORDER BY key that is a time attribute of an
// insert-only input (procTime: the processing-time attribute). DESC keeps
// the last row.
func dedupOf(calc *Node, spec rankop.RankSpec, procTime bool) (ok, keepLast, rowTime bool) {
	if spec.Kind != rankop.RowNumber || spec.Start != 1 || spec.End != 1 || spec.OutputRank || len(spec.Order) != 1 || calc.Mode.Updating {
		return false, false, false
	}
	c := spec.Order[0].Col
	switch {
	case c == calc.TimeAttr && c >= 0:
		return true, spec.Order[0].Desc, true
	case procTime:
		return true, spec.Order[0].Desc, false
	}
	return false, false, false
}

// procTimeCol reports whether column c of n is a processing-time
// attribute: a source's computed column `AS PROCTIME()` or a select
// list's bare PROCTIME() call, passed on unchanged through projections.
// Any other node (an aggregate, a join) materializes it, as Flink does.
func procTimeCol(n *Node, c int) bool {
	for x := n; x != nil && c >= 0; x = x.Input {
		switch x.Kind {
		case CalcNode:
			calc := x.calc()
			switch {
			case c < len(calc.proc) && calc.proc[c]:
				return true
			case calc.colSrc != nil:
				c = calc.colSrc[c]
			default:
				c = x.Input.Schema.Index(x.Schema.Fields[c].Name)
			}
		case FunctionNode, LateralNode:
			// The input's columns come first, as they were.
			if c >= x.Input.Schema.Len() {
				return false
			}
		case ScanNode:
			src := x.scanned()
			phys := src.Physical.Len()
			return c >= phys && c-phys < len(src.computed) && src.computed[c-phys].Clock == "PROCTIME()" && x.Schema.Fields[c].Type.ID == row.TimestampLTZ
		default:
			return false
		}
	}
	return false
}

// rankCondition takes the rank conditions out of an outer WHERE: the
// conjuncts comparing rn with an integer literal. It returns the range and
// the WHERE left.
func rankCondition(where sql.Expr, rn, alias string) (rankRange, sql.Expr, error) {
	rr := rankRange{start: 1, end: -1}
	var rest []sql.Expr
	isRN := func(e sql.Expr) bool {
		ref, ok := e.(*sql.ColumnRef)
		return ok && strings.EqualFold(ref.Column.Name, rn) && (ref.Table.IsZero() || strings.EqualFold(ref.Table.Name, alias))
	}
	intLit := func(e sql.Expr) (int64, bool) {
		l, ok := e.(*sql.Literal)
		if !ok || l.Kind != sql.LitInt {
			return 0, false
		}
		return l.Value.Int64(), true
	}
	bound := func(op sql.BinaryOp, n int64) {
		rr.found = true
		switch op {
		case sql.OpLe:
			rr.end = minEnd(rr.end, n)
		case sql.OpLt:
			rr.end = minEnd(rr.end, n-1)
		case sql.OpEq:
			rr.start, rr.end = max(rr.start, n), minEnd(rr.end, n)
		case sql.OpGe:
			rr.start = max(rr.start, n)
		case sql.OpGt:
			rr.start = max(rr.start, n+1)
		}
	}
	flip := map[sql.BinaryOp]sql.BinaryOp{sql.OpLe: sql.OpGe, sql.OpLt: sql.OpGt, sql.OpGe: sql.OpLe, sql.OpGt: sql.OpLt, sql.OpEq: sql.OpEq}
	for _, c := range conjuncts(where) {
		switch c := c.(type) {
		case *sql.Binary:
			if _, cmp := flip[c.Op]; cmp {
				if n, ok := intLit(c.R); ok && isRN(c.L) {
					bound(c.Op, n)
					continue
				}
				if n, ok := intLit(c.L); ok && isRN(c.R) {
					bound(flip[c.Op], n)
					continue
				}
			}
		case *sql.Between:
			lo, ok1 := intLit(c.Lo)
			hi, ok2 := intLit(c.Hi)
			if !c.Not && ok1 && ok2 && isRN(c.X) {
				bound(sql.OpGe, lo)
				bound(sql.OpLe, hi)
				continue
			}
		}
		rest = append(rest, c)
	}
	if rr.found && rr.end < 0 {
		return rr, nil, errAt(where.Pos(), "the Top-N condition on %s sets no upper bound: add %s <= N", rn, rn)
	}
	if rr.found && (rr.end < rr.start || rr.end < 1) {
		return rr, nil, errAt(where.Pos(), "the Top-N condition on %s selects no rank (%d to %d)", rn, rr.start, rr.end)
	}
	return rr, andAll(rest), nil
}

func minEnd(end, n int64) int64 {
	if end < 0 || n < end {
		return n
	}
	return end
}

func conjuncts(e sql.Expr) []sql.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*sql.Binary); ok && b.Op == sql.OpAnd {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []sql.Expr{e}
}

func andAll(es []sql.Expr) sql.Expr {
	if len(es) == 0 {
		return nil
	}
	out := es[0]
	for _, e := range es[1:] {
		out = &sql.Binary{Op: sql.OpAnd, OpAt: e.Pos(), L: out, R: e}
	}
	return out
}

// readsColumn reports whether the outer query (its rank conditions taken
// out) reads column name of the subquery alias; a * reads every column.
func readsColumn(sel *sql.Select, name, alias string) bool {
	found := false
	visit := func(e sql.Expr) {
		if e == nil {
			return
		}
		walk(e, func(x sql.Expr) bool {
			switch x := x.(type) {
			case *sql.ColumnRef:
				if strings.EqualFold(x.Column.Name, name) && (x.Table.IsZero() || strings.EqualFold(x.Table.Name, alias)) {
					found = true
				}
			case *sql.Star:
				if x.Table.IsZero() || strings.EqualFold(x.Table.Name, alias) {
					found = true
				}
			}
			return !found
		})
	}
	for _, it := range sel.Items {
		visit(it.Expr)
	}
	visit(sel.Where)
	for _, g := range sel.GroupBy {
		visit(g)
	}
	visit(sel.Having)
	return found
}

func containsOver(e sql.Expr) bool {
	found := false
	if e == nil {
		return false
	}
	walk(e, func(x sql.Expr) bool {
		if _, ok := x.(*sql.Over); ok {
			found = true
		}
		return !found
	})
	return found
}

func anyAgg(items []*sql.SelectItem) bool {
	for _, it := range items {
		if containsAgg(it.Expr) {
			return true
		}
	}
	return false
}

package plan

import (
	"slices"
	"strconv"
	"strings"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/sql"
)

// This file picks a streaming Top-N's strategy as Flink's
// RankProcessStrategy.analyzeRankProcessStrategies does, from the modified
// monotonicity of its input (FlinkRelMdModifiedMonotonicity): how an
// update can change each column.

// monotonicity is Calcite's SqlMonotonicity as Flink's metadata uses it.
type monotonicity uint8

const (
	notMonotonic monotonicity = iota
	constantMono              // an update never changes the column
	increasing                // an update only raises it
	decreasing                // an update only lowers it
)

// modifiedMonotonicity returns the monotonicity of each column of n, or
// nil when n may delete rows or is not analysed (Flink's null).
func modifiedMonotonicity(n *Node) []monotonicity {
	width := n.Schema.Len()
	switch n.Kind {
	case ValuesNode:
		return constants(width)
	case ScanNode:
		if n.Mode.Updating {
			// A changelog source: NOT_MONOTONIC everywhere.
			return make([]monotonicity, width)
		}
		return constants(width)
	case CalcNode:
		in := modifiedMonotonicity(n.Input)
		switch {
		case in == nil:
			return nil
		case allConstant(in):
			return constants(width)
		}
		out := make([]monotonicity, width)
		c := n.calc()
		if c.filter != nil {
			// A condition over changing columns turns updates into
			// deletes (Flink's isNeedRetract, taken conservatively).
			return out
		}
		for i, src := range c.colSrc {
			if src >= 0 && i < width {
				out[i] = in[src]
			}
		}
		return out
	case GroupAggNode:
		return groupAggMonotonicity(n)
	case DistinctNode:
		if in := modifiedMonotonicity(n.Input); in != nil && allConstant(in) {
			return constants(width)
		}
		return nil
	case RankNode:
		return rankMonotonicity(n)
	case DedupNode:
		in := modifiedMonotonicity(n.Input)
		if in == nil || !allConstant(in) {
			return nil
		}
		dd := n.deduped().spec
		if !dd.KeepLast && !dd.RowTime {
			return constants(width) // keep-first emits no updates
		}
		out := make([]monotonicity, width)
		for _, k := range dd.Key {
			out[k] = constantMono
		}
		return out
	case OverAggNode, MatchNode:
		if n.Mode.Updating {
			// An OVER ordered by a non-time column updates its results.
			return nil
		}
		return constants(width)
	case FunctionNode:
		// The input's columns as they were; a function's results are
		// not analysed.
		in := modifiedMonotonicity(n.Input)
		if in == nil {
			return nil
		}
		out := make([]monotonicity, width)
		copy(out, in)
		return out
	case UnnestNode, LateralNode:
		in := modifiedMonotonicity(n.Input)
		switch {
		case in == nil:
			return nil
		case allConstant(in):
			return constants(width)
		}
		return make([]monotonicity, width)
	case UnionNode:
		var first []monotonicity
		for i, in := range n.Inputs {
			m := modifiedMonotonicity(in)
			if m == nil {
				return nil
			}
			if i == 0 {
				first = m
			} else if !slices.Equal(first, m) {
				return make([]monotonicity, width)
			}
		}
		return first
	case JoinNode:
		l, r := modifiedMonotonicity(n.Inputs[0]), modifiedMonotonicity(n.Inputs[1])
		if l != nil && r != nil && allConstant(l) && allConstant(r) {
			return constants(width)
		}
		return nil
	}
	// Window aggregates, window Top-N and window TVFs: Flink has no
	// handler and answers null.
	return nil
}

// groupAggMonotonicity is getRelModifiedMonotonicityOnAggregate.
func groupAggMonotonicity(n *Node) []monotonicity {
	if n.batch {
		return nil
	}
	in := modifiedMonotonicity(n.Input)
	if in == nil {
		return nil
	}
	g := n.groupAgg()
	for _, k := range g.keys {
		if in[k] != constantMono {
			return nil
		}
	}
	out := constants(len(g.keys))
	out = append(out, g.aggMono...)
	if !allConstant(in) {
		// The input updates: an aggregate keeps its direction only
		// when its argument moves the same way (COUNT always does).
		for j, a := range g.aggs {
			switch {
			case isCount(a.Func):
			case a.Arg < 0 || a.Func == aggop.ListAgg || in[a.Arg] != out[len(g.keys)+j]:
				out[len(g.keys)+j] = notMonotonic
			}
		}
	}
	return out
}

// rankMonotonicity is getRelModifiedMonotonicity of a Rank.
func rankMonotonicity(n *Node) []monotonicity {
	in := modifiedMonotonicity(n.Input)
	if in == nil {
		return nil
	}
	spec := n.ranked().spec
	for _, k := range spec.Partition {
		if in[k] != constantMono {
			return nil
		}
	}
	out := make([]monotonicity, n.Schema.Len())
	for _, k := range spec.Partition {
		out[k] = constantMono
	}
	if spec.OutputRank {
		out[len(out)-1] = constantMono
	}
	first := spec.Order[0]
	switch m := in[first.Col]; {
	case first.Desc && (m == increasing || m == constantMono):
		out[first.Col] = increasing
	case !first.Desc && (m == decreasing || m == constantMono):
		out[first.Col] = decreasing
	default:
		out[first.Col] = notMonotonic
	}
	return out
}

func isCount(f aggop.AggFunc) bool {
	return f == aggop.CountStar || f == aggop.Count || f == aggop.CountDistinct
}

func constants(n int) []monotonicity {
	out := make([]monotonicity, n)
	for i := range out {
		out[i] = constantMono
	}
	return out
}

func allConstant(m []monotonicity) bool {
	for _, x := range m {
		if x != constantMono {
			return false
		}
	}
	return true
}

// aggCallMonotonicity is getMonotonicityOnAggCall: an aggregate's
// direction over an insert-only input. COUNT and MAX rise, MIN falls, a
// SUM rises when its argument is known to be >= 0 and falls when it is
// known to be <= 0 (Flink's column interval: a literal, or bounds on the
// argument column in WHERE or the call's FILTER).
func aggCallMonotonicity(call *sql.Call, f aggop.AggFunc, where sql.Expr) monotonicity {
	switch f {
	case aggop.CountStar, aggop.Count, aggop.CountDistinct, aggop.Max:
		return increasing
	case aggop.Min:
		return decreasing
	case aggop.Sum, aggop.SumDistinct:
		if len(call.Args) != 1 {
			return notMonotonic
		}
		conds := conjuncts(where)
		if call.Filter != nil {
			conds = append(conds, conjuncts(call.Filter)...)
		}
		return sumMonotonicity(call.Args[0], conds)
	}
	return notMonotonic
}

// sumMonotonicity reads the value interval of a SUM's argument as
// Flink's isValueGreaterThanZero tests it: a lower bound (a literal, or a
// finite range, is one) decides; an upper bound alone may make it
// decreasing.
func sumMonotonicity(arg sql.Expr, conds []sql.Expr) monotonicity {
	if v, ok := numLit(arg); ok {
		if v >= 0 {
			return increasing
		}
		return notMonotonic
	}
	ref, ok := arg.(*sql.ColumnRef)
	if !ok {
		return notMonotonic
	}
	isArg := func(e sql.Expr) bool {
		r, ok := e.(*sql.ColumnRef)
		return ok && strings.EqualFold(r.Column.Name, ref.Column.Name)
	}
	var lower, upper []float64
	bound := func(op sql.BinaryOp, v float64) {
		switch op {
		case sql.OpGe, sql.OpGt:
			lower = append(lower, v)
		case sql.OpLe, sql.OpLt:
			upper = append(upper, v)
		case sql.OpEq:
			lower, upper = append(lower, v), append(upper, v)
		}
	}
	flip := map[sql.BinaryOp]sql.BinaryOp{sql.OpLe: sql.OpGe, sql.OpLt: sql.OpGt, sql.OpGe: sql.OpLe, sql.OpGt: sql.OpLt, sql.OpEq: sql.OpEq}
	for _, c := range conds {
		switch c := c.(type) {
		case *sql.Binary:
			if v, ok := numLit(c.R); ok && isArg(c.L) {
				bound(c.Op, v)
			} else if v, ok := numLit(c.L); ok && isArg(c.R) {
				bound(flip[c.Op], v)
			}
		case *sql.Between:
			lo, ok1 := numLit(c.Lo)
			hi, ok2 := numLit(c.Hi)
			if !c.Not && ok1 && ok2 && isArg(c.X) {
				bound(sql.OpGe, lo)
				bound(sql.OpLe, hi)
			}
		}
	}
	switch {
	case len(lower) > 0:
		if slices.Max(lower) >= 0 {
			return increasing
		}
	case len(upper) > 0:
		if slices.Min(upper) <= 0 {
			return decreasing
		}
	}
	return notMonotonic
}

func numLit(e sql.Expr) (float64, bool) {
	l, ok := e.(*sql.Literal)
	if !ok || (l.Kind != sql.LitInt && l.Kind != sql.LitDecimal && l.Kind != sql.LitDouble) {
		return 0, false
	}
	v, err := strconv.ParseFloat(l.Text, 64)
	return v, err == nil
}

// rankStrategy picks a streaming Top-N's strategy over calc: AppendFast
// for an insert-only input; UpdateFast when the input's upsert key holds
// the partition key, every ORDER BY key is monotonic in its direction
// (rising under DESC, falling under ASC, or constant), and the input can
// drop its -U (Flink's UpdateKindTrait ONLY_UPDATE_AFTER: Calcs without
// a condition over a GROUP BY, DISTINCT or deduplication); else Retract.
// It returns the upsert key UpdateFast reads rows by.
func rankStrategy(calc *Node, spec rankop.RankSpec) (rankop.RankStrategy, []int) {
	if !calc.Mode.Updating {
		return rankop.AppendFast, nil
	}
	if !calc.Mode.HasKey || !containsAll(calc.Mode.Key, spec.Partition) || !dropsUpdateBefore(calc) {
		return rankop.Retract, nil
	}
	m := modifiedMonotonicity(calc)
	if m == nil {
		return rankop.Retract, nil
	}
	for _, o := range spec.Order {
		switch x := m[o.Col]; {
		case x == constantMono, o.Desc && x == increasing, !o.Desc && x == decreasing:
		default:
			return rankop.Retract, nil
		}
	}
	return rankop.UpdateFast, calc.Mode.Key
}

// dropsUpdateBefore reports whether n can give its updates without -U.
func dropsUpdateBefore(n *Node) bool {
	for ; n != nil; n = n.Input {
		switch n.Kind {
		case CalcNode:
			if n.Filters() {
				return false
			}
		case GroupAggNode, DistinctNode, DedupNode:
			return true
		default:
			return false
		}
	}
	return false
}

// aggSources gives an aggregate's first Calc its colSrc (keys and
// arguments that are plain columns of schema; width columns in all) and
// the aggregate its aggMono.
func aggSources(keys []sql.Expr, calls []*sql.Call, aggs []aggop.AggCall, width int, schema row.Schema, where sql.Expr) ([]int, []monotonicity) {
	src := make([]int, width)
	for i := range src {
		src[i] = -1
	}
	column := func(e sql.Expr) int {
		if ref, ok := e.(*sql.ColumnRef); ok {
			return schema.Index(ref.Column.Name)
		}
		return -1
	}
	for i, k := range keys {
		src[i] = column(k)
	}
	mono := make([]monotonicity, len(calls))
	for j, c := range calls {
		if a := aggs[j].Arg; a >= 0 && a < width && len(c.Args) == 1 && !(aggs[j].HasFilter && a == aggs[j].Filter) {
			src[a] = column(c.Args[0])
		}
		mono[j] = aggCallMonotonicity(c, aggs[j].Func, where)
	}
	return src, mono
}

// strategyText names a strategy as Flink's EXPLAIN does:
// UpdateFastStrategy lists its upsert key's columns (UpdateFastStrategy[0,1]).
func strategyText(spec rankop.RankSpec) string {
	if spec.Strategy != rankop.UpdateFast {
		return spec.Strategy.String()
	}
	key := make([]string, len(spec.RowKey))
	for i, k := range spec.RowKey {
		key[i] = strconv.Itoa(k)
	}
	return spec.Strategy.String() + "[" + strings.Join(key, ",") + "]"
}

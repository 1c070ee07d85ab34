package plan

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/sql"
)

// pushJoinFilters moves the conjuncts of a WHERE over a regular INNER
// join that read the columns of one input only into a Calc over that
// input, below the join (Flink's FlinkFilterJoinRule): the join then
// keeps only the rows that can pass, and joins nothing the WHERE would
// drop. `bid JOIN auction ON ... WHERE auction.category = 10` kept every
// auction and built a joined row for every bid, four fifths of them
// dropped by the Calc after it. It returns the conjuncts left to the
// WHERE (nil: none).
//
// Only an insert-only input gets a filter: over an updating one a Calc
// emits -D where Flink's filter keeps -U, which would change what the
// join emits. A conjunct stays above the join when it reads both inputs,
// none, a ROW field it cannot place, or calls something nondeterministic
// (its value could differ between the two places), as Flink keeps those.
//
// The join's state ID and fingerprint do not change (its label and
// columns are the same), so a checkpoint of the plan before holds rows
// the filter now drops: the join drops them as it restores them
// (JoinSpec.LeftKeep, RightKeep), so that its state is what this plan
// would have kept.
func (q *queryBuilder) pushJoinFilters(s *scope, where sql.Expr) (sql.Expr, error) {
	n := s.node
	if n == nil || n.Kind != JoinNode || s.cols == nil || len(n.Inputs) != 2 {
		return where, nil
	}
	jo, ok := n.op.(*joinOp)
	if !ok || jo.join == nil || jo.join.Kind != joinop.InnerJoin {
		return where, nil
	}
	lw := n.Inputs[0].Schema.Len()
	if n.Schema.Len() != lw+n.Inputs[1].Schema.Len() {
		return where, nil // the inputs gained key columns: names differ
	}
	var rest []sql.Expr
	var pushed [2][]sql.Expr
	for _, c := range conjuncts(where) {
		u, err := s.unqualifyJoined(c)
		if err != nil {
			return nil, err
		}
		side := sideOf(u, n.Schema, lw)
		if side < 0 || n.Inputs[side].Mode.Updating || hasSubquery(u) {
			rest = append(rest, c)
			continue
		}
		if side == 1 {
			u = rightNames(u, n.Schema, n.Inputs[1].Schema, lw)
		}
		cc, err := compileExpr(q.zone(), u, n.Inputs[side].Schema, s.table)
		if err != nil || cc.Clock != "" || (cc.Type.ID != row.Boolean && cc.Type.ID != row.Null) {
			// Left as it was: the WHERE's own compile reports what is
			// wrong with it, as it would without the pushdown.
			rest = append(rest, c)
			continue
		}
		pushed[side] = append(pushed[side], u)
	}
	for side, conds := range pushed {
		if len(conds) == 0 {
			continue
		}
		cond := andAll(conds)
		in := n.Inputs[side]
		c, err := compileExpr(q.zone(), cond, in.Schema, s.table)
		if err != nil {
			return nil, err
		}
		n.Inputs[side] = filterCalc(in, c, cond)
		if side == 0 {
			jo.join.LeftKeep = c.True
		} else {
			jo.join.RightKeep = c.True
		}
	}
	return andAll(rest), nil
}

// filterCalc is a Calc over in that keeps the rows c (of in's columns)
// is true of, all their columns as they are.
func filterCalc(in *Node, c *expr.Compiled, cond sql.Expr) *Node {
	colMap := make([]int, in.Schema.Len())
	colSrc := make([]int, in.Schema.Len())
	texts := make([]string, in.Schema.Len())
	for i, f := range in.Schema.Fields {
		colMap[i], colSrc[i], texts[i] = i, i, f.Name
	}
	n := &Node{Kind: CalcNode, Input: in, Schema: in.Schema, Mode: calcMode(in.Mode, colMap),
		TimeAttr: in.TimeAttr, Bounded: in.Bounded, op: &calcOp{filter: c, colSrc: colSrc}}
	n.Label = fmt.Sprintf("Calc(select=[%s], where=[%s])", strings.Join(texts, ", "), sql.Format(cond))
	return n
}

// hasSubquery reports whether e holds a subquery (EXISTS, IN (SELECT
// ...)), which is planned as a join of its own, never pushed.
func hasSubquery(e sql.Expr) bool {
	found := false
	walk(e, func(x sql.Expr) bool {
		switch x.(type) {
		case *sql.Exists, *sql.InQuery:
			found = true
		}
		return !found
	})
	return found
}

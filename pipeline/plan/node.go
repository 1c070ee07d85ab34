package plan

import (
	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// NodeKind names a plan operator.
type NodeKind uint8

const (
	ScanNode NodeKind = iota + 1
	CalcNode
	GroupAggNode
	WindowAggNode
	DistinctNode
	// UnionNode merges Inputs (UNION ALL); Input is nil.
	UnionNode
	// UnnestNode joins each input row with the elements of one of its
	// ARRAY or MAP values (CROSS JOIN UNNEST).
	UnnestNode
	// RankNode is a Top-N, DedupNode a deduplication (rank.go).
	RankNode
	DedupNode
	// WindowTableNode reads a window TVF as rows, WindowRankNode is a
	// window Top-N or deduplication (window_rank.go).
	WindowTableNode
	WindowRankNode
	// OverAggNode computes OVER aggregates (over.go).
	OverAggNode
	// JoinNode joins Inputs[0] (left) and Inputs[1] (right); Input is
	// nil (join.go).
	JoinNode
	// LookupJoinNode joins Input with rows looked up by key in a source
	// table (lookup.go).
	LookupJoinNode
)

// Node is one operator of the logical plan. A node read by several
// consumers (a table read by two sinks) becomes one runtime node whose
// output fans out.
type Node struct {
	Kind  NodeKind
	Label string // Flink-style description for explain
	Input *Node
	// Inputs are a UnionNode's inputs, in the query's order.
	Inputs []*Node

	Schema row.Schema
	Mode   Changelog
	// TimeAttr is the index of the event-time attribute column, or -1.
	TimeAttr int
	Bounded  bool

	source *Source // ScanNode

	filter  *expr.Compiled   // CalcNode
	project []*expr.Compiled // CalcNode; nil passes rows through

	keys   []int           // GroupAggNode, WindowAggNode
	aggs   []aggop.AggCall // GroupAggNode, WindowAggNode
	window *windowop.WindowSpec
	// attached: a WindowAggNode over rows that carry their windows
	// (windowop.WindowOptions.Attached); attachedLTZ: those windows were
	// over a TIMESTAMP_LTZ.
	attached, attachedLTZ bool
	over                  *windowop.OverSpec // OverAggNode
	batch                 bool

	unnest   *runtime.Unnest // UnnestNode: a template, copied per run
	unnestOf *expr.Compiled  // UnnestNode: the unnested expression

	rank  *rankop.RankSpec  // RankNode
	dedup *rankop.DedupSpec // DedupNode

	windowTable *windowop.WindowTable    // WindowTableNode
	windowRank  *windowop.WindowRankSpec // WindowRankNode

	join     *joinop.JoinSpec         // JoinNode
	interval *joinop.IntervalJoinSpec // JoinNode of an interval join (join_interval.go)
	temporal *joinop.TemporalJoinSpec // JoinNode of a temporal join (join_temporal.go)
	// windowJoin is set on a JoinNode of a window join (join_window.go).
	windowJoin *joinop.WindowJoinSpec

	lookup *lookupPlan // LookupJoinNode

	// colSrc is the input column each output column of a CalcNode
	// copies, -1 when computed (nil when unknown); aggMono is each
	// aggregate's monotonicity over an insert-only input (GroupAggNode).
	// monotonic.go reads both to pick a Top-N's strategy.
	colSrc  []int
	aggMono []monotonicity
}

// scan returns the scan at the bottom of n's input chain, whose on_error
// policy the node's run-time errors follow.
func (n *Node) scan() *Source {
	for x := n; x != nil; x = x.Input {
		if x.Kind == ScanNode {
			return x.source
		}
	}
	return nil
}

// inputs returns what n reads: its Input, or a union's Inputs.
func (n *Node) inputs() []*Node {
	if n.Kind == UnionNode || n.Kind == JoinNode {
		return n.Inputs
	}
	if n.Input == nil {
		return nil
	}
	return []*Node{n.Input}
}

// Filters reports whether n is a CalcNode with a condition (WHERE,
// HAVING): over an updating input it emits -D where Flink emits -U
// (ARCHITECTURE §4), which the Flink export lists as a difference.
func (n *Node) Filters() bool { return n.Kind == CalcNode && n.filter != nil }

package plan

import (
	"github.com/etld/etld/pipeline/row"
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
	// DeadLettersNode is the records on_error policies set aside, which
	// a sink takes (deadletter.go); no query reads it.
	DeadLettersNode
	// SetOpNode is INTERSECT or EXCEPT [ALL] over a union of both sides
	// whose rows carry their side (setop.go).
	SetOpNode
	// ExpandNode emits each row once per grouping set (grouping.go).
	ExpandNode
	// SingleRowNode passes a scalar subquery's result on while it has at
	// most one row (scalar.go).
	SingleRowNode
	// MatchNode is MATCH_RECOGNIZE (match.go).
	MatchNode
	// ValuesNode is a constant table: VALUES, a SELECT without FROM, a
	// lone UNNEST's one row (values.go). It has no input.
	ValuesNode
	// FunctionNode appends the results of user scalar function calls
	// to its input's rows (functions.go); LateralNode joins each row with
	// a table function's rows for it (lateral.go).
	FunctionNode
	LateralNode
	// NormalizeNode turns an upsert source's changelog into a full one by
	// keeping each key's last row (normalize.go); it is the source's
	// table, over its scan.
	NormalizeNode
	// SortNode is a batch query's ORDER BY without a row count
	// (order_sort.go).
	SortNode
)

// Node is one operator of the logical plan. A node read by several
// consumers (a table read by two sinks) becomes one runtime node whose
// output fans out.
type Node struct {
	Kind  NodeKind
	Label string // Flink-style description for explain
	// Renamed marks the Calc of a select list that numbered a repeated
	// output name (id, id0): Flink keeps the repeated name there, and
	// numbers it only in a query's final result.
	Renamed bool
	Input   *Node
	// Inputs are a UnionNode's inputs, in the query's order.
	Inputs []*Node

	Schema row.Schema
	Mode   Changelog
	// TimeAttr is the index of the event-time attribute column, or -1.
	TimeAttr int
	Bounded  bool

	// op is what the node's kind carries and how it builds its operator
	// (payload.go); nil for a union.
	op payload
	// batch: the node runs in batch mode (an aggregate, OVER or
	// DISTINCT emits its results at the end of its input).
	batch bool
}

// scan returns the scan at the bottom of n's input chain, whose on_error
// policy the node's run-time errors follow.
func (n *Node) scan() *Source {
	for x := n; x != nil; x = x.Input {
		if x.Kind == ScanNode {
			return x.scanned()
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
// (a filter cannot turn the update of a row it keeps into one it drops
// without retracting the whole row), which the Flink export lists as a difference.
func (n *Node) Filters() bool { c := n.calc(); return c != nil && c.filter != nil }

package plan

import (
	"fmt"
	"path/filepath"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/spec"
)

// Several etld processes can run one pipeline on one Kafka consumer group
// (connector.SharedSource): each reads the partitions the group assigns
// it. That splits the rows, not the state: an operator that keeps state
// across rows would hold each process's share alone. checkShared refuses
// a source declared shared (group_shared) under such an operator, at the
// option, and tells every shared-capable source under one, so that it
// refuses at run time a group it finds shared without the declaration.

// keepsState reports whether n's output depends on rows before the
// current one. Only the operators known to look at one row at a time are
// stateless; any other kind, also one added later, counts as stateful.
func (n *Node) keepsState() bool {
	switch n.Kind {
	case ScanNode, ValuesNode, CalcNode, UnionNode, UnnestNode, WindowTableNode, LookupJoinNode, FunctionNode, LateralNode:
		return false
	}
	return true
}

// checkShared runs once every table and sink is planned.
func (b *builder) checkShared() {
	// Every planned node once, each with the first transform that
	// computes it, in the order of the transforms: a transform's walk
	// owns the nodes no earlier transform reached.
	var nodes []*Node
	owner := map[*Node]*spec.Transform{}
	var walk func(n *Node, t *spec.Transform)
	walk = func(n *Node, t *spec.Transform) {
		if n == nil {
			return
		}
		if _, done := owner[n]; done {
			return
		}
		owner[n] = t
		for _, in := range n.inputs() {
			walk(in, t)
		}
		nodes = append(nodes, n)
	}
	// Table roots first, so that a transform read by another is named
	// as itself.
	for _, t := range b.plan.Transforms {
		if t.Root != nil {
			owner[t.Root] = t.Transform
		}
	}
	for _, t := range b.plan.Transforms {
		if t.Root != nil {
			delete(owner, t.Root)
			walk(t.Root, t.Transform)
		}
	}
	for _, src := range b.plan.Sources {
		ss, ok := src.Conn.(connector.SharedSource)
		if !ok || src.Table == nil {
			continue
		}
		var stateful *Node
		for _, n := range nodes {
			if n.keepsState() && reads(n, src.Table.Root) {
				stateful = n
				break
			}
		}
		if stateful == nil {
			continue
		}
		what := stateful.Label
		where := ""
		if t := owner[stateful]; t != nil {
			what = fmt.Sprintf("transform %q (%s)", t.Name, stateful.Label)
			where = fmt.Sprintf(" at %s", t.Pos)
		}
		ss.KeepsState(what)
		opt := ss.SharedOption()
		if opt == "" {
			continue
		}
		file := filepath.Base(src.Spec.Pos.File)
		b.errs.Addf(optionAt(src.Spec.Pos, src.Spec.Options, opt), src.Spec.Path+"."+opt,
			"source %q is split among several processes (%s: true), but %s%s reads it and keeps state: each process would hold the state of its own partitions only, and write results for them alone. Run this pipeline in one process (leave out %s), or on Flink, which splits state by key across its workers: `etld export flink %s` writes the Flink SQL script",
			src.Spec.Name, opt, what, where, opt, file)
	}
}

// reads reports whether n reads from the node from, directly or not.
func reads(n, from *Node) bool {
	if n == from {
		return true
	}
	for _, in := range n.inputs() {
		if reads(in, from) {
			return true
		}
	}
	return false
}

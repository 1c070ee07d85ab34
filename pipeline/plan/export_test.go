package plan

import (
	"fmt"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// TTLMismatches lists the nodes of p whose operator takes a state TTL
// (operator.TTLSetter) while honoursTTL says it does not, or the reverse:
// explain would show a retention the run does not apply, or hide one it
// does.
func TTLMismatches(p *Plan) []string {
	var out []string
	seen := map[*Node]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		for _, in := range n.inputs() {
			walk(in)
		}
		var op operator.Lifecycle
		switch n.Kind {
		case ScanNode, ValuesNode, UnionNode, LookupJoinNode, DeadLettersNode:
			return
		default:
			var err error
			if op, _, err = p.operator(n, ""); err != nil {
				out = append(out, err.Error())
				return
			}
		}
		_, takes := op.(operator.TTLSetter)
		if takes && n.batch {
			takes = false // SetStateTTL ignores a TTL in batch mode
		}
		if takes != n.honoursTTL() {
			out = append(out, fmt.Sprintf("%s: operator %T takes a TTL: %v, explain says %v", n.Label, op, takes, n.honoursTTL()))
		}
	}
	for _, t := range p.Transforms {
		walk(t.Root)
	}
	return out
}

// NodeKinds lists the kinds of p's nodes, for a test that checks it saw
// every stateful one.
func NodeKinds(p *Plan) map[NodeKind]bool {
	kinds := map[NodeKind]bool{}
	seen := map[*Node]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n], kinds[n.Kind] = true, true
		for _, in := range n.inputs() {
			walk(in)
		}
	}
	for _, t := range p.Transforms {
		walk(t.Root)
	}
	return kinds
}

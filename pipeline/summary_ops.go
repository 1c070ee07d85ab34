// The operators of a run's summary: what each one did, named by its
// short id.

package pipeline

import "github.com/etld/etld/pipeline/runtime"

// Operator is one operator of a run.
type Operator struct {
	// ID is the operator's short name, "<transform>/<kind>#<n>"
	// (plan.NodeInfo.OperatorID), which stays put while the SQL around
	// it changes; Plan is its plan text, which does not; Transform the
	// pipeline file's transform it belongs to.
	ID, Plan, Transform string
	// In counts the changes it received, Out those it sent on.
	In, Out int64
}

// shortName is a node's name in metrics: its short id, else its name.
func shortName(n *runtime.Node) string {
	if n.Short != "" {
		return n.Short
	}
	return n.Name
}

// operators reads the counters of g's operators and UNION ALLs (a join's
// union of its inputs is the join's own part and has no short id).
func operators(g *runtime.Graph) []Operator {
	var out []Operator
	add := func(n *runtime.Node) {
		out = append(out, Operator{ID: n.Short, Plan: n.Name, Transform: n.Transform, In: n.Stats.RowsIn.Load(), Out: n.Stats.RowsOut.Load()})
	}
	for _, n := range g.Ops {
		add(&n.Node)
	}
	for _, u := range g.Unions {
		if u.Short != "" {
			add(&u.Node)
		}
	}
	return out
}

package plan

import "github.com/etld/etld/pipeline/runtime/joinop"

// buildInput picks the input a streaming join reads to its end before it
// takes rows of the other (runtime.UnionNode.BuildFirst), so that its
// changelog does not depend on which input happens to be read first:
//
//   - one input fed only by bounded sources, the other not: the bounded
//     one (a dimension file enriching a stream);
//   - both bounded: the input the join pads with NULLs or tests for a
//     match, the right one of a LEFT, SEMI or ANTI join and of an INNER
//     or FULL join, the left one of a RIGHT join. A regular join keeps
//     every row of both inputs in its state anyway, so which one is read
//     first costs no memory: the rule is only about which rows a match
//     would otherwise retract.
//
// Only regular and event-time temporal joins: an interval or window join
// emits by the watermark, which already does not depend on the read
// order. A batch regular join is a hash join (joinop.JoinSpec.RightFirst):
// the right input is its build table, read to its end before any left
// row, which is then probed with and not stored; strict is then true,
// for the union must keep that order even where holding the left input
// back could deadlock (runtime.UnionNode.Strict). A batch join of another
// kind emits its final rows at the end of its inputs. ok is false for
// none.
func buildInput(n *Node, batch bool) (input int, ok, strict bool) {
	j := n.joined()
	if j == nil || j.interval != nil || j.window != nil || len(n.Inputs) != 2 {
		return 0, false, false
	}
	if batch {
		if j.temporal == nil && j.join != nil && j.join.RightFirst {
			return 1, true, true
		}
		return 0, false, false
	}
	l, r := n.Inputs[0].Bounded, n.Inputs[1].Bounded
	switch {
	case l && !r:
		return 0, true, false
	case r && !l:
		return 1, true, false
	case !l:
		return 0, false, false
	case j.temporal == nil && j.join.Kind == joinop.RightJoin:
		return 0, true, false
	}
	return 1, true, false
}

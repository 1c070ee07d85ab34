package plan

// JoinOutputs returns the columns each regular join of p emits
// (joinop.JoinSpec.Output, nil for whole rows), in the plan's order.
func JoinOutputs(p *Plan) [][]int {
	var out [][]int
	for _, n := range p.nodes() {
		if j := n.joined(); j != nil && j.join != nil && j.regular() {
			out = append(out, j.join.Output)
		}
	}
	return out
}

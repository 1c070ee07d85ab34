package plan

import "github.com/etld/etld/pipeline/row"

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

// JoinKeeps returns the filters each regular join of p drops restored
// rows by (joinop.JoinSpec.LeftKeep, RightKeep), in the plan's order.
func JoinKeeps(p *Plan) [][2]func(row.Row) (bool, error) {
	var out [][2]func(row.Row) (bool, error)
	for _, n := range p.nodes() {
		if j := n.joined(); j != nil && j.join != nil && j.regular() {
			out = append(out, [2]func(row.Row) (bool, error){j.join.LeftKeep, j.join.RightKeep})
		}
	}
	return out
}

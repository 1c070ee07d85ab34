package plan

import (
	"slices"
	"strconv"
)

// Operator ids: the short name an operator has in /metrics (its
// `operator` label), /pipelines, the run's summary and the console, e.g.
// "enriched/group_aggregate#1". The plan text (Node.Label) changes with
// every edit of the SQL, so a label made of it started a new series each
// time; the transform's name, the operator's kind and its number among
// the transform's operators of that kind stay put when a filter, a
// projection or another kind of operator is added around it.

// chain lists the operators transform t owns (transforms), from the
// table it reads up to its result: every node after the ones it reads.
func chain(t *Table, transforms map[*Node]string) []*Node {
	var out []*Node
	var collect func(n *Node)
	collect = func(n *Node) {
		if n == nil || transforms[n] != t.Name || slices.Contains(out, n) {
			return
		}
		for _, in := range n.inputs() {
			collect(in)
		}
		out = append(out, n)
	}
	collect(t.Root)
	return out
}

// opIDs names every transform's operators "<transform>/<kind>#<n>": n
// counts the transform's operators of that kind in data-flow order,
// from 1.
func (p *Plan) opIDs() map[*Node]string {
	_, transforms := p.opOwners()
	ids := map[*Node]string{}
	for _, t := range p.Transforms {
		seen := map[string]int{}
		for _, n := range chain(t, transforms) {
			kind := operatorName(n.Kind)
			seen[kind]++
			ids[n] = t.Name + "/" + kind + "#" + strconv.Itoa(seen[kind])
		}
	}
	return ids
}

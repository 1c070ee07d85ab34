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

// opKinds numbers every transform's operators "<kind>#<n>": n counts
// the transform's operators of that kind in data-flow order, from 1.
// transforms maps each operator to its transform's name.
func (p *Plan) opKinds() (kinds, transforms map[*Node]string) {
	_, transforms = p.legacyOwners()
	kinds = map[*Node]string{}
	for _, t := range p.Transforms {
		seen := map[string]int{}
		for _, n := range chain(t, transforms) {
			kind := operatorName(n.Kind)
			seen[kind]++
			kinds[n] = kind + "#" + strconv.Itoa(seen[kind])
		}
	}
	return kinds, transforms
}

// opIDs names every transform's operators "<transform>/<kind>#<n>".
func (p *Plan) opIDs() map[*Node]string {
	kinds, transforms := p.opKinds()
	ids := map[*Node]string{}
	for n, k := range kinds {
		ids[n] = transforms[n] + "/" + k
	}
	return ids
}

// opOwners names each transform's operators for checkpoints, the state
// ID "transform/<uid or name>/<kind>#<n>": the operator id of /metrics
// behind "transform/", with the transform's uid for its name when it has
// one. The names stay put when other transforms or sinks are added, and
// when a filter, a projection or an operator of another kind is added
// around an operator, so a checkpoint is matched to the same operator.
// transforms maps each operator to the name of the transform it belongs
// to, for errors.
func (p *Plan) opOwners() (owners, transforms map[*Node]string) {
	kinds, transforms := p.opKinds()
	state := map[string]string{}
	for _, t := range p.Transforms {
		state[t.Name] = t.Name
		if t.Transform != nil {
			state[t.Name] = t.Transform.StateName()
		}
	}
	owners = map[*Node]string{}
	for n, k := range kinds {
		owners[n] = "transform/" + state[transforms[n]] + "/" + k
	}
	return owners, transforms
}

// stateAliases gives, by state ID, the other IDs a checkpoint may hold
// the operator's state under: its name before a rename (`renamed_from`),
// and the ID of checkpoint format 3 and before (legacyOwners), marked
// with the "legacy:" prefix.
func (p *Plan) stateAliases() map[*Node][]string {
	owners, transforms := p.opOwners()
	legacy, _ := p.legacyOwners()
	kinds, _ := p.opKinds()
	renamed := map[string]string{}
	for _, t := range p.Transforms {
		if t.Transform != nil && t.Transform.UID == "" && t.Transform.RenamedFrom != "" {
			renamed[t.Name] = t.Transform.RenamedFrom
		}
	}
	out := map[*Node][]string{}
	for n := range owners {
		var as []string
		if old, ok := renamed[transforms[n]]; ok {
			as = append(as, "transform/"+old+"/"+kinds[n])
		}
		if l, ok := legacy[n]; ok {
			as = append(as, "legacy:"+l)
		}
		out[n] = as
	}
	return out
}

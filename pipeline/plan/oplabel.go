package plan

import (
	"slices"
	"strconv"
	"strings"
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

// opIDs names every transform's operators "<transform>/<kind>#<n>",
// and a source's changelog normalization "<source>/changelog_normalize#1"
// (sources and transforms share one namespace of tables).
func (p *Plan) opIDs() map[*Node]string {
	kinds, transforms := p.opKinds()
	ids := map[*Node]string{}
	for n, k := range kinds {
		ids[n] = transforms[n] + "/" + k
	}
	for n, name := range p.normalizations() {
		ids[n] = name + "/" + operatorName(NormalizeNode) + "#1"
	}
	return ids
}

// normalizations maps each source's changelog normalization (an upsert
// source's table, normalize.go) to the source's name. It belongs to the
// source, not to the transforms that read it.
func (p *Plan) normalizations() map[*Node]string {
	out := map[*Node]string{}
	for _, s := range p.Sources {
		if s.Table != nil && s.Table.Root.Kind == NormalizeNode {
			out[s.Table.Root] = s.Spec.Name
		}
	}
	return out
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
	for n, name := range p.normalizations() {
		// Its state goes with the source's position: what the source
		// read up to it.
		owners[n] = "source/" + name + "/normalize"
	}
	return owners, transforms
}

// formerKinds are the kind names the state IDs of checkpoints written
// before these kinds had names hold: the NodeKind's number ("node16#1"),
// which would move whenever a kind is added before it. A restore finds
// the state under that name too.
var formerKinds = map[NodeKind]string{SetOpNode: "node16", SingleRowNode: "node18"}

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
	for n, owner := range owners {
		var as []string
		if old, ok := renamed[transforms[n]]; ok {
			as = append(as, "transform/"+old+"/"+kinds[n])
		}
		if former, ok := formerKinds[n.Kind]; ok {
			// The same operator under its kind's former name, then also
			// under the transform's former name.
			_, num, _ := strings.Cut(kinds[n], "#")
			as = append(as, strings.TrimSuffix(owner, kinds[n])+former+"#"+num)
			if old, ok := renamed[transforms[n]]; ok {
				as = append(as, "transform/"+old+"/"+former+"#"+num)
			}
		}
		if l, ok := legacy[n]; ok {
			as = append(as, "legacy:"+l)
		}
		out[n] = as
	}
	return out
}

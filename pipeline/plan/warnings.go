package plan

import (
	"fmt"
	"sort"

	"github.com/etld/etld/pipeline/runtime/rankop"
)

// StateWarnings names the streaming operators whose state may grow
// without bound: those that keep state per key (GROUP BY, DISTINCT, a
// regular join, Top-N, deduplication, OVER) and run without a
// state_ttl. Whether their keys are bounded (a GROUP BY over a country
// code) or not (over an order id) the plan cannot know, so these are
// warnings, not errors: validate and explain print them, and the run's
// max_state_bytes stops a state that does grow without end. A window
// frees its state by the watermark, a global aggregate holds one group
// and a Top-N without PARTITION BY that keeps only its top rows (of an
// insert-only input, or an updating one it ranks by an upsert key)
// holds N: none is named.
func (p *Plan) StateWarnings() []string {
	ids, owners := p.opOwners()
	type found struct {
		id, text string
	}
	var all []found
	for n, t := range owners {
		if !n.honoursTTL() || p.stateTTL(n, t) > 0 {
			continue
		}
		if g := n.groupAgg(); n.Kind == GroupAggNode && g != nil && len(g.keys) == 0 {
			continue
		}
		if r := n.ranked(); n.Kind == RankNode && r != nil && len(r.spec.Partition) == 0 && r.spec.Strategy != rankop.Retract {
			continue
		}
		at := ""
		for _, st := range p.Spec.Transforms {
			if st.Name == t {
				at = st.Pos.String() + ": "
			}
		}
		all = append(all, found{id: ids[n], text: fmt.Sprintf(
			"%swarning: transform %q: %s keeps state for every key it sees, and no state_ttl expires it: "+
				"if its keys are not bounded, its state grows until max_state_bytes fails the pipeline (set state_ttl, or use a window)",
			at, t, n.Label)})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].id < all[j].id })
	out := make([]string, len(all))
	for i, f := range all {
		out[i] = f.text
	}
	return out
}

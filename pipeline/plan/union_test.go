package plan_test

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/plan"
)

const unionPipeline = `version: 1
name: u
sources:
  - name: a
    type: file
    path: a.csv
    schema: [id INT, v STRING]
  - name: b
    type: file
    path: b.csv
    schema: [id BIGINT, v STRING]
transforms:
  - name: both
    sql: SELECT id, v FROM a WHERE id > 0 UNION SELECT id, v FROM b
sinks:
  - name: out
    from: both
    type: print
`

// The plan's description and its runtime graph hold the union with an
// edge from each input; the runtime graph has one union node of two
// inputs, and the Distinct's state id is stable.
func TestUnionDescribeAndGraph(t *testing.T) {
	p := buildPlan(t, allConnectors(), "u.yaml", []byte(unionPipeline), nil)
	d := p.Describe()
	var union string
	for _, n := range d.Nodes {
		if n.Kind == plan.KindOperator && n.Operator == "union" {
			union = n.ID
		}
	}
	if union == "" {
		t.Fatalf("no union operator in %+v", d.Nodes)
	}
	var from []string
	for _, e := range d.Edges {
		if e.To == union {
			from = append(from, e.From)
		}
	}
	slices.Sort(from)
	// Input 0 is a's cast Calc (INT to BIGINT), input 1 b's projection.
	want := []string{"transform:both/calc#2", "transform:both/calc#3"}
	if !slices.Equal(from, want) {
		t.Errorf("edges into %s come from %q, want %q", union, from, want)
	}
	g, err := p.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Unions) != 1 || len(g.Unions[0].Inputs) != 2 {
		t.Fatalf("runtime graph has %d unions (want 1 of 2 inputs)", len(g.Unions))
	}
	ids := map[string]bool{}
	for _, o := range g.Ops {
		ids[o.ID] = true
	}
	if !ids["transform/both/distinct#1"] {
		t.Errorf("the Distinct is not checkpointed as transform/both/distinct#1: %v", ids)
	}
}

package plan_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/spec"
)

// TestHonoursTTLMatchesOperators plans every golden file and checks, for
// each operator, that explain's stateTtl note agrees with whether the
// operator Graph builds takes the TTL.
func TestHonoursTTLMatchesOperators(t *testing.T) {
	files, err := filepath.Glob("testdata/*.plantest")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	reg := allConnectors()
	kinds := map[plan.NodeKind]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		input, _, _ := strings.Cut(string(data), "\n----\n")
		sp, err := spec.Parse(filepath.Base(file), []byte(input), func(string) (string, bool) { return "", false })
		if err != nil {
			continue // an error case
		}
		p, err := plan.Build(sp, plan.Env{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			continue
		}
		for _, m := range plan.TTLMismatches(p) {
			t.Errorf("%s: %s", file, m)
		}
		for k := range plan.NodeKinds(p) {
			kinds[k] = true
		}
		p.Close()
	}
	for _, k := range []plan.NodeKind{plan.GroupAggNode, plan.DistinctNode, plan.RankNode, plan.DedupNode, plan.JoinNode, plan.OverAggNode, plan.WindowAggNode, plan.WindowRankNode} {
		if !kinds[k] {
			t.Errorf("no golden file plans a node of kind %d: the check did not cover it", k)
		}
	}
}

// TestDescribeStateTTL checks that the plan as data (the admin API's
// /pipelines, etld explain --format json) carries each operator's
// retention: the transform's own over the pipeline's, none for 0.
func TestDescribeStateTTL(t *testing.T) {
	data, err := os.ReadFile("testdata/state-ttl.plantest")
	if err != nil {
		t.Fatal(err)
	}
	input, _, _ := strings.Cut(string(data), "\n----\n")
	p := buildPlan(t, allConnectors(), "state-ttl.yaml", []byte(input), func(string) (string, bool) { return "", false })
	defer p.Close()
	got := map[string]string{}
	for _, n := range p.Describe().Nodes {
		if n.Operator == "group_aggregate" {
			got[n.Name] = n.StateTTL
		}
	}
	want := map[string]string{"per_user": "1h", "busiest": "30m", "forever": ""}
	for name, ttl := range want {
		if g, ok := got[name]; !ok || g != ttl {
			t.Errorf("%s: GroupAggregate state_ttl %q (found: %v), want %q", name, g, ok, ttl)
		}
	}
}

// TestGraphSetsStateTTL: the operators Graph builds run with a TTL (they
// sweep) exactly where the plan as data says one applies.
func TestGraphSetsStateTTL(t *testing.T) {
	data, err := os.ReadFile("testdata/state-ttl.plantest")
	if err != nil {
		t.Fatal(err)
	}
	input, _, _ := strings.Cut(string(data), "\n----\n")
	p := buildPlan(t, allConnectors(), "state-ttl.yaml", []byte(input), func(string) (string, bool) { return "", false })
	defer p.Close()
	g, err := p.Graph()
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]operator.Lifecycle{}
	for _, n := range g.Ops {
		ops[n.ID] = n.Op
	}
	checked, with := 0, 0
	for _, n := range p.Describe().Nodes {
		if !n.Stateful {
			continue
		}
		op, ok := ops[n.StateID]
		if !ok {
			t.Errorf("%s: no runtime operator %s", n.Label, n.StateID)
			continue
		}
		sw, ok := op.(operator.Sweeper)
		sweeps := ok && sw.SweepEvery() > 0
		if sweeps != (n.StateTTL != "") {
			t.Errorf("%s (%s): operator sweeps %v, state_ttl %q", n.Label, n.Name, sweeps, n.StateTTL)
		}
		checked++
		if sweeps {
			with++
		}
	}
	if checked < 10 || with < 8 {
		t.Errorf("checked %d stateful operators, %d with a TTL: the file plans fewer than expected", checked, with)
	}
}

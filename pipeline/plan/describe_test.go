package plan_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/spec"
	"github.com/etld/etld/sinks"
	"github.com/etld/etld/sources"
)

// exampleVars stand in for the ${VAR}s of the examples for real
// services: planning connects to nothing, so loopback placeholders do.
var exampleVars = map[string]string{
	"KAFKA_BROKERS":  "127.0.0.1:9092",
	"ES_HOSTS":       "http://127.0.0.1:9200",
	"ETLD_MYSQL_DSN": "etld:pw@tcp(127.0.0.1:3306)/etld_test",
	"ETLD_PG_DSN":    "postgres://etld:pw@127.0.0.1:5432/etld_test",
}

// examplePlans plans every pipeline of configs/examples, named as
// `etld explain configs/examples/NAME.yaml` names them from the
// repository's root.
func examplePlans(t *testing.T) map[string]*plan.Plan {
	t.Helper()
	files, err := filepath.Glob("../../configs/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	reg := allConnectors()
	lookup := func(name string) (string, bool) { v, ok := exampleVars[name]; return v, ok }
	out := map[string]*plan.Plan{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		p := buildPlan(t, reg, "configs/examples/"+filepath.Base(file), data, lookup)
		out[strings.TrimSuffix(filepath.Base(file), ".yaml")] = p
	}
	return out
}

// allConnectors is a registry of every connector and format of etld.
func allConnectors() *connector.Registry {
	reg := connector.NewRegistry()
	formats.Register(reg)
	sources.Register(reg)
	sinks.Register(reg)
	return reg
}

// buildPlan plans a pipeline file's content, failing t on any error.
func buildPlan(t *testing.T, reg *connector.Registry, file string, data []byte, lookup func(string) (string, bool)) *plan.Plan {
	t.Helper()
	sp, err := spec.Parse(file, data, lookup)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	p, err := plan.Build(sp, plan.Env{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}

// golden compares got with testdata/FILE, or rewrites it with -update.
func golden(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs; got:\n%s", path, got)
	}
}

func TestDescribeExamples(t *testing.T) {
	for name, p := range examplePlans(t) {
		t.Run(name, func(t *testing.T) {
			d := p.Describe()
			data, err := json.MarshalIndent(d, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "describe/"+name+".json", string(data)+"\n")
			checkGraph(t, d)
		})
	}
}

// checkGraph asserts what the console relies on: unique ids, edges
// between listed nodes that are not transform groups, every operator's
// parent a transform, every sink and operator reached by one edge of
// rows (a lookup join's table is an edge besides), and a state id on
// exactly the stateful operators.
func checkGraph(t *testing.T, d plan.Description) {
	t.Helper()
	kinds := map[string]string{}
	for _, n := range d.Nodes {
		if _, dup := kinds[n.ID]; dup {
			t.Errorf("node id %q repeats", n.ID)
		}
		kinds[n.ID] = n.Kind
		if n.Kind == plan.KindOperator && kinds[n.Parent] != plan.KindTransform {
			t.Errorf("operator %q: parent %q is not a transform listed before it", n.ID, n.Parent)
		}
		if n.Stateful != (n.StateID != "") {
			t.Errorf("node %q: stateful %v with state id %q", n.ID, n.Stateful, n.StateID)
		}
		if n.Changelog.Text != "["+strings.Join(n.Changelog.Kinds, ",")+"]" {
			t.Errorf("node %q: changelog text %q does not match kinds %v", n.ID, n.Changelog.Text, n.Changelog.Kinds)
		}
	}
	into := map[string]int{}
	for _, e := range d.Edges {
		for _, end := range []string{e.From, e.To} {
			if k, ok := kinds[end]; !ok || k == plan.KindTransform {
				t.Errorf("edge %s -> %s: %q is not a source, operator or sink node", e.From, e.To, end)
			}
		}
		if !e.Lookup {
			into[e.To]++
		}
	}
	for _, n := range d.Nodes {
		if (n.Kind == plan.KindSink || n.Kind == plan.KindOperator) && into[n.ID] != 1 {
			t.Errorf("%s %q has %d input edges, want 1", n.Kind, n.ID, into[n.ID])
		}
	}
}

// TestDescribeStateIDsAreTheRuntimes checks that each stateful
// operator's state id is the id of a runtime node of the plan's graph,
// the name its state has in checkpoints.
func TestDescribeStateIDsAreTheRuntimes(t *testing.T) {
	stateful := 0
	for name, p := range examplePlans(t) {
		g, err := p.Graph()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ops := map[string]bool{}
		for _, op := range g.Ops {
			ops[op.ID] = true
		}
		for _, n := range p.Describe().Nodes {
			if n.Stateful {
				stateful++
				if !ops[n.StateID] {
					t.Errorf("%s: node %q has state id %q, not a runtime node (%v)", name, n.ID, n.StateID, ops)
				}
			}
		}
	}
	if stateful == 0 {
		t.Error("no example has a stateful operator: the test checks nothing")
	}
}

// TestRedactedCoversEveryName walks the JSON of a redacted description:
// every string is redacted but those etld itself chooses (kinds, modes,
// connector types, column types, changelog kinds), so that a field added
// later and forgotten by Redacted fails here.
func TestRedactedCoversEveryName(t *testing.T) {
	d := describeYAML(t, "chained.yaml", chained).Redacted(func(s string) string {
		if s == "" {
			return ""
		}
		return "${X}"
	})
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	fixed := map[string]bool{"kind": true, "mode": true, "operator": true, "connector": true, "sink_mode": true, "type": true, "kinds": true, "text": true}
	checked := 0
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(k, e)
			}
		case []any:
			for _, e := range x {
				walk(key, e)
			}
		case string:
			if !fixed[key] {
				checked++
				if x != "${X}" {
					t.Errorf("%s %q is not redacted", key, x)
				}
			}
		}
	}
	walk("", v)
	if checked == 0 {
		t.Error("no string was checked")
	}
}

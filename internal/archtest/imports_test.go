// Package archtest checks the import rules of etld's package map (the
// Packages section of docs/design.md), so that a connector importing
// another, the runtime importing a connector, or a kit in internal/
// importing the application, fails the test run instead of waiting for a
// reviewer.
package archtest

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/etld/etld"

type pkg struct {
	ImportPath   string
	Imports      []string // non-test imports only
	TestImports  []string // imports of the package's own _test.go files
	XTestImports []string // imports of its external (package x_test) test files
	Deps         []string // non-test imports, transitively
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports,Deps", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages; the pattern is wrong", len(pkgs))
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

// connectorOf returns "sources/x" or "sinks/x" for a connector package (or
// a package below one), "" otherwise.
func connectorOf(path string) string {
	parts := strings.Split(rel(path), "/")
	if len(parts) >= 2 && (parts[0] == "sources" || parts[0] == "sinks") {
		return parts[0] + "/" + parts[1]
	}
	return ""
}

func TestImportRules(t *testing.T) {
	for _, p := range listPackages(t) {
		self := rel(p.ImportPath)
		for _, msg := range groundFloor(p) {
			t.Error(msg)
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := rel(imp)
			switch {
			case strings.HasPrefix(dep, "cmd/"):
				t.Errorf("%s imports %s: nothing imports cmd", self, dep)
			case connectorOf(self) != "" && connectorOf(dep) != "" && connectorOf(self) != connectorOf(dep):
				t.Errorf("%s imports %s: connectors never import each other", self, dep)
			case strings.HasPrefix(self, "pipeline/") && dep == "pipeline":
				t.Errorf("%s imports the pipeline facade: no child imports it", self)
			case self == "pipeline/sql" && dep != "pipeline/row":
				t.Errorf("pipeline/sql imports %s: it imports only pipeline/row", dep)
			case strings.HasPrefix(self, "formats/") && connectorOf(dep) != "":
				t.Errorf("%s imports %s: formats know no connector", self, dep)
			case (self == "sdk/go/udf" || strings.HasPrefix(self, "sdk/go/")) && dep != "sdk/go/udf":
				t.Errorf("%s imports %s: the Go SDK for functions imports nothing of etld's but itself, so that a module needs only its directory", self, dep)
			case self == "pipeline/udf" && dep != "pipeline/row" && dep != "pipeline/spec":
				t.Errorf("pipeline/udf imports %s: it imports only pipeline/row and pipeline/spec (the planner joins it to the runtime)", dep)
			case self == "internal/redact":
				t.Errorf("internal/redact imports %s: it imports nothing of etld's, so that pipeline/spec, the daemon and the CLI can all use it", dep)
			}
		}
		if self == "pipeline/runtime" || strings.HasPrefix(self, "pipeline/runtime/") || self == "pipeline/plan" {
			for _, d := range p.Deps {
				if dep := rel(d); strings.HasPrefix(d, module) && (connectorOf(d) != "" || strings.HasPrefix(dep, "formats/") || dep == "sources" || dep == "sinks") {
					t.Errorf("%s depends on %s: the runtime and planner see connectors only through pipeline/connector", self, dep)
				}
			}
		}
	}
}

// runtimeImports lists, for each package of the runtime, the packages of
// etld it may import (tests aside). The contract (operator) and the state
// structures are the ground floor; each operator family stands on them and
// on the families it is built on (windows keep their aggregates in
// aggop's store and their Top-N in rankop's partitions; MATCH_RECOGNIZE's
// aggregates over a match fold rows in aggop's store); the engine wires
// operators through the contract alone, so it imports no family; the test
// kit imports no family and not the engine, so that every family's tests can use it.
// User-defined functions run through udfop, which sees them through its
// own small interfaces: the runtime never imports pipeline/udf (and so
// neither wazero nor goja); the planner joins the two.
// The engine marks the errors that running again cannot fix (saved state
// that no longer fits) with internal/retry, as connectors do.
var runtimeImports = map[string][]string{
	"pipeline/runtime":          {"pipeline/row", "pipeline/connector", "pipeline/runtime/operator", "internal/checkpoint", "internal/panics", "internal/retry"},
	"pipeline/runtime/operator": {"pipeline/row"},
	"pipeline/runtime/state":    {"pipeline/row", "pipeline/runtime/operator"},
	"pipeline/runtime/aggop":    {"pipeline/row", "pipeline/runtime/operator", "pipeline/runtime/state"},
	"pipeline/runtime/rankop":   {"pipeline/row", "pipeline/runtime/operator", "pipeline/runtime/state"},
	"pipeline/runtime/joinop":   {"pipeline/row", "pipeline/connector", "pipeline/runtime/operator", "pipeline/runtime/state"},
	"pipeline/runtime/windowop": {"pipeline/row", "pipeline/runtime/operator", "pipeline/runtime/state", "pipeline/runtime/aggop", "pipeline/runtime/rankop"},
	"pipeline/runtime/optest":   {"pipeline/row", "pipeline/runtime/operator", "pipeline/runtime/state"},
	"pipeline/runtime/matchop":  {"pipeline/row", "pipeline/runtime/operator", "pipeline/runtime/state", "pipeline/runtime/aggop"},
	"pipeline/runtime/udfop":    {"pipeline/row", "pipeline/connector", "pipeline/runtime/operator"},
	"pipeline/runtime/sortop":   {"pipeline/row", "pipeline/runtime/operator", "pipeline/runtime/state"},
}

func TestRuntimeLayers(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		self := rel(p.ImportPath)
		if self != "pipeline/runtime" && !strings.HasPrefix(self, "pipeline/runtime/") {
			continue
		}
		allowed, ok := runtimeImports[self]
		if !ok {
			t.Errorf("%s: a runtime package with no entry in runtimeImports; say what it may import", self)
			continue
		}
		seen[self] = true
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if dep := rel(imp); !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s: it may import only %v", self, dep, allowed)
			}
		}
	}
	for p := range runtimeImports {
		if !seen[p] {
			t.Errorf("runtimeImports names %s, which does not exist", p)
		}
	}
}

func TestConnectorOf(t *testing.T) {
	tests := map[string]string{
		module + "/sinks/mysql":        "sinks/mysql",
		module + "/sources/kafka/x":    "sources/kafka",
		module + "/sinks":              "",
		module + "/pipeline/connector": "",
	}
	for in, want := range tests {
		if got := connectorOf(in); got != want {
			t.Errorf("connectorOf(%q) = %q, want %q", in, got, want)
		}
	}
}

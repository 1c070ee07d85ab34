package archtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// internal/ is the ground floor: small kits (retry, redact, durable, ...)
// that anything may use, and the daemon application in internal/app/. Three
// rules keep it so:
//
//   - nothing in internal/ depends on a connector or a format, directly or
//     through builtin/, the composition root that registers them all: the
//     connectors build on the kits, so a kit that imported one would run the
//     layers backwards, and the application gets its registry from cmd/etld;
//   - the application imports none of them directly either (the rule above,
//     with the message that names the application);
//   - a kit never imports the application, not even in its tests: the
//     application is built on the kits.
//
// The first two hold for non-test code only: a test may wire real connectors
// as fixtures (the daemon's tests run pipelines into a blackhole sink, the
// crash harness loads builtin's registry).
const app = "internal/app"

func inApp(p string) bool { return p == app || strings.HasPrefix(p, app+"/") }

func inInternal(p string) bool { return strings.HasPrefix(p, "internal/") }

// connectorSide reports whether p (relative to the module) is a connector,
// a format, one of their collections, or the composition root.
func connectorSide(p string) bool {
	top, _, _ := strings.Cut(p, "/")
	return top == "sources" || top == "sinks" || top == "formats" || top == "builtin"
}

// groundFloor returns the rules above that package p breaks, one message
// each.
func groundFloor(p pkg) []string {
	self := rel(p.ImportPath)
	if !inInternal(self) {
		return nil
	}
	var out []string
	for _, d := range p.Deps {
		dep := rel(d)
		if !strings.HasPrefix(d, module+"/") || !connectorSide(dep) {
			continue
		}
		if inApp(self) && slices.Contains(p.Imports, d) {
			out = append(out, fmt.Sprintf("%s imports %s: the application imports no connector or format; cmd/etld hands it the registry", self, dep))
		} else {
			out = append(out, fmt.Sprintf("%s depends on %s: nothing in internal/ depends on a connector or format", self, dep))
		}
	}
	if !inApp(self) {
		for _, imps := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range imps {
				if dep := rel(imp); strings.HasPrefix(imp, module+"/") && inApp(dep) {
					out = append(out, fmt.Sprintf("%s imports %s: a kit in internal/ never imports the application", self, dep))
				}
			}
		}
	}
	return out
}

func TestGroundFloor(t *testing.T) {
	m := func(paths ...string) []string {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = module + "/" + p
		}
		return out
	}
	tests := []struct {
		name string
		pkg  pkg
		want []string // each a message's start
	}{
		{name: "kit through another kit to a sink", pkg: pkg{ImportPath: module + "/internal/retry",
			Imports: m("internal/panics"), Deps: m("internal/panics", "sinks/file")},
			want: []string{"internal/retry depends on sinks/file: nothing in internal/"}},
		{name: "application imports the composition root", pkg: pkg{ImportPath: module + "/internal/app/daemon",
			Imports: m("builtin"), Deps: m("builtin", "formats", "formats/csv")},
			want: []string{
				"internal/app/daemon imports builtin: the application imports no connector",
				"internal/app/daemon depends on formats: nothing in internal/",
				"internal/app/daemon depends on formats/csv: nothing in internal/",
			}},
		{name: "kit test imports the application", pkg: pkg{ImportPath: module + "/internal/testenv",
			XTestImports: m("internal/app/metrics")},
			want: []string{"internal/testenv imports internal/app/metrics: a kit in internal/ never imports the application"}},
		{name: "kit imports the application", pkg: pkg{ImportPath: module + "/internal/redact",
			Imports: m("internal/app"), Deps: m("internal/app")},
			want: []string{"internal/redact imports internal/app: a kit"}},
		{name: "application imports a kit and itself", pkg: pkg{ImportPath: module + "/internal/app/metrics",
			Imports: m("internal/app/daemon", "internal/redact", "pipeline"), Deps: m("internal/app/daemon", "internal/redact", "pipeline")}},
		{name: "application tests use a sink", pkg: pkg{ImportPath: module + "/internal/app/daemon",
			TestImports: m("sinks/blackhole")}},
		{name: "composition root outside internal/", pkg: pkg{ImportPath: module + "/builtin",
			Imports: m("sources", "sinks", "formats"), Deps: m("sources", "sinks", "sinks/kafka", "formats")}},
		{name: "CLI wires the application", pkg: pkg{ImportPath: module + "/cmd/etld",
			Imports: m("internal/app/daemon", "builtin"), Deps: m("internal/app/daemon", "builtin", "sources")}},
		{name: "name only starts like a layer", pkg: pkg{ImportPath: module + "/internal/apps",
			Imports: m("internal/application"), Deps: m("internal/application", "sourcesx")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := groundFloor(tc.pkg)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d messages %q, want %d starting %q", len(got), got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("message %d = %q, want it to start %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

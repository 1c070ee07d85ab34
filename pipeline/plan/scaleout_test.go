package plan_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// splitSource is a connector.SharedSource that records what the planner
// told it.
type splitSource struct {
	shared bool
	state  string
}

func (s *splitSource) Bounded() bool                                 { return false }
func (s *splitSource) Open(context.Context) error                    { return nil }
func (s *splitSource) Read(context.Context, int) (*row.Batch, error) { return nil, io.EOF }
func (s *splitSource) Close(context.Context) error                   { return nil }
func (s *splitSource) SharedOption() string {
	if s.shared {
		return "shared"
	}
	return ""
}
func (s *splitSource) KeepsState(why string) { s.state = why }

// TestSharedSourceIsToldOfState: the planner tells a shareable source
// whether an operator reading it, directly or through other transforms,
// keeps state, and names it; the run-time refusal of a group found shared
// depends on it. A source read only by stateless operators is told
// nothing, and only a declared one is refused at plan time.
func TestSharedSourceIsToldOfState(t *testing.T) {
	built := map[string]*splitSource{}
	reg := allConnectors()
	connector.RegisterSource(reg, "split", "a source processes can split", func(cfg struct {
		Shared bool `yaml:"shared"`
	}, env connector.SourceEnv) (connector.Source, error) {
		s := &splitSource{shared: cfg.Shared}
		built[env.Name] = s
		return s, nil
	})
	const file = `version: 1
name: split
sources:
  - {name: a, type: split, schema: [k STRING]}
  - {name: b, type: split, schema: [k STRING]}
  - {name: c, type: split, schema: [k STRING]}
transforms:
  - name: upper
    sql: SELECT UPPER(k) AS k FROM a
  - name: counts
    sql: SELECT k, COUNT(*) AS n FROM upper GROUP BY k
  - name: both
    sql: SELECT k FROM b UNION ALL SELECT k FROM c
  - name: windowless
    sql: SELECT DISTINCT k FROM both
sinks:
  - {name: o1, from: counts, type: print}
  - {name: o2, from: windowless, type: print}
  - {name: o3, from: c, type: print}
`
	tests := []struct {
		name, file string
		want       map[string]string // source -> what it is told keeps state
		err        string
	}{
		{"undeclared", file, map[string]string{
			"a": `transform "counts" (GroupAggregate(groupBy=[k], select=[COUNT(*)]))`,
			"b": `transform "windowless" (Distinct(k))`,
			"c": `transform "windowless" (Distinct(k))`,
		}, ""},
		{"declared", strings.Replace(file, "{name: c, type: split,", "{name: c, type: split, shared: true,", 1), nil,
			`split.yaml:6:36: sources[2].shared: source "c" is split among several processes (shared: true), but transform "windowless" (Distinct(k)) at split.yaml:14:5 reads it and keeps state`},
		{"stateless", strings.Replace(file, "SELECT k, COUNT(*) AS n FROM upper GROUP BY k", "SELECT k, 1 AS n FROM upper WHERE k <> ''", 1), map[string]string{
			"a": "", "b": `transform "windowless" (Distinct(k))`, "c": `transform "windowless" (Distinct(k))`,
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clear(built)
			sp, err := spec.Parse("split.yaml", []byte(tt.file), func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			_, err = plan.Build(sp, plan.Env{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "etld export flink split.yaml") {
					t.Fatalf("error %v, want one containing %q and the export hint", err, tt.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			for name, want := range tt.want {
				if got := built[name].state; got != want {
					t.Errorf("source %s told %q, want %q", name, got, want)
				}
			}
		})
	}
}

package plan_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/spec"
)

const twoSinks = `version: 1
name: t
sources:
  - name: gen
    type: datagen
    rows: 5
    schema: [n BIGINT]
transforms:
  - name: a
    sql: SELECT n FROM gen
  - name: b
    sql: SELECT n FROM a
sinks:
  - name: out
    from: b
    type: print
  - name: raw
    from: gen
    type: print
`

func parse(t *testing.T, src string) *spec.Pipeline {
	t.Helper()
	sp, err := spec.Parse("p.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// A declared transform or sink that ends up without a plan node, with no
// error to say why, is a planner bug: Build must refuse the pipeline
// rather than run it with fewer sinks than the file declares.
func TestBuildRefusesSilentlyDroppedElements(t *testing.T) {
	for name, tc := range map[string]struct {
		break_ func(*spec.Pipeline)
		want   string
	}{
		"transform without SQL": {
			func(sp *spec.Pipeline) { sp.Transforms[0].SQL = nil },
			"p.yaml:9:5: transforms[0]: transform \"a\" was not planned",
		},
		"sink reading an unknown table": {
			func(sp *spec.Pipeline) { sp.Sinks[1].From = "nothere" },
			"p.yaml:17:5: sinks[1]: sink \"raw\" was not planned",
		},
	} {
		t.Run(name, func(t *testing.T) {
			sp := parse(t, twoSinks)
			tc.break_(sp)
			p, err := plan.Build(sp, plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
			if err == nil {
				t.Fatalf("planned with %d of %d sinks:\n%s", len(p.Sinks), len(sp.Sinks), p.Explain())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// Every declared sink is in the plan and in explain.
func TestBuildPlansEverySink(t *testing.T) {
	sp := parse(t, twoSinks)
	p, err := plan.Build(sp, plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sinks) != len(sp.Sinks) {
		t.Fatalf("%d sinks planned, %d declared", len(p.Sinks), len(sp.Sinks))
	}
	for _, s := range sp.Sinks {
		if !strings.Contains(p.Explain(), "  "+s.Name+": ") {
			t.Errorf("sink %q missing from explain:\n%s", s.Name, p.Explain())
		}
	}
}

package plan_test

import (
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/spec"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/*.plantest")

// TestGolden plans every testdata/*.plantest: a pipeline file, a line
// "----", then the expected `etld explain` text or the expected errors.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.plantest")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	reg := allConnectors()
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".plantest"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			input, want, ok := strings.Cut(string(data), "\n----\n")
			if !ok {
				t.Fatalf("%s: no ---- line", file)
			}
			name := strings.TrimSuffix(filepath.Base(file), ".plantest") + ".yaml"
			got := explainOrError(name, input, reg)
			if *update {
				if err := os.WriteFile(file, []byte(input+"\n----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func explainOrError(name, input string, reg *connector.Registry) string {
	// As pipeline.Parse does: a partial spec is planned too, so that the
	// expected errors are those of both.
	sp, err := spec.Parse(name, []byte(input), func(string) (string, bool) { return "", false })
	if sp == nil {
		return "error:\n" + err.Error() + "\n"
	}
	p, err := plan.Build(sp, plan.Env{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return "error:\n" + err.Error() + "\n"
	}
	return p.Explain()
}

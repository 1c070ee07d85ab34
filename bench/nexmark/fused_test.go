package nexmark_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline"
)

// TestJSONMatchesGenerator: the queries read from a json file of the
// generator's events, as the benchmark runs them, make the generator's
// final tables. The file source decodes on several goroutines and runs
// the Calcs that read it there: the three views of the DDL's one source
// (person, auction, bid) each get their rows from the decoders, cut for
// the watermark as the serial way cuts them; the generator runs none of
// that.
func TestJSONMatchesGenerator(t *testing.T) {
	const n = 100000
	events := filepath.Join(t.TempDir(), "events.json")
	dumpEvents(t, events, n)
	for _, name := range []string{"q3", "q23"} {
		t.Run(name, func(t *testing.T) {
			want := etldFinal(t, name, n)
			got := runFinal(t, name, jsonPipeline(t, name, events))
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("%s over the json file: %d rows; the generator's %d, first difference at %d", name, len(got), len(want), firstDifference(got, want))
			}
		})
	}
}

// jsonPipeline is the query's file with its source reading the json file
// events, as the benchmark writes it.
func jsonPipeline(t *testing.T, name, events string) *pipeline.Pipeline {
	t.Helper()
	data, err := os.ReadFile(name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	gen := "    type: nexmark\n    events: 10000000\n    seed: 1\n    base_time: \"2024-01-01 00:00:00\"\n"
	if !strings.Contains(string(data), gen) {
		t.Fatalf("%s.yaml has no %q lines to replace", name, gen)
	}
	text := strings.Replace(string(data), gen, fmt.Sprintf("    type: file\n    path: %q\n    format: json\n", events), 1)
	vars := map[string]string{"NEXMARK_DIR": t.TempDir()}
	p, err := pipeline.Parse(name+".yaml", []byte(text), func(k string) (string, bool) { v, ok := vars[k]; return v, ok }, pipeline.Env{Registry: builtin.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline"
)

func TestFlinkJobTime(t *testing.T) {
	got, err := flinkJobTime([]byte("+I[2026-12-02 21:40:00.250]\n+I[2026-12-02 21:40:12.750]\n"))
	if err != nil || got != 12.5 {
		t.Errorf("flinkJobTime = %v, %v; want 12.5", got, err)
	}
	if _, err := flinkJobTime([]byte("+I[2026-12-02 21:40:00.250]\n")); err == nil {
		t.Error("one timestamp: no error")
	}
}

func TestSelected(t *testing.T) {
	for _, tc := range []struct {
		name, only string
		want       bool
	}{{"W1", "", true}, {"W2-batch", "W2", true}, {"W2-stream", "w1, w2", true}, {"W2-stream", "W2-batch", false}, {"W4", "W1,W5", false}} {
		if got := selected(tc.name, tc.only); got != tc.want {
			t.Errorf("selected(%q, %q) = %v", tc.name, tc.only, got)
		}
	}
}

func TestTargets(t *testing.T) {
	ws := []workloadResult{{Name: "W2-batch", Engines: []engineResult{
		{Engine: "etld", Time: 2}, {Engine: "duckdb", Time: 3}, {Engine: "go-map-loop", Time: 1},
	}}, {Name: "W5", Engines: []engineResult{{Engine: "etld", Time: 1}, {Engine: "flink", NotRun: "no java"}}}}
	got := targets(ws)
	if len(got) != 3 {
		t.Fatalf("targets = %+v", got)
	}
	if !got[0].Known || got[0].Got != 1.5 || !got[0].Met {
		t.Errorf("vs DuckDB: %+v, want 1.5 met", got[0])
	}
	if !got[1].Known || got[1].Got != 0.5 || got[1].Met {
		t.Errorf("vs map loop: %+v, want 0.5 not met", got[1])
	}
	if got[2].Known {
		t.Errorf("Flink not run, yet measured: %+v", got[2])
	}
}

// TestWorkloadPipelinesLoad loads every etld pipeline file the
// workloads write, so a change of the file format fails here and not
// half an hour into `make bench`.
func TestWorkloadPipelinesLoad(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "events.csv"), []byte("0,1,2,3,4,n5,2024-01-01 00:00:00.000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &env{data: dir, base: map[string]string{}}
	yamls := map[string]string{}
	for _, w := range workloads(e) {
		for _, eng := range w.engines {
			if !strings.HasPrefix(eng.name, "etld") {
				continue
			}
			wd := filepath.Join(dir, w.name, eng.name)
			if err := os.MkdirAll(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			e.etld, e.etldrun = "/bin/true", "/bin/true"
			_, _ = eng.run(wd) // writes p.yaml; the binary does nothing
			if _, err := os.Stat(filepath.Join(wd, "p.yaml")); err != nil {
				t.Fatalf("%s %s wrote no pipeline: %v", w.name, eng.name, err)
			}
			yamls[w.name+"/"+eng.name] = filepath.Join(wd, "p.yaml")
		}
	}
	if len(yamls) < 7 {
		t.Fatalf("only %d etld pipelines: %v", len(yamls), yamls)
	}
	for name, path := range yamls {
		if _, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry()}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestCoreTargets: a GROUP BY shape's run on one core and on two
// workers each give a target of their own, measured only when run.
func TestCoreTargets(t *testing.T) {
	ws := []workloadResult{{Name: "M-str100k", Engines: []engineResult{
		{Engine: "etld-batch", Time: 1, CPU: 2}, {Engine: "etld-batch-1cpu", Time: 1.8, CPU: 1.7},
		{Engine: "etld-batch-2w", Time: 1.25}, {Engine: "duckdb", Time: 1.1},
	}}, {Name: "M-join", Engines: []engineResult{{Engine: "etld-batch", Time: 1}}}}
	byGoal := map[string]target{}
	for _, tg := range targets(ws) {
		byGoal[tg.Goal] = tg
	}
	if tg := byGoal["M-str100k 2 cores vs 1"]; !tg.Known || tg.Got != 1.8 || !tg.Met {
		t.Errorf("2 cores vs 1: %+v, want 1.8 met", tg)
	}
	if tg := byGoal["M-str100k 2 workers vs 1"]; !tg.Known || tg.Got != 0.8 || tg.Met {
		t.Errorf("2 workers vs 1: %+v, want 0.8 not met", tg)
	}
	if _, ok := byGoal["M-join 2 cores vs 1"]; ok {
		t.Error("M-join has no one-core run, yet a target")
	}
}

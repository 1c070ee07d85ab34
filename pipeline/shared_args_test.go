package pipeline_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline"
)

// sharedArgsDir holds a checkpoint written by etld before aggregates over
// the same argument shared one input column (main at 575c9924, `etld run
// --state-dir state shared.yaml`): a GROUP BY whose seven aggregates read
// v five times and v > 2 twice, a TUMBLE and a GROUPING SETS aggregate
// each over SUM(v), MAX(v), their first Calcs then computing a column per
// aggregate.
const sharedArgsDir = "testdata/shared-args-checkpoint"

// sharedArgsOps are the aggregates of sharedArgsDir's pipeline.
var sharedArgsOps = []string{"transform/q/group_aggregate#1", "transform/w/window_aggregate#1", "transform/g/group_aggregate#1"}

// copyTree copies the files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// loadPipelineAt loads the pipeline file at file (its paths relative to
// its directory), closed with the test.
func loadPipelineAt(t *testing.T, file string) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Plan.Close() })
	return p
}

// TestSharedArgsRestoreOldCheckpoint: the checkpoint of the plan that
// read an argument column per aggregate fits the plan that shares them:
// validate --against-state says keep for each aggregate, its saved state
// reads under the new plan as the state a run of the new plan over the
// same rows saves, and a run restores from it.
func TestSharedArgsRestoreOldCheckpoint(t *testing.T) {
	old := t.TempDir()
	copyTree(t, sharedArgsDir, old)
	text, err := os.ReadFile(filepath.Join(old, "shared.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := loadPipeline(t, string(text))
	// The plan shares the columns: else this test proves nothing.
	for _, want := range []string{"Calc(select=[k, v, v > 2])", "Calc(select=[k, v, et])", "Calc(select=[k, v])"} {
		if !strings.Contains(p.Explain(), want) {
			t.Fatalf("the plan does not share the aggregates' argument columns: no %s in\n%s", want, p.Explain())
		}
	}
	store, err := checkpoint.Open(filepath.Join(old, "state"), "shared")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := store.Latest()
	if err != nil || cp == nil {
		t.Fatalf("no checkpoint in %s: %v", sharedArgsDir, err)
	}
	vs := loadVerdicts(t, string(text), cp)
	for _, id := range sharedArgsOps {
		if v := vs[id]; v.Action != pipeline.StateKeep {
			t.Errorf("%s: %s (%s), want keep", id, v.Action, v.Why)
		}
	}

	// The same rows through the new plan, from scratch. The file source's
	// path, and the position saved, are relative to the directory the
	// run starts in.
	t.Chdir(old)
	fp := loadPipelineAt(t, "shared.yaml")
	if _, err := fp.Run(context.Background(), pipeline.RunOptions{StateDir: "fresh"}); err != nil {
		t.Fatal(err)
	}
	fstore, err := checkpoint.Open("fresh", "shared")
	if err != nil {
		t.Fatal(err)
	}
	fcp, err := fstore.Latest()
	if err != nil || fcp == nil {
		t.Fatalf("the fresh run saved no checkpoint: %v", err)
	}
	op := loadPipelineAt(t, "shared.yaml")
	for _, id := range sharedArgsOps {
		saved := dumpLines(t, func(d *pipeline.StateDump) error { return op.DumpState(store, cp, id, d) })
		want := dumpLines(t, func(d *pipeline.StateDump) error { return fp.DumpState(fstore, fcp, id, d) })
		// The windows all fired at the input's end: the window
		// aggregate's saved state is its (empty) table of slices.
		if !slices.Equal(saved, want) || strings.Contains(id, "/group_aggregate") && len(want) < 2 {
			t.Errorf("%s: the old checkpoint reads under the new plan as\n %q\nthe new plan's own run saves\n %q", id, saved, want)
		}
	}
	if _, err := op.Run(context.Background(), pipeline.RunOptions{StateDir: "state"}); err != nil {
		t.Fatalf("the run from the old checkpoint: %v", err)
	}
}

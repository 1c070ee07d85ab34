package pipeline_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline"
)

const statsPipeline = `version: 1
name: stats
sources:
  - name: readings
    type: file
    path: %DIR%/in.csv
    schema:
      - sensor STRING
      - temp DOUBLE
transforms:
  - name: per_sensor
    sql: |
      SELECT sensor, COUNT(*) AS n%AGG%
      FROM readings
      GROUP BY sensor
sinks:
  - name: out
    from: per_sensor
    type: file
    mode: retract
    path: %DIR%/out.csv
`

func loadStats(t *testing.T, dir, agg string) *pipeline.Pipeline {
	t.Helper()
	text := strings.NewReplacer("%DIR%", dir, "%AGG%", agg).Replace(statsPipeline)
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A state dir makes a finished pipeline's rerun read nothing; a changed
// query is refused with its transform named and the way to start fresh.
func TestStateDirResumeAndRefusal(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte("a,1\nb,2\na,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := loadStats(t, dir, "").Run(context.Background(), pipeline.RunOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checkpoints.Count < 1 || sum.Checkpoints.LastSize <= 0 || sum.Checkpoints.LastID < 1 {
		t.Errorf("checkpoint counters %+v", sum.Checkpoints)
	}
	if _, err := os.Stat(filepath.Join(state, "stats", "MANIFEST")); err != nil {
		t.Errorf("no manifest under state_dir/<pipeline>: %v", err)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "out.csv"))

	sum, err = loadStats(t, dir, "").Run(context.Background(), pipeline.RunOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checkpoints.Restored == 0 || sum.Sources[0].In != 0 {
		t.Errorf("rerun of a finished pipeline: restored %d, read %d rows", sum.Checkpoints.Restored, sum.Sources[0].In)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "out.csv")); string(again) != string(first) {
		t.Errorf("output changed on rerun:\n%s\nwas\n%s", again, first)
	}

	_, err = loadStats(t, dir, ", MAX(temp) AS hottest").Run(context.Background(), pipeline.RunOptions{StateDir: state})
	if err == nil {
		t.Fatal("a changed query ran on the old state")
	}
	for _, want := range []string{`transform "per_sensor"`, "the operator itself changed", "MAX(temp)", "does not fit the edited pipeline", filepath.Join(state, "stats"),
		"--reset-state transform/per_sensor/group_aggregate#1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A pipeline renamed in its file starts with new, empty state; its file sink
// must refuse the output the old name wrote rather than truncate it, and say
// how to go on.
func TestRenamedPipelineKeepsItsOutput(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte("a,1\nb,2\na,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadStats(t, dir, "").Run(context.Background(), pipeline.RunOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.csv")
	first, err := os.ReadFile(out)
	if err != nil || len(first) == 0 {
		t.Fatalf("first run wrote %q (%v)", first, err)
	}
	renamed := strings.Replace(statsPipeline, "name: stats\n", "name: stats_renamed\n", 1)
	text := strings.NewReplacer("%DIR%", dir, "%AGG%", "").Replace(renamed)
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(context.Background(), pipeline.RunOptions{StateDir: state})
	if err == nil {
		t.Fatal("the renamed pipeline ran over the old output")
	}
	for _, want := range []string{`sink "out"`, out, "overwrite: true"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if again, _ := os.ReadFile(out); string(again) != string(first) {
		t.Errorf("refused run changed the output:\n%s\nwas\n%s", again, first)
	}
}

func TestCheckpointIntervalPrecedence(t *testing.T) {
	dir := t.TempDir()
	p := loadStats(t, dir, "")
	for _, tc := range []struct {
		file, def, want time.Duration
	}{
		{0, 0, 10 * time.Second},
		{0, 3 * time.Second, 3 * time.Second},
		{time.Second, 3 * time.Second, time.Second},
	} {
		p.Spec.CheckpointInterval = tc.file
		if got := p.CheckpointInterval(tc.def); got != tc.want {
			t.Errorf("file %s, default %s: %s, want %s", tc.file, tc.def, got, tc.want)
		}
	}
}

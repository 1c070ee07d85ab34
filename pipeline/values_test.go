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
	"github.com/etld/etld/pipeline"
)

// TestConstantTablesRun runs constant tables beside a file source: a
// join with VALUES, a query with no FROM and a lone UNNEST. The run's
// summary lists the file source only (a constant table is a source node
// the plan's sources do not hold), and a rerun from the state directory
// reads nothing again.
func TestConstantTablesRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte("1,x\n2,y\n3,z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(`version: 1
name: consts
sources:
  - name: s
    type: file
    path: %DIR%/in.csv
    schema:
      - a INT
      - c STRING
transforms:
  - name: t
    sql: |
      SELECT s.c, v.label FROM s JOIN (VALUES (1, 'one'), (3, 'three')) AS v (a, label) ON s.a = v.a
      UNION ALL SELECT 'none', 'zero'
      UNION ALL SELECT x, 'u' FROM UNNEST(ARRAY['p', 'q']) AS u (x)
sinks:
  - name: out
    from: t
    type: file
    path: %DIR%/out.csv
`, "%DIR%", dir)
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() pipeline.Summary {
		p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := p.Run(context.Background(), pipeline.RunOptions{StateDir: filepath.Join(dir, "state")})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	sum := run()
	if len(sum.Sources) != 1 || sum.Sources[0].Name != "s" || sum.Sources[0].In != 3 {
		t.Errorf("summary sources %+v, want s alone with 3 rows", sum.Sources)
	}
	out, err := os.ReadFile(filepath.Join(dir, "out.csv"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(got)
	want := []string{"none,zero", "p,u", "q,u", "x,one", "z,three"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	sum = run()
	if sum.Checkpoints.Restored == 0 || sum.Sources[0].In != 0 {
		t.Errorf("rerun: restored %d, read %d rows", sum.Checkpoints.Restored, sum.Sources[0].In)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "out.csv")); string(again) != string(out) {
		t.Errorf("rerun changed the output:\n%s\nwas\n%s", again, out)
	}
}

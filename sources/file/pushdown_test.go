package file_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// runQuery runs the transforms (name, sql, name, sql...; the last is
// q) over in.csv into out.csv and returns what the sink wrote, or the
// run's error.
func runQuery(t *testing.T, dir, in string, nameSQL ...string) (string, error) {
	t.Helper()
	var transforms strings.Builder
	for i := 0; i+1 < len(nameSQL); i += 2 {
		fmt.Fprintf(&transforms, "  - name: %s\n    sql: |\n      %s\n", nameSQL[i], nameSQL[i+1])
	}
	src, out := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv")
	if err := os.WriteFile(src, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`version: 1
name: pushdown
sources:
  - name: s
    type: file
    path: %s
    schema: [id BIGINT, name STRING, amount BIGINT, ts TIMESTAMP(3)]
transforms:
%ssinks:
  - {name: out, from: q, type: file, path: %s, overwrite: true}
`, src, transforms.String(), out)
	p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, yaml)
	if _, err := p.Run(testenv.Context(t, 30*time.Second), pipeline.RunOptions{}); err != nil {
		return "", err
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), nil
}

// TestPushdownUnreadBadValue: with projection pushdown a bad value in a
// column no query reads is not parsed, so the run goes on; read, the
// same value fails the run at its line.
func TestPushdownUnreadBadValue(t *testing.T) {
	dir := t.TempDir()
	in := "1,a,10,2024-01-01 00:00:00\n2,b,20,not a time\n3,c,30,2024-01-01 00:00:02\n"
	got, err := runQuery(t, dir, in, "q", "SELECT id, amount FROM s WHERE amount > 15")
	if err != nil {
		t.Fatalf("unread bad ts: %v", err)
	}
	if got != "2,20\n3,30\n" {
		t.Errorf("out.csv = %q, want rows 2 and 3", got)
	}
	_, err = runQuery(t, dir, in, "q", "SELECT id, ts FROM s WHERE amount > 15")
	if err == nil || !strings.Contains(err.Error(), "in.csv:2") || !strings.Contains(err.Error(), "not a time") {
		t.Fatalf("read bad ts: %v, want the error at in.csv:2", err)
	}
}

// TestPushdownSameOutput runs random files through one query with
// projection pushdown and through the same query over SELECT * (which
// reads every column, so nothing is pushed down): the outputs are equal.
func TestPushdownSameOutput(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	names := []string{"a", "", `"x,y"`, `"q""q"`, `"two` + "\n" + `lines"`, "zz"}
	queries := []string{
		"SELECT id, amount FROM %s WHERE amount > 500",
		"SELECT name, id * 2 AS d FROM %s WHERE name <> 'a'",
		"SELECT amount, name FROM %s",
	}
	for iter := range 6 {
		var in strings.Builder
		for i := range 50 + r.IntN(200) {
			fmt.Fprintf(&in, "%d,%s,%d,2024-01-01 00:00:%02d\n", i, names[r.IntN(len(names))], r.IntN(1000), r.IntN(60))
		}
		q := queries[iter%len(queries)]
		dir := t.TempDir()
		pushed, err := runQuery(t, dir, in.String(), "q", fmt.Sprintf(q, "s"))
		if err != nil {
			t.Fatal(err)
		}
		full, err := runQuery(t, dir, in.String(), "a", "SELECT * FROM s", "q", fmt.Sprintf(q, "a"))
		if err != nil {
			t.Fatal(err)
		}
		if pushed != full || strings.Count(full, "\n") < 10 {
			t.Fatalf("%s: pushed down:\n%s\nfull:\n%s", q, pushed, full)
		}
	}
}

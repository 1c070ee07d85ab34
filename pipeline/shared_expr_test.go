package pipeline_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/spec"
)

// TestSharedSubexpressionsSameRows: a query that writes the same calls in
// its WHERE and its SELECT list (q21's REGEXP_EXTRACT, LOWER) evaluates
// each once per row (the Calc's memo) and gives the rows of the same
// query with one of them written otherwise (not shared), over random
// nested records read through the json decoders (the Calc fused there,
// its field accesses pushed into columns of their own). CAST(r.b AS INT)
// fails on every text r.b holds, and is written twice where only a NULL
// r.b reaches it: evaluated any sooner, it would stop the run.
func TestSharedSubexpressionsSameRows(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	randomEvents(t, in, 3000, 2)
	const query = `SELECT id,
  CASE WHEN LOWER(r.b) = 'x' THEN 'is x' ELSE REGEXP_EXTRACT(r.b, '([a-z]+)', 1) END AS k,
  CASE WHEN r.b IS NULL THEN CAST(r.b AS INT) ELSE -1 END AS bi,
  CASE WHEN r.c.x < 5 THEN CAST(CAST(r.c.x AS STRING) AS INT) END AS cx
FROM s WHERE %s IS NOT NULL OR LOWER(r.b) IN ('x', '') OR r.b IS NULL AND CAST(r.b AS INT) IS NULL
  OR r.c.x < 5 AND CAST(CAST(r.c.x AS STRING) AS INT) = 1`
	run := func(name, where string) ([]string, *runtime.Calc) {
		return runQuery(t, dir, in, name, fmt.Sprintf(query, where))
	}
	shared, sc := run("shared", "REGEXP_EXTRACT(r.b, '([a-z]+)', 1)")
	plain, pc := run("plain", "REGEXP_EXTRACT(r.b || '', '([a-z]+)', 1)")
	if len(shared) < 500 {
		t.Fatalf("only %d rows", len(shared))
	}
	sameRows(t, shared, plain)
	// Shared: the memo's flag, REGEXP_EXTRACT, LOWER, CAST(r.b AS INT)
	// and the outer CAST of r.c.x (the inner one is written twice too,
	// but read only through the outer one); not shared: no
	// REGEXP_EXTRACT.
	if sc.Memo != 5 || pc.Memo != 4 {
		t.Errorf("memo widths %d shared and %d not, want 5 and 4", sc.Memo, pc.Memo)
	}
	// A Calc that only picks columns, its filter sharing a call: the
	// source decodes the columns and the filter reads them from a
	// scratch row (fuse.go filterPicked), its memo after them. The CAST
	// that fails on every row is written only under id < 0.
	const pick = "SELECT id FROM s WHERE %s = '1' OR SUBSTRING(CAST(id AS STRING), 1, 1) = '2' OR id < 0 AND CAST(CAST(id AS STRING) || 'x' AS INT) = 0"
	pshared, psc := runQuery(t, dir, in, "pickshared", fmt.Sprintf(pick, "SUBSTRING(CAST(id AS STRING), 1, 1)"))
	pplain, _ := runQuery(t, dir, in, "pickplain", fmt.Sprintf(pick, "SUBSTRING(CAST(id + 0 AS STRING), 1, 1)"))
	if len(pshared) < 300 {
		t.Fatalf("only %d rows picked", len(pshared))
	}
	sameRows(t, pshared, pplain)
	if psc.Memo == 0 || psc.Columns == nil {
		t.Errorf("picking Calc: memo width %d, columns %v; want a memo over picked columns", psc.Memo, psc.Columns)
	}
}

// sameRows fails unless the two sorted row lists are equal.
func sameRows(t *testing.T, shared, plain []string) {
	t.Helper()
	if !slices.Equal(shared, plain) {
		for i := range min(len(shared), len(plain)) {
			if shared[i] != plain[i] {
				t.Fatalf("row %d: shared %q, not shared %q", i, shared[i], plain[i])
			}
		}
		t.Fatalf("shared %d rows, not shared %d", len(shared), len(plain))
	}
}

// runQuery runs query over the json file in as transform t of a pipeline
// named name into a csv file, and returns its lines sorted and the
// transform's Calc.
func runQuery(t *testing.T, dir, in, name, query string) ([]string, *runtime.Calc) {
	t.Helper()
	{
		out := filepath.Join(dir, name+".csv")
		yaml := fmt.Sprintf(`version: 1
name: %s
sources:
  - name: s
    type: file
    path: %s
    format: json
    schema:
      - id BIGINT
      - r ROW<a INT, b STRING, c ROW<x BIGINT, y TIMESTAMP(3)>>
transforms:
  - name: t
    sql: "%s"
sinks:
  - {name: o, from: t, type: file, path: %s, format: csv}
`, name, in, strings.ReplaceAll(query, "\n", " "), out)
		runFile(t, dir, yaml)
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		slices.Sort(lines)
		return lines, calcOf(t, yaml)
	}
}

// calcOf returns the Calc of the transform of a pipeline file of one
// transform.
func calcOf(t *testing.T, yaml string) *runtime.Calc {
	t.Helper()
	f, err := spec.Parse("p.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(f, plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range g.Ops {
		if c, ok := op.Op.(*runtime.Calc); ok {
			return c
		}
	}
	t.Fatal("no Calc")
	return nil
}

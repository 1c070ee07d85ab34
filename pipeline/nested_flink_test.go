package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/expr"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// compositeExprs are constant expressions whose print form (Flink's
// Row.toString: [1, 2], {a=1}, +I[1, a]) and CAST text ([1, NULL],
// (1, a)) etld must give as Flink does.
var compositeExprs = []string{
	"ARRAY[1, 2]", "MAP['a', 1]", "ROW(1, 'a')", "ARRAY['x', CAST(NULL AS STRING)]", "ARRAY[ROW(1, 'a')]",
	"CAST(ARRAY[1, NULL] AS STRING)", "CAST(MAP['a', 1, 'b', 2] AS STRING)", "CAST(ROW(1, 'a') AS STRING)",
	"ARRAY[10, 20][1]", "CARDINALITY(ARRAY[1, 2, 3])", "CARDINALITY(MAP['a', 1])", "ELEMENT(ARRAY[5])",
	"ROW(1, 'a').EXPR$1", "ARRAY[1, 2] = ARRAY[1, 2]", "ARRAY[1, 2] <> ARRAY[1]", "CAST(ARRAY[0.5, 1] AS STRING)",
	"CAST(ARRAY[1, 2] AS ARRAY<BIGINT>)", "CAST(ROW(1, 'a') AS ROW<x BIGINT, y STRING>)", "ARRAY[1, NULL, 2.5]",
	"MAP['a', 1, 'a', 2]", "CAST(MAP['a', CAST(NULL AS INT)] AS STRING)", "ARRAY[CAST(0 AS DECIMAL(10, 7))]",
}

// TestCompositeMatchesFlink runs the same composite expressions, JSON
// output and CROSS JOIN UNNEST WITH ORDINALITY on Flink and on etld.
func TestCompositeMatchesFlink(t *testing.T) {
	testenv.Flink(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	data := `{"id":1,"tags":["a","b"],"m":{"k":1},"r":{"a":2,"b":"x"},"ts":["2024-01-02 10:00:00.5"]}` + "\n" +
		`{"id":2,"tags":[],"m":{},"r":{"a":null,"b":"y"},"ts":null}` + "\n" +
		`{"id":3,"tags":["c"],"m":null,"r":null,"ts":[]}` + "\n"
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(in, data)
	const cols = "id INT, tags ARRAY<STRING>, m MAP<STRING, INT>, r ROW<a INT, b STRING>, ts ARRAY<TIMESTAMP(3)>"
	exprScript := filepath.Join(dir, "exprs.sql")
	write(exprScript, "SELECT "+strings.Join(compositeExprs, ", ")+";\n")
	flinkJSON := filepath.Join(dir, "flink-json")
	jsonScript := filepath.Join(dir, "json.sql")
	write(jsonScript, fmt.Sprintf(`CREATE TABLE src (%s) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE snk (id INT, tags ARRAY<STRING>, m MAP<STRING, INT>, r ROW<a INT, b STRING>, ts ARRAY<TIMESTAMP(3)>, x STRING, n INT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO snk SELECT id, tags, m, r, ts, x, n FROM src CROSS JOIN UNNEST(tags) WITH ORDINALITY AS u (x, n);
`, cols, in, flinkJSON))
	res := testenv.RunFlink(t, 2*time.Minute, exprScript, jsonScript)
	for _, r := range res {
		if r.Err != "" {
			t.Fatalf("Flink failed on %s:\n%s", r.Script, r.Err)
		}
	}

	// Expressions: one row, printed.
	vals := make(row.Row, len(compositeExprs))
	for i, text := range compositeExprs {
		e, err := sql.ParseExpr(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		c, err := expr.Compile(e, expr.Table{})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if vals[i], err = c.Eval(nil); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
	if got, want := string(row.AppendPrint(nil, row.Insert, vals))+"\n", res[0].Out; got != want {
		t.Errorf("expressions:\netld  %s\nflink %s", got, want)
		for i, v := range vals {
			t.Logf("%s = %s", compositeExprs[i], v)
		}
	}

	// JSON decode, UNNEST WITH ORDINALITY, JSON encode.
	etldJSON := filepath.Join(dir, "etld.json")
	runFile(t, dir, fmt.Sprintf(`version: 1
name: composite-flink
sources:
  - name: src
    type: file
    path: %s
    format: json
    schema:
      - id INT
      - tags ARRAY<STRING>
      - m MAP<STRING, INT>
      - r ROW<a INT, b STRING>
      - ts ARRAY<TIMESTAMP(3)>
transforms:
  - name: t
    sql: SELECT id, tags, m, r, ts, x, n FROM src CROSS JOIN UNNEST(tags) WITH ORDINALITY AS u (x, n)
sinks:
  - {name: out, from: t, type: file, path: %s, format: json}
`, in, etldJSON))
	got := readLines(t, etldJSON)
	var want []string
	parts, _ := filepath.Glob(filepath.Join(flinkJSON, "*"))
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				want = append(want, l)
			}
		}
	}
	slices.Sort(want)
	if len(want) == 0 {
		t.Fatal("Flink wrote no JSON rows: the comparison would prove nothing")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("JSON after UNNEST:\netld:\n%s\nflink:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

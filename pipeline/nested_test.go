package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompositeTypesEndToEnd reads JSON records with ARRAY, MAP and ROW
// columns from a file, accesses their parts, unnests an array (with its
// ordinality, and under an aggregate whose updates the unnest must carry
// with their kinds), groups by an ARRAY, and checks the files written.
func TestCompositeTypesEndToEnd(t *testing.T) {
	dir := t.TempDir()
	in := strings.Join([]string{
		`{"id":1,"tags":["a","b"],"attrs":{"k":"x"},"who":{"name":"ann","age":30}}`,
		`{"id":2,"tags":["b"],"attrs":{},"who":{"name":"bob","age":null}}`,
		`{"id":3,"tags":[],"attrs":null,"who":null}`,
		`{"id":4,"tags":null,"attrs":{"k":"y","z":"w"},"who":{"name":"cy"}}`,
		`{"id":5,"tags":["b","a"],"attrs":{"k":"x"},"who":{"name":"di","age":5}}`,
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "in.json"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	runFile(t, dir, fmt.Sprintf(`version: 1
name: composite
sources:
  - name: src
    type: file
    path: %s
    format: json
    schema:
      - id INT
      - tags ARRAY<STRING>
      - attrs MAP<STRING, STRING>
      - who ROW<name STRING, age INT>
transforms:
  - name: flat
    sql: |
      SELECT id, tags[1] AS first_tag, CARDINALITY(tags) AS n, attrs['k'] AS k,
             who.name AS name, src.who.age AS age, ARRAY[id, id * 10] AS pair,
             CAST(who AS STRING) AS who_text
      FROM src
  - name: exploded
    sql: |
      SELECT id, tag, pos FROM src CROSS JOIN UNNEST(tags) WITH ORDINALITY AS u (tag, pos)
      WHERE tag <> 'zz'
  - name: per_tag
    sql: |
      SELECT u.tag, COUNT(*) AS c FROM src CROSS JOIN UNNEST(src.tags) AS u (tag) GROUP BY u.tag
  - name: totals
    sql: |
      SELECT c, COUNT(*) AS tags FROM per_tag CROSS JOIN UNNEST(ARRAY[c]) AS v (x) GROUP BY c
  - name: by_tags
    sql: |
      SELECT tags, COUNT(*) AS c FROM src WHERE tags IS NOT NULL GROUP BY tags
sinks:
  - {name: flat, from: flat, type: file, path: %s, format: json}
  - {name: exploded, from: exploded, type: file, path: %s}
  - {name: per_tag, from: per_tag, type: file, path: %s, mode: retract}
  - {name: totals, from: totals, type: file, path: %s, mode: retract}
  - {name: by_tags, from: by_tags, type: file, path: %s, format: json, mode: retract}
`, out("in.json"), out("flat.json"), out("exploded.csv"), out("per_tag.csv"), out("totals.csv"), out("by_tags.json")))

	check := func(name string, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	check("flat", readLines(t, out("flat.json")),
		`{"id":1,"first_tag":"a","n":2,"k":"x","name":"ann","age":30,"pair":[1,10],"who_text":"(ann, 30)"}`,
		`{"id":2,"first_tag":"b","n":1,"k":null,"name":"bob","age":null,"pair":[2,20],"who_text":"(bob, NULL)"}`,
		`{"id":3,"first_tag":null,"n":0,"k":null,"name":null,"age":null,"pair":[3,30],"who_text":null}`,
		`{"id":4,"first_tag":null,"n":null,"k":"y","name":"cy","age":null,"pair":[4,40],"who_text":"(cy, NULL)"}`,
		`{"id":5,"first_tag":"b","n":2,"k":"x","name":"di","age":5,"pair":[5,50],"who_text":"(di, 5)"}`)
	check("exploded", readLines(t, out("exploded.csv")), "1,a,1", "1,b,2", "2,b,1", "5,a,2", "5,b,1")
	check("per_tag", foldRows(t, out("per_tag.csv")), "a,2", "b,3")
	check("totals", foldRows(t, out("totals.csv")), "2,1", "3,1")
	check("by_tags", foldJSON(t, out("by_tags.json")),
		`{"tags":["a","b"],"c":1}`, `{"tags":["b","a"],"c":1}`, `{"tags":["b"],"c":1}`, `{"tags":[],"c":1}`)
}

// foldJSON folds a retract-mode JSON file (its "op" member first) into
// the rows it leaves, without the op, sorted.
func foldJSON(t *testing.T, path string) []string {
	t.Helper()
	var csvish []string
	for _, l := range readLines(t, path) {
		op, rest, ok := strings.Cut(strings.TrimPrefix(l, `{"op":"`), `",`)
		if !ok {
			t.Fatalf("no op member in %s", l)
		}
		csvish = append(csvish, op+",{"+rest)
	}
	tmp := filepath.Join(t.TempDir(), "folded.csv")
	if err := os.WriteFile(tmp, []byte(strings.Join(csvish, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return foldRows(t, tmp)
}

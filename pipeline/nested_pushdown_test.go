package pipeline_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// randomEvents writes n JSON records of id and a ROW column r nested two
// deep: r and r.c now objects, now null, now missing; members in any
// order and case, some twice, some unknown, strings escaped. Every value
// fits its type, so that a run that decodes r whole fails on none.
func randomEvents(t *testing.T, path string, n int, seed uint64) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 7))
	pick := func(vs ...string) string { return vs[rnd.IntN(len(vs))] }
	//lint:ignore S1021 the closure calls itself
	var object func(members [][2]string) string
	object = func(members [][2]string) string {
		if rnd.IntN(8) == 0 {
			return "null"
		}
		var ms []string
		for range rnd.IntN(len(members) + 3) {
			m := members[rnd.IntN(len(members))]
			name := m[0]
			if rnd.IntN(6) == 0 {
				name = strings.ToUpper(name)
			}
			if rnd.IntN(10) == 0 {
				name = "other"
			}
			ms = append(ms, fmt.Sprintf("%q:%s", name, m[1]))
		}
		return "{" + strings.Join(ms, ",") + "}"
	}
	var b strings.Builder
	for i := range n {
		c := object([][2]string{{"x", pick("1", "-3", "null", `"7"`)}, {"y", pick(`"2024-01-01 00:00:01"`, `"2024-01-01 00:00:02.5"`, "null")}})
		r := object([][2]string{{"a", pick("1", "2", "40", "null")}, {"b", pick(`"x"`, `"q\"\\é\u00e9"`, `""`, "null")}, {"c", c}})
		fmt.Fprintf(&b, `{"id":%d,"r":%s}`+"\n", i, r)
		if rnd.IntN(20) == 0 {
			fmt.Fprintf(&b, `{"r":%s,"id":%d,"r":null}`+"\n", r, i) // the last member wins
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNestedPushdownSameRows: a query that reads a ROW column only
// through field accesses (pushed into the json decoder) gives the rows
// the same query gives when it also reads the ROW whole (not pushed),
// through a computed column and transforms over transforms, over random
// nested records.
func TestNestedPushdownSameRows(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	randomEvents(t, in, 3000, 1)
	const query = `SELECT id, a, b, cx, cx1, y FROM (SELECT id, r.a AS a, r['b'] AS b, r.c.x AS cx, cx1, r.c['y'] AS y FROM s WHERE %s) WHERE a IS NULL OR a < 40`
	run := func(name, where string) []string {
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
      - cx1 AS r.c.x + 1
transforms:
  - name: t
    sql: "%s"
sinks:
  - {name: o, from: t, type: file, path: %s, format: csv}
`, name, in, fmt.Sprintf(query, where), out)
		p := runFile(t, dir, yaml)
		_ = p
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		slices.Sort(lines)
		return lines
	}
	pushed := run("pushed", "id >= 0")
	whole := run("whole", "id >= 0 AND (r IS NULL OR r IS NOT NULL)")
	if len(pushed) < 1000 {
		t.Fatalf("only %d rows", len(pushed))
	}
	if !slices.Equal(pushed, whole) {
		for i := range min(len(pushed), len(whole)) {
			if pushed[i] != whole[i] {
				t.Fatalf("row %d: pushed %q, whole %q", i, pushed[i], whole[i])
			}
		}
		t.Fatalf("pushed %d rows, whole %d", len(pushed), len(whole))
	}
}

package pipeline_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// foldRows applies a retract-mode CSV (op column first) to a multiset of
// whole rows and returns what is left, sorted; a retraction of a row not
// held fails the test.
func foldRows(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	held := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		op, rest, _ := strings.Cut(sc.Text(), ",")
		switch op {
		case "+I", "+U":
			held[rest]++
		case "-U", "-D":
			if held[rest] == 0 {
				t.Fatalf("%s retracts %q, which the table does not hold", op, rest)
			}
			held[rest]--
		default:
			t.Fatalf("bad op %q", op)
		}
	}
	var out []string
	for r, n := range held {
		for range n {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// TestUnionPipelines runs UNION ALL of two file sources of different
// integer types, a table unioned with itself, UNION of three updating
// aggregates (two of them equal, whose copies it must collapse) into a
// retract sink and in batch execution, and a WITH query read twice, and
// checks the final tables.
func TestUnionPipelines(t *testing.T) {
	dir := t.TempDir()
	var a, b strings.Builder
	var wantAll []string
	countA, countB := map[int]int{}, map[int]int{}
	for i := range 3000 {
		k := i % 7
		fmt.Fprintf(&a, "%d,a%d\n", k, i)
		wantAll = append(wantAll, fmt.Sprintf("%d,a%d", k, i))
		countA[k]++
	}
	for i := range 2000 {
		k := i % 11
		fmt.Fprintf(&b, "%d,b%d\n", k, i)
		wantAll = append(wantAll, fmt.Sprintf("%d,b%d", k, i))
		countB[k]++
	}
	for name, data := range map[string]string{"a.csv": a.String(), "b.csv": b.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	runFile(t, dir, fmt.Sprintf(`version: 1
name: unions
sources:
  - name: a
    type: file
    path: %s
    schema: [id INT, tag STRING]
  - name: b
    type: file
    path: %s
    schema: [id BIGINT, tag STRING]
transforms:
  - name: merged
    sql: SELECT id, tag FROM a UNION ALL SELECT id, tag FROM b
  - name: counts
    sql: |
      SELECT id, COUNT(*) AS n FROM a GROUP BY id
      UNION ALL
      SELECT id, COUNT(*) AS n FROM b GROUP BY id
      UNION
      SELECT id, COUNT(*) FROM a GROUP BY id
  - name: twice
    sql: |
      WITH small AS (SELECT id FROM a WHERE id < 2)
      SELECT id, 'x' AS src FROM small
      UNION ALL
      SELECT id, 'y' AS src FROM small WHERE id = 1
  - name: self
    sql: SELECT * FROM a UNION ALL SELECT * FROM a
sinks:
  - name: self
    from: self
    type: file
    path: %s
  - name: all
    from: merged
    type: file
    path: %s
  - name: counts
    from: counts
    type: file
    path: %s
    mode: retract
  - name: twice
    from: twice
    type: file
    path: %s
`, out("a.csv"), out("b.csv"), out("self.csv"), out("all.csv"), out("counts.csv"), out("twice.csv")))

	got := readLines(t, out("all.csv"))
	slices.Sort(got)
	slices.Sort(wantAll)
	if !slices.Equal(got, wantAll) {
		t.Errorf("UNION ALL: %d rows, want %d (first got %q)", len(got), len(wantAll), got[:min(3, len(got))])
	}

	gotSelf := readLines(t, out("self.csv"))
	slices.Sort(gotSelf)
	var wantSelf []string
	for _, r := range readLines(t, out("a.csv")) {
		wantSelf = append(wantSelf, r, r)
	}
	slices.Sort(wantSelf)
	if !slices.Equal(gotSelf, wantSelf) {
		t.Errorf("a UNION ALL a: %d rows, want every row of a twice (%d)", len(gotSelf), len(wantSelf))
	}

	var wantCounts []string
	seen := map[string]bool{}
	for _, m := range []map[int]int{countA, countB} {
		for k, n := range m {
			r := fmt.Sprintf("%d,%d", k, n)
			if !seen[r] {
				seen[r] = true
				wantCounts = append(wantCounts, r)
			}
		}
	}
	slices.Sort(wantCounts)
	if gotCounts := foldRows(t, out("counts.csv")); !slices.Equal(gotCounts, wantCounts) {
		t.Errorf("UNION of updating inputs ends with\n%s\nwant\n%s", strings.Join(gotCounts, "\n"), strings.Join(wantCounts, "\n"))
	}
	// Batch execution gives the same table as final rows.
	runFile(t, dir, fmt.Sprintf(`version: 1
name: unions-batch
execution: batch
sources:
  - name: a
    type: file
    path: %s
    schema: [id INT, tag STRING]
  - name: b
    type: file
    path: %s
    schema: [id BIGINT, tag STRING]
transforms:
  - name: counts
    sql: |
      SELECT id, COUNT(*) AS n FROM a GROUP BY id
      UNION ALL
      SELECT id, COUNT(*) AS n FROM b GROUP BY id
      UNION
      SELECT id, COUNT(*) FROM a GROUP BY id
sinks:
  - name: counts
    from: counts
    type: file
    path: %s
`, out("a.csv"), out("b.csv"), out("batch.csv")))
	batched := readLines(t, out("batch.csv"))
	slices.Sort(batched)
	if !slices.Equal(batched, wantCounts) {
		t.Errorf("UNION in batch execution gives\n%s\nwant\n%s", strings.Join(batched, "\n"), strings.Join(wantCounts, "\n"))
	}
	data, _ := os.ReadFile(out("counts.csv"))
	if !strings.Contains(string(data), "-D,") && !strings.Contains(string(data), "-U,") {
		t.Error("the UNION's changelog retracted nothing: the updating inputs were not exercised")
	}

	var wantTwice []string
	for k, n := range countA {
		for range n {
			switch k {
			case 0:
				wantTwice = append(wantTwice, "0,x")
			case 1:
				wantTwice = append(wantTwice, "1,x", "1,y")
			}
		}
	}
	slices.Sort(wantTwice)
	gotTwice := readLines(t, out("twice.csv"))
	slices.Sort(gotTwice)
	if !slices.Equal(gotTwice, wantTwice) {
		t.Errorf("WITH read twice: %d rows, want %d", len(gotTwice), len(wantTwice))
	}
}

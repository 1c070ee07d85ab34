package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateAgainstState = flag.Bool("update-against-state", false, "rewrite testdata/against-state/*")

// widenTestPipeline keeps a column v of the type %[2]s in one operator
// of each stateful family; %[1]s is the directory of the files.
const widenTestPipeline = `version: 1
name: widen
sources:
  - name: a
    type: file
    path: %[1]s/a.csv
    schema: [k STRING, "v %[2]s", ts BIGINT, "et AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: et - INTERVAL '5' SECOND
  - name: b
    type: file
    path: %[1]s/b.csv
    schema: [k STRING, "v %[2]s", ts BIGINT, "et AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: et - INTERVAL '5' SECOND
transforms:
  - name: agg
    sql: SELECT v, COUNT(*) AS n FROM a GROUP BY v
  - name: win
    sql: SELECT v, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(et), INTERVAL '10' SECOND)) GROUP BY v, window_start, window_end
  - name: sess
    sql: SELECT v, window_start, window_end, COUNT(*) AS n FROM TABLE(SESSION(TABLE a PARTITION BY v, DESCRIPTOR(et), INTERVAL '30' SECOND)) GROUP BY v, window_start, window_end
  - name: j
    sql: SELECT a.k, b.k AS bk, a.v FROM a JOIN b ON a.v = b.v
  - name: ij
    sql: SELECT a.k, b.k AS bk, a.v FROM a JOIN b ON a.v = b.v AND a.et BETWEEN b.et - INTERVAL '30' SECOND AND b.et + INTERVAL '30' SECOND
  - name: dd
    sql: SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY v ORDER BY et DESC) AS rn FROM a) WHERE rn = 1
  - name: topn
    sql: SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM a) WHERE rn <= 2
  - name: ov
    sql: SELECT k, v, COUNT(*) OVER (PARTITION BY v ORDER BY et RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW) AS c FROM a
  - name: setop
    sql: SELECT v FROM a INTERSECT SELECT v FROM b
  - name: mr
    sql: SELECT * FROM a MATCH_RECOGNIZE (PARTITION BY v ORDER BY et MEASURES FIRST(A.k) AS fk ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B) DEFINE B AS B.k <> A.k)
sinks:
  - {name: o1, from: agg, type: blackhole}
  - {name: o2, from: win, type: blackhole}
  - {name: o3, from: sess, type: blackhole}
  - {name: o4, from: j, type: blackhole}
  - {name: o5, from: ij, type: blackhole}
  - {name: o6, from: dd, type: blackhole}
  - {name: o7, from: topn, type: blackhole}
  - {name: o8, from: ov, type: blackhole}
  - {name: o9, from: setop, type: blackhole}
  - {name: o10, from: mr, type: blackhole}
`

// TestValidateAgainstStateWidened: with a column of every stateful
// family widened, etld validate --against-state says migrate with the
// change (`migrate (INT -> BIGINT on column v)`) for each operator, and
// etld run then restores; a narrowing is refused for each, naming the
// column and both types, and exits 1. The output is held to
// testdata/against-state/*.out (-update-against-state writes them).
func TestValidateAgainstStateWidened(t *testing.T) {
	dir := t.TempDir()
	var a, b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&a, "k%d,%d,%d\n", i%3, i%4, 1_700_000_000_000+int64(i)*1000)
		fmt.Fprintf(&b, "k%d,%d,%d\n", i%2, i%5, 1_700_000_000_000+int64(i)*1000)
	}
	writeFile(t, filepath.Join(dir, "a.csv"), a.String())
	writeFile(t, filepath.Join(dir, "b.csv"), b.String())
	file := filepath.Join(dir, "widen.yaml")
	stateDir := filepath.Join(dir, "state")
	writeFile(t, file, fmt.Sprintf(widenTestPipeline, dir, "INT"))
	if code, _, stderr := etldCLI("run", "--quiet", "--state-dir", stateDir, file); code != 0 {
		t.Fatalf("etld run: exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		golden, typ string
		code        int
	}{
		{"widened.out", "BIGINT", 0},
		{"narrowed.out", "SMALLINT", 1},
	} {
		t.Run(c.golden, func(t *testing.T) {
			writeFile(t, file, fmt.Sprintf(widenTestPipeline, dir, c.typ))
			code, stdout, stderr := etldCLI("validate", "--against-state", stateDir, file)
			if code != c.code {
				t.Fatalf("exit %d, want %d:\n%s%s", code, c.code, stdout, stderr)
			}
			// stderr holds the warnings of unbounded state, and the
			// summary of a refusal.
			if c.code != 0 && !strings.Contains(stderr, "pipeline widen: 10 of its operators refuse the saved state") {
				t.Errorf("stderr: %s", stderr)
			}
			got := strings.ReplaceAll(stdout, dir, "DIR")
			path := filepath.Join("testdata", "against-state", c.golden)
			if *updateAgainstState {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (write it with -update-against-state)", err)
			}
			if got != string(want) {
				t.Errorf("etld validate --against-state of v %s:\n%s\nwant (%s):\n%s", c.typ, got, path, want)
			}
		})
	}
	// The widened file runs on the saved state.
	writeFile(t, file, fmt.Sprintf(widenTestPipeline, dir, "BIGINT"))
	if code, _, stderr := etldCLI("run", "--quiet", "--state-dir", stateDir, file); code != 0 {
		t.Fatalf("etld run of the widened file: exit %d: %s", code, stderr)
	}
}

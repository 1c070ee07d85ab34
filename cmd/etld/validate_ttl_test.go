package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ttlTestPipeline is a GROUP BY and a regular join whose state_ttl is
// %[2]s (the pipeline's), the join's own %[3]s.
const ttlTestPipeline = `version: 1
name: ttl
state_ttl: %[2]s
sources:
  - name: a
    type: file
    path: %[1]s/a.csv
    schema: [k STRING, v INT]
transforms:
  - name: agg
    sql: SELECT k, COUNT(*) AS n FROM a GROUP BY k
  - name: j
    sql: SELECT x.k, y.v FROM a AS x JOIN a AS y ON x.k = y.k
    state_ttl: %[3]s
sinks:
  - {name: o1, from: agg, type: blackhole}
  - {name: o2, from: j, type: blackhole}
`

// TestValidateAgainstStateTTL: a changed state_ttl shows as migrate
// with the TTLs before and after (`migrate (state TTL 1h -> 10s)`),
// an unchanged one as keep; the checkpoint records each operator's TTL.
// The output is held to testdata/against-state/ttl.out.
func TestValidateAgainstStateTTL(t *testing.T) {
	dir := t.TempDir()
	var a strings.Builder
	for i := range 10 {
		fmt.Fprintf(&a, "k%d,%d\n", i%3, i)
	}
	writeFile(t, filepath.Join(dir, "a.csv"), a.String())
	file := filepath.Join(dir, "ttl.yaml")
	stateDir := filepath.Join(dir, "state")
	writeFile(t, file, fmt.Sprintf(ttlTestPipeline, dir, "1h", "2m"))
	if code, _, stderr := etldCLI("run", "--quiet", "--state-dir", stateDir, file); code != 0 {
		t.Fatalf("etld run: exit %d: %s", code, stderr)
	}
	writeFile(t, file, fmt.Sprintf(ttlTestPipeline, dir, "10s", "2m"))
	code, stdout, stderr := etldCLI("validate", "--against-state", stateDir, file)
	if code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
	}
	got := strings.ReplaceAll(stdout, dir, "DIR")
	path := filepath.Join("testdata", "against-state", "ttl.out")
	if *updateAgainstState {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update-against-state)", err)
	}
	if got != string(want) {
		t.Errorf("etld validate --against-state with state_ttl 1h -> 10s:\n%s\nwant (%s):\n%s", got, path, want)
	}
	// The edited file runs on the saved state.
	if code, _, stderr := etldCLI("run", "--quiet", "--state-dir", stateDir, file); code != 0 {
		t.Fatalf("etld run of the edited file: exit %d: %s", code, stderr)
	}
}

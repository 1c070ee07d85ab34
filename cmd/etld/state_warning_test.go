package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A streaming GROUP BY without state_ttl passes validate and explain
// with a warning on stderr naming its position and transform; stdout
// stays the report a script reads.
func TestValidateAndExplainWarnOfUnboundedState(t *testing.T) {
	const file = `version: 1
name: per_id
sources:
  - name: gen
    type: datagen
    schema: [id BIGINT]
transforms:
  - name: counts
    sql: SELECT id, COUNT(*) AS n FROM gen GROUP BY id
sinks:
  - name: out
    from: counts
    type: blackhole
`
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	want := path + `:8:5: warning: transform "counts": GroupAggregate(groupBy=[id], select=[COUNT(*)]) keeps state for every key it sees`
	for _, cmd := range []func([]string, *bytes.Buffer, *bytes.Buffer) int{
		func(a []string, o, e *bytes.Buffer) int { return cmdValidate(a, o, e) },
		func(a []string, o, e *bytes.Buffer) int { return cmdExplain(a, o, e) },
	} {
		var stdout, stderr bytes.Buffer
		if code := cmd([]string{path}, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		if !strings.Contains(stderr.String(), want) || strings.Contains(stdout.String(), "warning") {
			t.Errorf("stdout %q, stderr %q; want the warning %q on stderr only", stdout.String(), stderr.String(), want)
		}
	}
}

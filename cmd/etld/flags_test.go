package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --run that matches no test is an error (a renamed test would otherwise
// pass its CI step with nothing run), and so is a --timeout that is not
// above 0; flags may follow the files.
func TestTestFlags(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "cmd", "etld", "testdata", "etldtest")
	stdout, stderr, code := runIn(t, dir, "test", "--run", "^nothing$", "failing.yaml")
	if code != 2 || !strings.Contains(stderr, `etld test: --run "^nothing$" matches none of the 3 tests`) || strings.Contains(stdout, "PASS:") {
		t.Errorf("--run matching nothing: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, timeout := range []string{"-1s", "0s"} {
		_, stderr, code := runIn(t, dir, "test", "--timeout", timeout, "failing.yaml")
		if code != 2 || !strings.Contains(stderr, "etld test: --timeout: want a duration above 0, got "+timeout) {
			t.Errorf("--timeout %s: exit %d, stderr:\n%s", timeout, code, stderr)
		}
	}
	stdout, stderr, code = runIn(t, dir, "test", "failing.yaml", "--run", "^passes$")
	if code != 0 || !strings.Contains(stdout, "PASS passes") || strings.Contains(stdout, "FAIL") || stderr != "" {
		t.Errorf("--run after the file: exit %d:\n%s%s", code, stdout, stderr)
	}
}

// Every command takes its flags before, between or after the files; an
// unknown flag after a file is a flag error, never a file name; after
// --, every argument is a file.
func TestFlagsAfterFiles(t *testing.T) {
	dir := t.TempDir()
	const pipeline = `version: 1
name: q
sources:
  - {name: g, type: datagen, rows: 3, seed: 1, schema: [id INT]}
sinks:
  - {name: out, from: g, type: blackhole}
`
	if err := os.WriteFile(filepath.Join(dir, "q.yaml"), []byte(pipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runIn(t, dir, "run", "q.yaml", "--quiet")
	if code != 0 || stderr != "" || stdout != "" {
		t.Errorf("run q.yaml --quiet: exit %d, stdout %q, stderr %q; want 0 and no summary", code, stdout, stderr)
	}
	stdout, _, code = runIn(t, dir, "explain", "q.yaml", "--format", "json")
	if code != 0 || !strings.HasPrefix(stdout, "{") {
		t.Errorf("explain q.yaml --format json: exit %d:\n%s", code, stdout)
	}
	for _, cmd := range []string{"run", "validate", "explain", "test"} {
		_, stderr, code := runIn(t, dir, cmd, "q.yaml", "--nope")
		if code != 2 || !strings.Contains(stderr, "etld "+cmd+": flag provided but not defined: --nope") {
			t.Errorf("%s q.yaml --nope: exit %d, stderr %q", cmd, code, stderr)
		}
	}
	_, stderr, code = runIn(t, dir, "validate", "q.yaml", "--", "--quiet")
	if code != 1 || !strings.Contains(stderr, "--quiet") {
		t.Errorf("validate q.yaml -- --quiet: exit %d, stderr %q; want --quiet read as a file", code, stderr)
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runIn runs the etld command in dir (the paths in its output are as
// given, relative to it).
func runIn(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// Every example has tests, and they pass with no service running: the
// sources and sinks are replaced, the ${VAR}s of their addresses and
// secrets may stay unset.
func TestTestPassesOnEveryExample(t *testing.T) {
	for _, v := range []string{"KAFKA_BROKERS", "ES_HOSTS", "ETLD_MYSQL_DSN", "ETLD_PG_DSN"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	examples := filepath.Join(repoRoot(t), "configs", "examples")
	stdout, stderr, code := runIn(t, examples, "test", ".")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	files, err := filepath.Glob(filepath.Join(examples, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		if !strings.Contains(stdout, filepath.Base(f)+" (") {
			t.Errorf("example %s has no tests:\n%s", filepath.Base(f), stdout)
		}
	}
	if strings.Contains(stdout, "FAIL") || strings.Contains(stdout, "no tests") || !strings.Contains(stdout, "\nPASS: ") {
		t.Errorf("output:\n%s", stdout)
	}
}

// A failing test prints FAIL with an aligned diff per sink, a run that
// fails prints its error at the record's line, a pipeline without tests
// is reported as such, and the exit is 1 (testdata/etldtest/failing.out).
func TestTestFailGolden(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "cmd", "etld", "testdata", "etldtest")
	want, err := os.ReadFile(filepath.Join(dir, "failing.out"))
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runIn(t, dir, "test", "failing.yaml", "untested.yaml")
	if code != 1 || stderr != "" {
		t.Errorf("exit %d, stderr %q; want 1 and nothing", code, stderr)
	}
	if stdout != string(want) {
		t.Errorf("output:\n%s\nwant (testdata/etldtest/failing.out):\n%s", stdout, want)
	}
	// --run picks the tests by name: the passing one alone passes.
	stdout, _, code = runIn(t, dir, "test", "--run", "^passes$", "failing.yaml")
	if code != 0 || !strings.Contains(stdout, "PASS passes") || strings.Contains(stdout, "FAIL") {
		t.Errorf("--run: exit %d:\n%s", code, stdout)
	}
}

// Load errors (of the pipeline or of its tests) exit 2 with every error
// at its position; usage errors exit 2 too.
func TestTestLoadErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	pipeline := `version: 1
name: p
sources:
  - name: s
    type: datagen
    rows: 1
    schema: [n BIGINT]
sinks:
  - name: out
    from: s
    type: print
tests:
  - name: t
    inputs:
      s: {rows: [{m: 1}]}
    expect:
      outt: {changes: []}
`
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(pipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runIn(t, dir, "test", "p.yaml")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, want := range []string{
		`p.yaml:15:19: tests[0].inputs.s.rows[0].m: s has no column "m"`,
		`p.yaml:17:7: tests[0].expect.outt: "outt" is not a sink of this pipeline; did you mean "out"?`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "ERROR: 0 passed, 0 failed, 1 file did not load") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if _, _, code := runIn(t, dir, "test", "--run", "(", "p.yaml"); code != 2 {
		t.Errorf("a bad --run: exit %d, want 2", code)
	}
	if _, _, code := runIn(t, dir, "test", "nope.yaml"); code != 2 {
		t.Errorf("a missing file: exit %d, want 2", code)
	}
}

// The value of a ${VAR} never reaches the output, not even in a row of a
// diff: a SQL literal may come from a variable.
func TestTestNeverPrintsSecrets(t *testing.T) {
	const secret = "s3cr3t-t0ken-value"
	t.Setenv("ETLD_TEST_PIPETEST_SECRET", secret)
	dir := t.TempDir()
	pipeline := `version: 1
name: p
sources:
  - name: s
    type: datagen
    rows: 1
    schema: [n BIGINT]
transforms:
  - name: tagged
    sql: SELECT n, '${ETLD_TEST_PIPETEST_SECRET}' AS tag FROM s
sinks:
  - name: out
    from: tagged
    type: print
tests:
  - name: t
    inputs:
      s: {rows: [{n: 1}]}
    expect:
      out:
        changes:
          - +I: {n: 1, tag: other}
`
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(pipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runIn(t, dir, "test", "p.yaml")
	if code != 1 {
		t.Errorf("exit %d, want 1:\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, secret) || !strings.Contains(stdout, "${ETLD_TEST_PIPETEST_SECRET}") {
		t.Errorf("the secret is printed, or the diff does not show its variable instead:\n%s%s", stdout, stderr)
	}
}

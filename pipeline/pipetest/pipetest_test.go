package pipetest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/pipetest"
)

// counts is a pipeline whose result updates: GROUP BY into print (retract
// mode) and into Elasticsearch (upsert mode, key id). HAVING makes the
// group's row go away (-D) at its third reading.
const counts = `version: 1
name: counts
sources:
  - name: s
    type: file
    path: in.csv
    schema: [id STRING, ts BIGINT, v DOUBLE]
transforms:
  - name: c
    sql: SELECT id, COUNT(*) AS n, SUM(v) AS total FROM s GROUP BY id HAVING COUNT(*) < 3
sinks:
  - name: console
    from: c
    type: print
  - name: es
    from: c
    type: elasticsearch
    hosts: ${PIPETEST_UNSET_HOSTS}
    index: counts
`

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func env() pipetest.Env {
	return pipetest.Env{Registry: builtin.Registry(), Lookup: func(string) (string, bool) { return "", false }}
}

func runFile(t *testing.T, path string) ([]pipetest.Result, string) {
	t.Helper()
	s, err := pipetest.Load(path, env())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	results := s.Run(context.Background(), nil)
	var out bytes.Buffer
	for _, r := range results {
		pipetest.Write(&out, r)
	}
	return results, out.String()
}

func TestRun(t *testing.T) {
	tests := []struct {
		name  string
		tests string
		pass  bool
		out   string // the whole report, when given
	}{{
		name: "changes in order, with their kinds",
		tests: `
  - name: t
    inputs:
      s:
        lines: ["a,1,1.5", "b,2,1", "a,3,2"]
    expect:
      console:
        changes:
          - +I: {id: a, n: 1, total: 1.5}
          - +I: {id: b, n: 1, total: 1.0}
          - -U: {id: a, n: 1, total: 1.5}
          - +U: {id: a, n: 2, total: 3.5}
      es:
        changes:
          - +I: {id: a, n: 1, total: 1.5}
          - +I: {id: b, n: 1, total: 1.0}
          - +U: {id: a, n: 2, total: 3.5}
`,
		pass: true,
	}, {
		name: "the filter's -D empties the upsert sink's key",
		tests: `
  - name: t
    inputs:
      s:
        rows:
          - {id: a, ts: 1, v: 1}
          - {id: a, ts: 2, v: 1}
          - {id: a, ts: 3, v: 1}
          - {id: b, ts: 4, v: 5}
    expect:
      es:
        final:
          - {id: b, n: 1, total: 5.0}
      console:
        final:
          - {id: b, n: 1, total: 5.0}
`,
		pass: true,
	}, {
		name: "a wrong change fails with an aligned diff",
		tests: `
  - name: sums
    inputs:
      s:
        lines: ["a,1,1.5", "a,2,2"]
    expect:
      console:
        changes:
          - +I: {id: a, n: 1, total: 1.5}
          - -U: {id: a, n: 1, total: 1.5}
          - +U: {id: a, n: 2, total: 4.0}
`,
		out: `FAIL sums (FILE:21:5)
    sink console (retract mode): changes differ (in order; want: expected, not received; got: received, not expected)
            kind  id  n  total
      ok    +I    a   1  1.5
      ok    -U    a   1  1.5
      want  +U    a   2  4.0
      got   +U    a   2  3.5
`,
	}, {
		name: "order matters unless ordered is false",
		tests: `
  - name: in order
    inputs:
      s: {lines: ["a,1,1", "b,2,1"]}
    expect:
      es:
        changes:
          - +I: {id: b, n: 1, total: 1.0}
          - +I: {id: a, n: 1, total: 1.0}
  - name: any order
    inputs:
      s: {lines: ["a,1,1", "b,2,1"]}
    expect:
      es:
        ordered: false
        changes:
          - +I: {id: b, n: 1, total: 1.0}
          - +I: {id: a, n: 1, total: 1.0}
`,
		out: `FAIL in order (FILE:21:5)
    sink es (upsert mode, key [id]): changes differ (in order; want: expected, not received; got: received, not expected)
            kind  id  n  total
      want  +I    b   1  1.0
      ok    +I    a   1  1.0
      got   +I    b   1  1.0
PASS any order
`,
	}, {
		name: "the final table of an upsert sink",
		tests: `
  - name: final
    inputs:
      s: {lines: ["a,1,1", "a,2,1"]}
    expect:
      es:
        final:
          - {id: a, n: 1, total: 1.0}
`,
		out: `FAIL final (FILE:21:5)
    sink es (upsert mode, key [id]): final table differs (in any order; want: expected, not there; got: there, not expected)
            id  n  total
      want  a   1  1.0
      got   a   2  2.0
`,
	}, {
		name: "a bad record with on_error fail fails the test at its line",
		tests: `
  - name: bad
    inputs:
      s:
        lines: |
          a,1,1
          a,x,1
    expect:
      console:
        changes: []
`,
		out: "FAIL bad (FILE:21:5)\n    the run failed: source \"s\": read: FILE:26:11: column ts: cannot parse \"x\" as BIGINT (on_error: fail;",
	}, {
		name: "no rows, no changes",
		tests: `
  - name: empty
    inputs:
      s: {rows: []}
    expect:
      console: {changes: []}
      es: {final: []}
`,
		pass: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := write(t, dir, "counts.yaml", counts+"tests:"+tc.tests)
			results, out := runFile(t, path)
			passed := true
			for _, r := range results {
				passed = passed && r.Passed()
			}
			if tc.out != "" {
				want := strings.ReplaceAll(tc.out, "FILE", path)
				if !strings.HasPrefix(out, want) {
					t.Errorf("report:\n%s\nwant:\n%s", out, want)
				}
				return
			}
			if passed != tc.pass {
				t.Errorf("passed = %v, want %v; report:\n%s", passed, tc.pass, out)
			}
		})
	}
}

// A bad record's error names the test's line it came from.
func TestBadRecordNamesItsLine(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "counts.yaml", counts+`tests:
  - name: bad
    inputs:
      s:
        lines: |
          a,1,1
          a,x,1
    expect:
      console: {changes: []}
`)
	results, out := runFile(t, path)
	if len(results) != 1 || results[0].Err == nil {
		t.Fatalf("want one failed run; report:\n%s", out)
	}
	if !strings.Contains(results[0].Err.Error(), path+":26:11") {
		t.Errorf("error %q does not name the record %s:26:11", results[0].Err, path)
	}
}

// Errors in the tests are positioned: file:line:col and the field path.
func TestLoadErrors(t *testing.T) {
	tests := []struct{ name, tests, want string }{
		{"unknown source", `
  - name: t
    inputs:
      z: {rows: []}
    expect:
      console: {changes: []}
`, `:23:7: tests[0].inputs.z: "z" is not a source of this pipeline; did you mean "s"?`},
		{"unknown sink", `
  - name: t
    expect:
      consle: {changes: []}
`, `:23:7: tests[0].expect.consle: "consle" is not a sink of this pipeline; did you mean "console"?`},
		{"unknown column", `
  - name: t
    inputs:
      s: {rows: [{idd: a}]}
    expect:
      console: {changes: []}
`, `:23:19: tests[0].inputs.s.rows[0].idd: s has no column "idd"; did you mean "id"?`},
		{"a column left out of an expected row", `
  - name: t
    expect:
      console:
        changes:
          - +I: {id: a, n: 1}
`, `:25:13: tests[0].expect.console.changes[0]: the row gives no value for total of the input of sink console (write ` + "`total: null`" + ` for NULL)`},
		{"a value of the wrong type", `
  - name: t
    inputs:
      s: {rows: [{id: a, ts: soon}]}
    expect:
      console: {changes: []}
`, `:23:30: tests[0].inputs.s.rows[0].ts: column ts is BIGINT: cannot parse "soon" as BIGINT`},
		{"-U at an upsert sink", `
  - name: t
    expect:
      es:
        changes:
          - -U: {id: a, n: 1, total: 1}
`, `:25:13: tests[0].expect.es.changes[0]: sink es runs in upsert mode, which never receives -U (key [id]): leave the -U changes out`},
		{"an unknown key", `
  - name: t
    expect:
      console: {changes: [], orderd: false}
`, `:23:30: tests[0].expect.console.orderd: unknown key; did you mean "ordered"?`},
		{"two inputs for one source", `
  - name: t
    inputs:
      s: {rows: [], lines: []}
    expect:
      console: {changes: []}
`, `:23:7: tests[0].inputs.s: give the input of source "s" as exactly one of rows, lines or file (found 2)`},
		{"no expectation", `
  - name: t
`, `:21:5: tests[0].expect: missing required key`},
		{"a missing file", `
  - name: t
    inputs:
      s: {file: nope.csv}
    expect:
      console: {changes: []}
`, `:23:17: tests[0].inputs.s.file: cannot read the input file`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := write(t, dir, "counts.yaml", counts+"tests:"+tc.tests)
			_, err := pipetest.Load(path, env())
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			if !strings.Contains(err.Error(), path+tc.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s%s", err, path, tc.want)
			}
		})
	}
}

// NAME_test.yaml beside NAME.yaml holds the tests; its input files are
// found from its directory, and a pipeline with tests in both places is
// refused.
func TestTestsFileBeside(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "counts.yaml", counts)
	write(t, dir, "in.csv", "a,1,1\na,2,2\n")
	write(t, dir, "counts_test.yaml", `tests:
  - name: from a file
    inputs:
      s: {file: in.csv}
    expect:
      es:
        final: [{id: a, n: 2, total: 3.0}]
`)
	results, out := runFile(t, path)
	if len(results) != 1 || !results[0].Passed() {
		t.Fatalf("want one passing test; report:\n%s", out)
	}
	both := write(t, dir, "counts.yaml", counts+`tests:
  - name: inline
    expect:
      console: {changes: []}
`)
	if _, err := pipetest.Load(both, env()); err == nil || !strings.Contains(err.Error(), "counts_test.yaml too") {
		t.Errorf("tests in both places: error %v", err)
	}
}

// A test writes nothing a pipeline's dead_letter names: the rejected
// records go to a scratch directory.
func TestDeadLetterStaysInScratch(t *testing.T) {
	dir := t.TempDir()
	deadLetter := filepath.Join(dir, "rejected.jsonl")
	pipeline := strings.Replace(counts, "    schema: [id STRING, ts BIGINT, v DOUBLE]\n",
		"    schema: [id STRING, ts BIGINT, v DOUBLE]\n    on_error: dead-letter\n    dead_letter: "+deadLetter+"\n", 1)
	path := write(t, dir, "counts.yaml", pipeline+`tests:
  - name: a bad record is set aside
    inputs:
      s:
        lines: ["a,1,1", "a,x,1", "a,2,1"]
    expect:
      es:
        final: [{id: a, n: 2, total: 2.0}]
`)
	results, out := runFile(t, path)
	if len(results) != 1 || !results[0].Passed() {
		t.Fatalf("want one passing test; report:\n%s", out)
	}
	if _, err := os.Stat(deadLetter); !os.IsNotExist(err) {
		t.Errorf("the test wrote the pipeline's dead-letter file %s (stat: %v)", deadLetter, err)
	}
}

// A changelog source (Kafka with debezium-json) takes its kinds from the
// records (lines, decoded by the format) or from the rows (`-D:`); the
// aggregate over it retracts.
func TestChangelogSource(t *testing.T) {
	const pipeline = `version: 1
name: cdc
sources:
  - name: users
    type: kafka
    brokers: ${PIPETEST_UNSET_BROKERS}
    topic: users
    format: debezium-json
    key: [id]
    schema: [id BIGINT, country STRING]
transforms:
  - name: per_country
    sql: SELECT country, COUNT(*) AS n FROM users GROUP BY country
sinks:
  - name: out
    from: per_country
    type: print
tests:
  - name: from debezium records
    inputs:
      users:
        lines:
          - '{"before": null, "after": {"id": 1, "country": "fr"}, "op": "c"}'
          - '{"before": {"id": 1, "country": "fr"}, "after": {"id": 1, "country": "de"}, "op": "u"}'
    expect:
      out:
        final: [{country: de, n: 1}]
  - name: from rows with kinds
    inputs:
      users:
        rows:
          - {id: 1, country: fr}
          - {id: 2, country: fr}
          - -D: {id: 1, country: fr}
    expect:
      out:
        changes:
          - +I: {country: fr, n: 1}
          - -U: {country: fr, n: 1}
          - +U: {country: fr, n: 2}
          - -U: {country: fr, n: 2}
          - +U: {country: fr, n: 1}
`
	path := write(t, t.TempDir(), "cdc.yaml", pipeline)
	results, out := runFile(t, path)
	if len(results) != 2 {
		t.Fatalf("want 2 results:\n%s", out)
	}
	for _, r := range results {
		if !r.Passed() {
			t.Errorf("%s failed:\n%s", r.Name, out)
		}
	}
}

// An unset ${VAR} in a connector's options takes a stand-in its option
// accepts (the Elasticsearch hosts of counts); one that SQL reads does
// not, since a stand-in would change what the tests test.
func TestUnsetVariableInSQLIsAnError(t *testing.T) {
	pipeline := strings.Replace(counts, "HAVING COUNT(*) < 3", "HAVING COUNT(*) < ${PIPETEST_UNSET_LIMIT}", 1) + `tests:
  - name: t
    expect:
      console: {changes: []}
`
	path := write(t, t.TempDir(), "counts.yaml", pipeline)
	_, err := pipetest.Load(path, env())
	if err == nil || !strings.Contains(err.Error(), "environment variable PIPETEST_UNSET_LIMIT is not set") {
		t.Fatalf("error %v; want PIPETEST_UNSET_LIMIT reported unset", err)
	}
	if strings.Contains(err.Error(), "PIPETEST_UNSET_HOSTS") {
		t.Errorf("the hosts' variable, which has a stand-in, is reported too: %v", err)
	}
}

// A file source with a changelog format other than Debezium's is a
// changelog source too: a Canal message of two rows, then an update.
func TestCanalFileSource(t *testing.T) {
	const pipeline = `version: 1
name: cdc
sources:
  - name: users
    type: file
    path: users.json
    format: canal-json
    key: [id]
    schema: [id BIGINT, country STRING]
transforms:
  - name: per_country
    sql: SELECT country, COUNT(*) AS n FROM users GROUP BY country
sinks:
  - name: out
    from: per_country
    type: print
tests:
  - name: from canal messages
    inputs:
      users:
        lines:
          - '{"data": [{"id": 1, "country": "fr"}, {"id": 2, "country": "fr"}], "type": "INSERT"}'
          - '{"data": [{"id": 1, "country": "de"}], "old": [{"country": "fr"}], "type": "UPDATE"}'
    expect:
      out:
        final: [{country: fr, n: 1}, {country: de, n: 1}]
`
	path := write(t, t.TempDir(), "cdc.yaml", pipeline)
	results, out := runFile(t, path)
	if len(results) != 1 || !results[0].Passed() {
		t.Fatalf("want one passing test:\n%s", out)
	}
}

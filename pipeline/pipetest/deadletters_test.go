package pipetest_test

import (
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/pipetest"
)

// countsDeadLetter is counts with the source's bad records set aside.
var countsDeadLetter = strings.Replace(counts, "    schema: [id STRING, ts BIGINT, v DOUBLE]\n",
	"    schema: [id STRING, ts BIGINT, v DOUBLE]\n    on_error: dead-letter\n    dead_letter: rejected.jsonl\n", 1)

// dead_letters compares the records a source's on_error: dead-letter set
// aside, in any order: the record as read, and a part of the reason
// when one is given.
func TestDeadLetters(t *testing.T) {
	tests := []struct {
		name, tests string
		out         string // the report's start
	}{{
		name: "the records set aside",
		tests: `
  - name: t
    inputs:
      s:
        lines: ["a,1,1", "a,x,1", "b,2,y"]
    expect:
      es: {final: [{id: a, n: 1, total: 1.0}]}
    dead_letters:
      s:
        - {record: "b,2,y", error: 'cannot parse "y" as DOUBLE'}
        - "a,x,1"
`,
		out: "PASS t\n",
	}, {
		name: "a record not set aside, one not expected, a wrong reason",
		tests: `
  - name: t
    inputs:
      s:
        lines: ["a,1,1", "a,x,1", "b,2,y"]
    expect:
      es: {final: [{id: a, n: 1, total: 1.0}]}
    dead_letters:
      s:
        - {record: "b,2,y", error: "BIGINT"}
        - "a,1,1"
`,
		out: `FAIL t (FILE:23:5)
    source s: dead letters differ (in any order; want: expected, not set aside; got: set aside, not expected)
            record  error
      want  a,1,1
      got   a,x,1   column ts: cannot parse "x" as BIGINT
      want  b,2,y   (a part:) BIGINT
      got   b,2,y   column v: cannot parse "y" as DOUBLE
`,
	}, {
		name: "none expected",
		tests: `
  - name: t
    inputs:
      s: {lines: ["a,x,1"]}
    dead_letters:
      s: []
`,
		out: `FAIL t (FILE:23:5)
    source s: dead letters differ (in any order; want: expected, not set aside; got: set aside, not expected)
           record  error
      got  a,x,1   column ts: cannot parse "x" as BIGINT
`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, t.TempDir(), "counts.yaml", countsDeadLetter+"tests:"+tc.tests)
			_, out := runFile(t, path)
			if want := strings.ReplaceAll(tc.out, "FILE", path); !strings.HasPrefix(out, want) {
				t.Errorf("report:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}

// dead_letters names a source whose bad records are kept.
func TestDeadLettersErrors(t *testing.T) {
	tests := []struct{ name, pipeline, tests, want string }{
		{"not a source", countsDeadLetter, `
  - name: t
    dead_letters:
      z: []
`, `:25:7: tests[0].dead_letters.z: "z" is not a source of this pipeline; did you mean "s"?`},
		{"records not kept", counts, `
  - name: t
    dead_letters:
      s: []
`, `:23:7: tests[0].dead_letters.s: source s has on_error: fail, which keeps no bad record: dead_letters needs on_error: dead-letter`},
		{"an unknown key", countsDeadLetter, `
  - name: t
    dead_letters:
      s: [{record: a, eror: b}]
`, `:25:23: tests[0].dead_letters.s[0].eror: unknown key; did you mean "error"?`},
		{"no record", countsDeadLetter, `
  - name: t
    dead_letters:
      s: [{error: b}]
`, `:25:11: tests[0].dead_letters.s[0].record: missing required key`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, t.TempDir(), "counts.yaml", tc.pipeline+"tests:"+tc.tests)
			_, err := pipetest.Load(path, env())
			if err == nil || !strings.Contains(err.Error(), path+tc.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s%s", err, path, tc.want)
			}
		})
	}
}

// Dead letters into a sink of the pipeline: the test reads them from that
// (in-memory) sink; a row a transform's expression failed on is compared
// as its JSON object.
func TestDeadLettersIntoASink(t *testing.T) {
	const pipeline = `version: 1
name: orders
sources:
  - name: s
    type: file
    path: in.csv
    schema: [id INT, amount STRING]
    on_error: {policy: dead-letter, sink: errors}
transforms:
  - name: q
    sql: SELECT id, CAST(amount AS INT) AS amount FROM s
sinks:
  - name: out
    from: q
    type: print
  - name: errors
    type: mysql
    dsn: ${PIPETEST_UNSET_DSN}
    table: etl_errors
tests:
  - name: t
    inputs:
      s: {lines: ["1,10", "2,x", "oops"]}
    expect:
      out: {changes: [+I: {id: 1, amount: 10}]}
    dead_letters:
      s:
        - {record: "oops", error: "expected 2 fields"}
        - {record: '{"id":2,"amount":"x"}', error: 'cannot parse "x" as INT'}
`
	path := write(t, t.TempDir(), "orders.yaml", pipeline)
	results, out := runFile(t, path)
	if len(results) != 1 || !results[0].Passed() {
		t.Errorf("report:\n%s", out)
	}
}

package spec

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

const withTests = good + `tests:
  - name: one
    inputs:
      sensor:
        lines: |
          s1,1,20.5
          s2,2,21.0
    expect:
      out:
        changes:
          - +I: {id: s1, n: 1}
          - -U: {id: s1, n: 1}
          - {id: s1, n: null}
        ordered: false
  - name: two
    inputs:
      sensor: {file: data/in.csv}
    expect:
      out:
        final: [{id: s1, n: 2}]
`

func TestParseTestsSection(t *testing.T) {
	p, err := Parse("dir/p.yaml", []byte(withTests), env(map[string]string{"DATA": "/data"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tests) != 2 {
		t.Fatalf("tests = %+v", p.Tests)
	}
	one := p.Tests[0]
	in := one.Inputs[0]
	if one.Name != "one" || in.Source != "sensor" || !in.HasLines || len(in.Lines) != 2 {
		t.Fatalf("test one = %+v, input %+v", one, in)
	}
	// Each line of the block keeps its own position.
	if l := in.Lines[1]; l.Text != "s2,2,21.0" || l.Pos.Line != 33 || l.Pos.Col != 11 {
		t.Errorf("second line = %+v, want s2,2,21.0 at 33:11", l)
	}
	e := one.Expect[0]
	if e.Sink != "out" || e.Ordered || !e.HasChanges || e.HasFinal || len(e.Changes) != 3 {
		t.Fatalf("expect = %+v", e)
	}
	kinds := []row.Kind{e.Changes[0].Kind, e.Changes[1].Kind, e.Changes[2].Kind}
	if kinds[0] != row.Insert || kinds[1] != row.UpdateBefore || kinds[2] != row.Insert {
		t.Errorf("kinds = %v", kinds)
	}
	if v := e.Changes[2].Values[1]; v.Column != "n" || !v.Null {
		t.Errorf("null value = %+v", v)
	}
	two := p.Tests[1]
	if f := two.Inputs[0].File; f != filepath.Join("dir", "data", "in.csv") {
		t.Errorf("file = %q, want it relative to the test's file", f)
	}
	if !two.Expect[0].HasFinal || len(two.Expect[0].Final) != 1 {
		t.Errorf("final = %+v", two.Expect[0])
	}
}

func TestParseTestsErrors(t *testing.T) {
	tests := []struct{ name, tests, want string }{
		{"unknown key in a test", `
  - name: t
    expct: {}
`, "p.yaml:29:5: tests[0].expct: unknown key; did you mean \"expect\"?"},
		{"duplicate name", `
  - name: t
    expect: {out: {changes: []}}
  - name: t
    expect: {out: {changes: []}}
`, "p.yaml:30:11: tests[1].name: duplicate test name \"t\": already used at p.yaml:28:5"},
		{"a row that is not a mapping", `
  - name: t
    expect: {out: {changes: [3]}}
`, "p.yaml:29:30: tests[0].expect.out.changes[0]: want a row"},
		{"a kind in a final table", `
  - name: t
    expect: {out: {final: [{-D: {id: a}}]}}
`, "p.yaml:29:28: tests[0].expect.out.final[0]: a final table holds rows, not changes"},
		{"a nested value", `
  - name: t
    expect: {out: {changes: [{id: [1]}]}}
`, "p.yaml:29:35: tests[0].expect.out.changes[0].id: want a value"},
		{"ordered not a boolean", `
  - name: t
    expect: {out: {changes: [], ordered: maybe}}
`, "p.yaml:29:42: tests[0].expect.out.ordered: want true or false"},
		{"nothing expected of a sink", `
  - name: t
    expect: {out: {}}
`, "p.yaml:29:14: tests[0].expect.out: expect changes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(good+"tests:"+tc.tests), env(map[string]string{"DATA": "/data"}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tc.want)
			}
		})
	}
}

func TestParseTestsFile(t *testing.T) {
	tests, err := ParseTests("p_test.yaml", []byte("tests:\n  - name: t\n    expect: {out: {changes: []}}\n"), env(nil))
	if err != nil || len(tests) != 1 || tests[0].Expect[0].Sink != "out" {
		t.Fatalf("tests %+v, err %v", tests, err)
	}
	if _, err := ParseTests("p_test.yaml", []byte("version: 1\ntests: []\n"), env(nil)); err == nil || !strings.Contains(err.Error(), "p_test.yaml:1:1: version: unknown key") {
		t.Errorf("a tests file with a pipeline key: %v", err)
	}
}

func TestTestFileNames(t *testing.T) {
	if got := TestFile("dir/stats.yaml"); got != "dir/stats_test.yaml" {
		t.Errorf("TestFile = %q", got)
	}
	for name, want := range map[string]bool{
		"stats_test.yaml": true, "stats_test.yml": true, "stats.yaml": false,
		"test.yaml": false, "stats_test.csv": false, "latest.yaml": false,
	} {
		if got := IsTestFile(name); got != want {
			t.Errorf("IsTestFile(%q) = %v, want %v", name, got, want)
		}
	}
}

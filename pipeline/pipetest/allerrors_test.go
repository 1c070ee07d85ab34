package pipetest_test

import (
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/pipetest"
)

// Every error of a pipeline and of its tests is reported at once: a
// tests file's shape errors hide no test naming what does not exist,
// and the pipeline's errors hide none of its tests'.
func TestLoadReportsEveryError(t *testing.T) {
	const tests = `tests:
  - name: a
    inputs:
      z: {rows: []}
    expect:
      console: {changes: [], orderd: true}
  - name: b
    inputs:
      s: {rows: [{idd: a}]}
    expect:
      consle: {changes: []}
`
	wantTests := []string{
		`counts_test.yaml:4:7: tests[0].inputs.z: "z" is not a source`,
		`counts_test.yaml:6:30: tests[0].expect.console.orderd: unknown key`,
		`counts_test.yaml:9:19: tests[1].inputs.s.rows[0].idd: s has no column "idd"`,
		`counts_test.yaml:11:7: tests[1].expect.consle: "consle" is not a sink`,
	}
	for _, tc := range []struct {
		name, pipeline string
		want           []string
	}{
		{"tests file", counts, wantTests},
		{"pipeline and tests file", strings.Replace(counts, "SUM(v)", "SUM(vv)", 1),
			[]string{`counts.yaml:10:40: transforms[0].sql: column "vv" not found`, `counts_test.yaml:6:30: tests[0].expect.console.orderd: unknown key`}},
		{"tests section", counts + tests,
			[]string{`counts.yaml:23:7: tests[0].inputs.z: "z" is not a source`, `counts.yaml:25:30: tests[0].expect.console.orderd: unknown key`, `counts.yaml:30:7: tests[1].expect.consle: "consle" is not a sink`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := write(t, dir, "counts.yaml", tc.pipeline)
			if tc.name != "tests section" {
				write(t, dir, "counts_test.yaml", tests)
			}
			_, err := pipetest.Load(path, env())
			if err == nil {
				t.Fatal("loaded; want errors")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), dir+"/"+w) {
					t.Errorf("error:\n%v\nwant it to contain:\n%s/%s", err, dir, w)
				}
			}
		})
	}
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// stateTestPipeline is a GROUP BY and a join of two bounded files; %[1]s
// is the directory of the files, %[2]s a category the GROUP BY counts
// apart (a ${VAR} in the test of secrets).
const stateTestPipeline = `version: 1
name: shop
sources:
  - name: orders
    type: file
    path: %[1]s/orders.csv
    schema: [id BIGINT, cat STRING, price BIGINT]
  - name: cats
    type: file
    path: %[1]s/cats.csv
    schema: [cat STRING, label STRING]
transforms:
  - name: bycat
    sql: SELECT cat, COUNT(*) AS n, SUM(price) AS total, SUM(CASE WHEN cat = '%[2]s' THEN 1 ELSE 0 END) AS odd FROM orders WHERE cat <> 'zz' GROUP BY cat
  - name: named
    sql: SELECT o.id, c.label FROM orders o JOIN cats c ON o.cat = c.cat
sinks:
  - name: out
    from: bycat
    type: blackhole
  - name: out2
    from: named
    type: blackhole
`

// stateFixture runs the pipeline to its end with a state directory and
// returns the state directory and the pipeline file.
func stateFixture(t *testing.T, excluded string) (stateDir, file string) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "orders.csv"), "1,a,10\n2,b,5\n3,a,7\n4,c,1\n5,zz,3\n")
	writeFile(t, filepath.Join(dir, "cats.csv"), "a,Apples\nb,\"Bread, white\"\n")
	file = filepath.Join(dir, "shop.yaml")
	writeFile(t, file, fmt.Sprintf(stateTestPipeline, dir, excluded))
	stateDir = filepath.Join(dir, "state")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run", "--quiet", "--state-dir", stateDir, file}, &stdout, &stderr); code != 0 {
		t.Fatalf("etld run: exit %d: %s", code, stderr.String())
	}
	return stateDir, file
}

// etldCLI runs the command line and returns its exit code and output.
func etldCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// listing is every file under dir with its size and time, to tell that
// nothing was written.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %d", path, info.Size(), info.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStateCommands: ls, show and dump of a finished run's state name
// its checkpoint and operators with their key counts, print an
// operator's plan and columns with the pipeline file, and list the
// aggregate's groups and the join's rows as JSON lines or CSV; nothing
// is written to the state directory.
func TestStateCommands(t *testing.T) {
	stateDir, file := stateFixture(t, "zz")
	before := listing(t, stateDir)
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := etldCLI(append([]string{"state"}, args...)...)
		if code != 0 {
			t.Fatalf("etld state %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	lines := func(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

	out := mustRun("ls", stateDir)
	if !strings.Contains(out, "PIPELINE") || !regexpLine(out, `^shop\s+1\s+\S+\s+\S+ \S+\s+yes\s+1\s*$`) {
		t.Errorf("ls STATE_DIR:\n%s", out)
	}
	out = mustRun("ls", stateDir, "shop")
	if !regexpLine(out, `^bycat/group_aggregate#1\s+GroupAggregate\s+bycat\s+3\s`) || !regexpLine(out, `^named/join#1\s+Join\s+named\s+7\s`) {
		t.Errorf("ls STATE_DIR shop: want the aggregate with 3 keys and the join with 7 rows:\n%s", out)
	}
	out = mustRun("show", stateDir, "shop", "bycat", "--pipeline", file)
	for _, want := range []string{"kind:       GroupAggregate", "keys:       3", "plan:       GroupAggregate(groupBy=[cat], select=[COUNT(*), SUM(price), SUM(CASE WHEN cat = 'zz' THEN 1 ELSE 0 END)])",
		"output:     cat STRING, COUNT(*) BIGINT NOT NULL, SUM(price) BIGINT, SUM(CASE", "fits file:  yes"} {
		if !strings.Contains(out, want) {
			t.Errorf("show bycat: no %q in\n%s", want, out)
		}
	}
	out = mustRun("show", stateDir, "shop")
	for _, want := range []string{"source/orders", "source/cats", "bycat/group_aggregate#1", "named/join#1", "sink/out"} {
		if !strings.Contains(out, want) {
			t.Errorf("show shop: no %q in\n%s", want, out)
		}
	}

	got := lines(mustRun("dump", stateDir, "shop", "bycat", "--pipeline", file))
	slices.Sort(got)
	odd := `"SUM(CASE WHEN cat = 'zz' THEN 1 ELSE 0 END)":0`
	want := []string{`{"cat":"a","COUNT(*)":2,"SUM(price)":17,` + odd + `}`, `{"cat":"b","COUNT(*)":1,"SUM(price)":5,` + odd + `}`, `{"cat":"c","COUNT(*)":1,"SUM(price)":1,` + odd + `}`}
	if !slices.Equal(got, want) {
		t.Errorf("dump bycat:\n%q\nwant\n%q", got, want)
	}
	got = lines(mustRun("dump", stateDir, "shop", "bycat/group_aggregate#1", "--pipeline", file, "--format", "csv"))
	if got[0] != "cat,COUNT(*),SUM(price),SUM(CASE WHEN cat = 'zz' THEN 1 ELSE 0 END)" || !slices.Equal(slices.Sorted(slices.Values(got[1:])), []string{"a,2,17,0", "b,1,5,0", "c,1,1,0"}) {
		t.Errorf("dump bycat as CSV: %q", got)
	}
	got = lines(mustRun("dump", stateDir, "shop", "named", "--pipeline", file))
	if len(got) != 7 || !slices.Contains(got, `{"$table":"right","cat":"b","label":"Bread, white","$count":1,"$matches":0}`) ||
		!slices.Contains(got, `{"$table":"left","id":5,"cat":"zz","price":3,"$count":1,"$matches":0}`) {
		t.Errorf("dump named: want 5 left and 2 right rows tagged with their table:\n%s", strings.Join(got, "\n"))
	}
	got = lines(mustRun("dump", stateDir, "shop", "named", "--pipeline", file, "--format", "csv", "--table", "right"))
	// A keyed join lists its rows key group by key group.
	if len(got) == 0 || got[0] != "cat,label,$count,$matches" || !slices.Equal(slices.Sorted(slices.Values(got[1:])), []string{"a,Apples,1,0", `b,"Bread, white",1,0`}) {
		t.Errorf("dump named --table right as CSV: %q", got)
	}
	if after := listing(t, stateDir); !slices.Equal(after, before) {
		t.Errorf("the state directory changed:\n%q\nbefore\n%q", after, before)
	}
}

// TestStateCommandErrors: what a command cannot do is said with the way
// out: an operator that is not there (the ones that are), a dump without
// the pipeline file, a file whose operator changed, a table the state
// has not.
func TestStateCommandErrors(t *testing.T) {
	stateDir, file := stateFixture(t, "zz")
	changed := filepath.Join(filepath.Dir(file), "changed.yaml")
	writeFile(t, changed, strings.Replace(readFile(t, file), "SUM(price)", "MAX(price)", 1))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ls", stateDir, "shop", "nope"}, 2, "holds no operator \"nope\"; it holds bycat/group_aggregate#1, named/join#1, named/join#1/inputs"},
		{[]string{"dump", stateDir, "shop", "bycat"}, 2, "--pipeline FILE"},
		{[]string{"dump", stateDir, "shop", "bycat", "--pipeline", changed}, 1, "operator transform/bycat/group_aggregate#1 of pipeline shop does not fit checkpoint 1: the operator itself changed"},
		{[]string{"dump", stateDir, "shop", "named", "--pipeline", file, "--table", "middle"}, 2, `has no table "middle"; it has "left", "right"`},
		{[]string{"ls", stateDir, "other"}, 1, `no state of pipeline "other"`},
		{[]string{"dump", stateDir, "shop", "bycat", "--pipeline", file, "--format", "xml"}, 2, "want json or csv"},
		{[]string{"show", stateDir}, 2, "want STATE_DIR PIPELINE [OPERATOR]"},
	} {
		code, _, errOut := etldCLI(append([]string{"state"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("etld state %s: exit %d, %q; want exit %d and %q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.want)
		}
	}
}

// TestStateShowHidesSecrets: a ${VAR} in the SQL is in the aggregate's
// plan and its column names; show, ls and dump print them hidden.
func TestStateShowHidesSecrets(t *testing.T) {
	t.Setenv("ETLD_TEST_STATE_SECRET", "xq7secretcat")
	stateDir, file := stateFixture(t, "${ETLD_TEST_STATE_SECRET}")
	for _, args := range [][]string{{"show", stateDir, "shop", "bycat", "--pipeline", file}, {"ls", stateDir, "shop", "--pipeline", file, "--format", "json"},
		{"show", stateDir, "shop", "--format", "json"}, {"dump", stateDir, "shop", "bycat", "--pipeline", file, "--format", "csv"}} {
		code, out, errOut := etldCLI(append([]string{"state"}, args...)...)
		if code != 0 || strings.Contains(out+errOut, "xq7secretcat") || !strings.Contains(out, "bycat") && args[0] != "dump" {
			t.Errorf("etld state %s: exit %d, the secret shown:\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	code, out, _ := etldCLI("state", "show", stateDir, "shop", "bycat", "--pipeline", file)
	if code != 0 || !strings.Contains(out, "SUM(CASE WHEN cat = '${ETLD_TEST_STATE_SECRET}'") {
		t.Errorf("the plan with the secret hidden, the rest shown:\n%s", out)
	}
}

// regexpLine reports whether a line of s matches the expression.
func regexpLine(s, expr string) bool {
	return regexp.MustCompile("(?m)" + expr).MatchString(s)
}

package conformance

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

var (
	record  = flag.Bool("record", false, "run Flink over the cases and store its results in the case files (make conformance-flink)")
	harvest = flag.String("harvest", "", "with -record: take the results of a runner still running (or killed) in this directory instead of starting one; only finished scripts are stored")
)

// flinkScriptTimeout bounds one case's script in the Flink runner.
const flinkScriptTimeout = 2 * time.Minute

// TestRecordFlink re-records Flink's results: every case becomes a Flink
// SQL script over its data files, the runner runs them all in one JVM,
// and each case file gets its flink.out (the printed changes, or the
// sink's files) or flink.err (the condensed exception chain) section.
// It runs only with -record: it is the recorder, not a check.
func TestRecordFlink(t *testing.T) {
	if !*record {
		t.Skip("the recorder: go test ./conformance -run TestRecordFlink -record (make conformance-flink)")
	}
	cases := loadCases(t)
	if *reverse {
		slices.Reverse(cases)
	}
	if *harvest != "" {
		harvestFlink(t, cases, *harvest)
		return
	}
	root := t.TempDir()
	var scripts []string
	dirs := map[string]string{}
	for _, c := range cases {
		dir := filepath.Join(root, c.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteData(dir); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(dir, c.Name+".sql")
		if err := os.WriteFile(script, []byte(c.FlinkScript(dir)), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, script)
		dirs[script] = dir
	}
	start := time.Now()
	results := testenv.RunFlink(t, flinkScriptTimeout, scripts...)
	t.Logf("flink ran %d scripts in %s", len(scripts), time.Since(start).Round(time.Second))
	storeFlink(t, cases, results, func(r testenv.FlinkResult) string { return dirs[r.Script] })
}

// harvestFlink stores the results runners left in roots (comma-separated
// directories, each holding NAME/NAME.sql and its .out/.err): a runner
// goes through its scripts one after the other, so every script with
// output is finished but the newest, which is finished when it failed or
// when the runner has ended (-harvest-all). A case changed since its
// script was written is left out.
func harvestFlink(t *testing.T, cases []*Case, roots string) {
	var done []*Case
	var results []testenv.FlinkResult
	for _, root := range strings.Split(roots, ",") {
		newest, newestTime := "", time.Time{}
		outs, _ := filepath.Glob(filepath.Join(root, "*", "*.sql.out"))
		for _, o := range outs {
			if st, err := os.Stat(o); err == nil && st.ModTime().After(newestTime) {
				newest, newestTime = o, st.ModTime()
			}
		}
		for _, c := range cases {
			script := filepath.Join(root, c.Name, c.Name+".sql")
			out, err := os.ReadFile(script + ".out")
			if err != nil {
				continue
			}
			errText, _ := os.ReadFile(script + ".err")
			if script+".out" == newest && len(errText) == 0 && !*harvestAll {
				continue
			}
			// A case changed since the run began is not that run's case.
			if ran, err := os.ReadFile(script); err != nil || string(ran) != c.FlinkScript(filepath.Dir(script)) || !sameData(c, filepath.Dir(script)) {
				continue
			}
			done = append(done, c)
			results = append(results, testenv.FlinkResult{Script: script, Out: string(out), Err: string(errText)})
		}
	}
	storeFlink(t, done, results, func(r testenv.FlinkResult) string { return filepath.Dir(r.Script) })
}

var reverse = flag.Bool("reverse", false, "with -record: run the cases last to first (a second runner beside one going first to last)")

var harvestAll = flag.Bool("harvest-all", false, "with -harvest: the runner has ended, so every script with output is finished")

// storeFlink writes each case's Flink result into its file.
func storeFlink(t *testing.T, cases []*Case, results []testenv.FlinkResult, dirOf func(testenv.FlinkResult) string) {
	failed := 0
	for i, c := range cases {
		res := results[i]
		dir := dirOf(res)
		if strings.TrimSpace(res.Err) != "" {
			failed++
			c.SetSection(FlinkOutSection, "", true)
			c.SetSection(FlinkErrSection, CondenseError(res.Err, dir), false)
		} else {
			var out string
			if c.Sink != nil {
				var err error
				if out, err = ReadSinkDir(dir); err != nil {
					t.Errorf("%s: the sink's files: %v", c.Name, err)
					continue
				}
			} else {
				out = strings.Join(ChangeLines(res.Out), "\n")
				if out != "" {
					out += "\n"
				}
			}
			c.SetSection(FlinkErrSection, "", true)
			c.SetSection(FlinkOutSection, out, false)
		}
		if err := os.WriteFile(c.Path, c.Format(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("recorded %d cases, %d of them Flink failed", len(cases), failed)
}

// sameData says whether dir holds c's data files as they are now.
func sameData(c *Case, dir string) bool {
	for _, tb := range c.Tables {
		data, err := os.ReadFile(filepath.Join(dir, tb.Name+dataSectionExt))
		if err != nil || string(data) != c.Data(tb.Name) {
			return false
		}
	}
	return true
}

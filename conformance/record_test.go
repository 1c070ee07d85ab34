package conformance

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

var record = flag.Bool("record", false, "run Flink over the cases and store its results in the case files (make conformance-flink)")

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
	failed := 0
	for i, c := range cases {
		res := results[i]
		dir := dirs[res.Script]
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

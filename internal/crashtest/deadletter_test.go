package crashtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// (d) file -> CAST -> file, with the source's on_error: dead-letter into
// a file: lines the format refuses and rows the CAST fails on are dead
// letters. After any number of kills every dead letter is in the file
// once, as in the uninterrupted run (the file cut back to its length at
// the restored checkpoint), and the output is byte-identical.
var fileDeadLetters = scenario{
	name: "file-dead-letters",
	pipeline: `version: 1
name: crash-dead-letters
sources:
  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    format: csv
    schema:
      - id BIGINT
      - sensor STRING
      - temp STRING
    on_error: {policy: dead-letter, file: {{.Dir}}/{{.Out}}.dlq.jsonl}
transforms:
  - name: hot
    sql: |
      SELECT id, sensor, CAST(temp AS DOUBLE) AS temp FROM readings
sinks:
  - name: out
    from: hot
    type: file
    path: {{.Dir}}/{{.Out}}.csv
    format: csv
`,
	setup: func(t *testing.T, e *env) {
		f, err := os.Create(filepath.Join(e.Dir, "in.csv"))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for i := range intEnv("ETLD_CRASH_ROWS", 300_000) / 3 {
			switch e.rnd.IntN(100) {
			case 0:
				fmt.Fprintf(w, "%d;sensor_%d\n", i, e.rnd.IntN(500)) // one field: the format refuses it
			case 1:
				fmt.Fprintf(w, "%d,sensor_%d,n/a\n", i, e.rnd.IntN(500)) // the CAST fails
			default:
				fmt.Fprintf(w, "%d,sensor_%d,%.1f\n", i, e.rnd.IntN(500), e.rnd.Float64()*40-5)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	},
	check: func(t *testing.T, e *env) {
		sameFile(t, filepath.Join(e.Dir, "ref.csv"), filepath.Join(e.Dir, "out.csv"))
		want, got := deadLetters(t, filepath.Join(e.Dir, "ref.dlq.jsonl")), deadLetters(t, filepath.Join(e.Dir, "out.dlq.jsonl"))
		if len(want) < 100 {
			t.Fatalf("the reference run has %d dead letters: the scenario tests little", len(want))
		}
		if !slices.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%d dead letters, the reference has %d; first difference at %d:\ngot  %.200s\nwant %.200s", len(got), len(want), i, at(got, i), at(want, i))
			return
		}
		t.Logf("%d dead letters, each once, as in the reference", len(got))
	},
}

func TestCrashDeadLetters(t *testing.T) { runScenario(t, fileDeadLetters) }

var checkpointMember = regexp.MustCompile(`"checkpoint":\d+,`)

// deadLetters reads a dead-letter file's entries, without the checkpoint
// each belongs to (a restored run's differ), in order: the source's and
// the transform's entries interleave differently from run to run.
func deadLetters(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range lines {
		lines[i] = checkpointMember.ReplaceAllString(l, "")
	}
	slices.Sort(lines)
	return lines
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}

package pipeline_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The example: a,1 s / a,8 s / a,4 s / a,12 s with a 1 s delay
// into a 5 s TUMBLE. The row at 4 s comes after the watermark reached
// 7 s: window [0 s, 5 s) counts 1, and the row is counted as late by the
// window aggregate, in the summary and its text.
func TestLateRowIsDroppedAndCountedAsLate(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv")
	if err := os.WriteFile(in, []byte("a,1000\na,8000\na,4000\na,12000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := runFile(t, dir, fmt.Sprintf(`version: 1
name: late
sources:
  - name: ev
    type: file
    path: %s
    schema: [k STRING, ms BIGINT, "ts AS TO_TIMESTAMP_LTZ(ms, 3)"]
    watermark: ts - INTERVAL '1' SECOND
transforms:
  - name: w
    sql: SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end
sinks:
  - name: out
    from: w
    type: file
    path: %s
    format: csv
`, in, out))
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a,1970-01-01 00:00:00,1\na,1970-01-01 00:00:05,1\na,1970-01-01 00:00:10,1\n"; string(got) != want {
		t.Errorf("windows\n%swant\n%s", got, want)
	}
	if len(sum.Dropped) != 1 || sum.Dropped[0].Skipped != 1 || sum.Dropped[0].Reason != "late" {
		t.Fatalf("dropped %+v, want 1 late row of the window aggregate", sum.Dropped)
	}
	if text := sum.String(); !strings.Contains(text, "dropped 1 late rows in "+sum.Dropped[0].Name) {
		t.Errorf("summary does not name the late row:\n%s", text)
	}
}

// With late_rows: dead-letter the late row is also written to the file
// it names, with its source position, its row and the operator that
// refused it; the windows are the same.
func TestLateRowsToDeadLetters(t *testing.T) {
	dir := t.TempDir()
	in, out, late := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv"), filepath.Join(dir, "late.jsonl")
	if err := os.WriteFile(in, []byte("a,1000\na,8000\na,4000\na,12000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := runFile(t, dir, fmt.Sprintf(`version: 1
name: late
late_rows: {policy: dead-letter, file: %s}
sources:
  - name: ev
    type: file
    path: %s
    schema: [k STRING, ms BIGINT, "ts AS TO_TIMESTAMP_LTZ(ms, 3)"]
    watermark: ts - INTERVAL '1' SECOND
transforms:
  - name: w
    sql: SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end
sinks:
  - name: out
    from: w
    type: file
    path: %s
    format: csv
`, late, in, out))
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a,1970-01-01 00:00:00,1\na,1970-01-01 00:00:05,1\na,1970-01-01 00:00:10,1\n"; string(got) != want {
		t.Errorf("windows\n%swant\n%s", got, want)
	}
	data, err := os.ReadFile(late)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 {
		t.Fatalf("late rows file:\n%s\nwant one entry", data)
	}
	var e struct {
		Transform, Position, Error string
		Row                        map[string]any
	}
	if err := json.Unmarshal([]byte(lines[0]), &e); err != nil {
		t.Fatal(err)
	}
	if e.Transform != "w" || e.Position != in+":3" || !strings.Contains(e.Error, "late row: "+sum.Dropped[0].Name) ||
		!strings.Contains(e.Error, "watermark 1970-01-01 00:00:07") || e.Row["ts"] != "1970-01-01 00:00:04.000" {
		t.Errorf("late row entry %s: want transform w, position %s:3, the operator %s and the watermark, the row at 4 s", lines[0], in, sum.Dropped[0].Name)
	}
}

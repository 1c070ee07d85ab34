package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline"
)

// deadLetters reads a dead-letter file's entries: each member a string
// as it is, any other value (a number, the row's object) as its JSON.
func deadLetters(t *testing.T, path string) []map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("dead letter %q: %v", line, err)
		}
		e := map[string]string{}
		for k, v := range raw {
			var s string
			if json.Unmarshal(v, &s) == nil {
				e[k] = s
			} else {
				e[k] = string(v)
			}
		}
		out = append(out, e)
	}
	return out
}

// A row whose event time is NULL (here a computed one whose text does
// not parse) is a bad record of its source, under the source's
// on_error: with dead-letter the other rows' windows are all emitted and
// the entry names the column; with fail the run stops naming the column
// and the record's line, not an internal column index.
func TestNullEventTimeFollowsOnError(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	rows := "a,2024-01-01 00:00:01\nb,garbage\nc,2024-01-01 00:00:02\nd,2024-01-01 00:00:09\n"
	if err := os.WriteFile(in, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	dlq := filepath.Join(dir, "dlq.jsonl")
	out := filepath.Join(dir, "out.csv")
	yaml := func(onError string) string {
		return fmt.Sprintf(`version: 1
name: p
sources:
  - name: s
    type: file
    path: %s
    schema: [k STRING, t STRING, ts AS TO_TIMESTAMP(t)]
    watermark: ts - INTERVAL '1' SECOND
%s
transforms:
  - name: q
    sql: |
      SELECT window_start, COUNT(*) AS n
      FROM TABLE(TUMBLE(TABLE s, DESCRIPTOR(ts), INTERVAL '5' SECOND))
      GROUP BY window_start, window_end
sinks:
  - name: o
    from: q
    type: file
    path: %s
`, in, onError, out)
	}
	sum := runFile(t, dir, yaml("    on_error: dead-letter\n    dead_letter: "+dlq))
	if got := readLines(t, out); strings.Join(got, " ") != "2024-01-01 00:00:00,2 2024-01-01 00:00:05,1" {
		t.Errorf("windows %q, want both windows of the three good rows", got)
	}
	if sum.Sources[0].Skipped != 1 {
		t.Errorf("skipped %d, want 1", sum.Sources[0].Skipped)
	}
	entries := deadLetters(t, dlq)
	if len(entries) != 1 || !strings.HasSuffix(entries[0]["position"], "in.csv:2") || !strings.Contains(entries[0]["error"], `"ts" is NULL`) {
		t.Errorf("dead letters %v, want in.csv:2 naming column ts", entries)
	}

	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(yaml("")), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(context.Background(), pipeline.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "in.csv:2") || !strings.Contains(err.Error(), `"ts" is NULL`) || !strings.Contains(err.Error(), "on_error: fail") {
		t.Errorf("on_error fail: err = %v, want in.csv:2 and column ts named", err)
	}
}

// ERROR('reason') marks the row it is evaluated on bad, under the
// on_error of the source the row came from: in a transform (the entry
// names it) and in a computed column; the other rows all arrive.
func TestErrorFunctionMarksBadRecords(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("a,1\nb,-2\nc,3\nd,500\ne,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dlq := filepath.Join(dir, "dlq.jsonl")
	out := filepath.Join(dir, "out.csv")
	sum := runFile(t, dir, fmt.Sprintf(`version: 1
name: p
sources:
  - name: s
    type: file
    path: %s
    schema:
      - k STRING
      - x INT
      - y AS IF(x > 100, ERROR(CONCAT('too big ', CAST(x AS STRING))), x)
    on_error: dead-letter
    dead_letter: %s
transforms:
  - name: q
    sql: SELECT k, CASE WHEN y < 0 THEN ERROR('negative x') ELSE y END AS y FROM s
sinks:
  - name: o
    from: q
    type: file
    path: %s
`, in, dlq, out))
	if got := readLines(t, out); strings.Join(got, " ") != "a,1 c,3 e,5" {
		t.Errorf("wrote %q, want the rows ERROR was not evaluated on", got)
	}
	if sum.Sources[0].Skipped != 2 {
		t.Errorf("skipped %d, want 2", sum.Sources[0].Skipped)
	}
	entries := deadLetters(t, dlq)
	if len(entries) != 2 {
		t.Fatalf("dead letters %v, want 2", entries)
	}
	byRow := map[string]map[string]string{}
	for _, e := range entries {
		byRow[e["row"]] = e
	}
	if e := byRow[`{"k":"d","x":500}`]; e["error"] != "ERROR: too big 500" || !strings.HasSuffix(e["position"], "in.csv:4") {
		t.Errorf("computed column's entry %v (all: %v)", e, entries)
	}
	if e := byRow[`{"k":"b","x":-2,"y":-2}`]; e["error"] != "ERROR: negative x" || e["transform"] != "q" || !strings.HasSuffix(e["position"], "in.csv:2") {
		t.Errorf("transform's entry %v (all: %v)", e, entries)
	}
}

// A source whose json decoder reads a ROW's fields into columns of their
// own leaves room in its rows for the computed columns, which are
// evaluated there (connector.NestedSource's gap): the dead letter of a
// row a computed column failed on holds the decoded row as before, the
// physical columns and the paths, not that room.
func TestDeadLetterOfRowWithPaths(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	rows := `{"id":1,"r":{"a":10,"t":"2024-01-01 00:00:01"}}` + "\n" + `{"id":2,"r":{"a":20,"t":"garbage"}}` + "\n" +
		`{"id":3,"r":{"a":30,"t":"2024-01-01 00:00:02"}}` + "\n"
	if err := os.WriteFile(in, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	dlq := filepath.Join(dir, "dlq.jsonl")
	out := filepath.Join(dir, "out.csv")
	runFile(t, dir, fmt.Sprintf(`version: 1
name: p
sources:
  - name: s
    type: file
    path: %s
    format: json
    schema: [id BIGINT, "r ROW<a BIGINT, t STRING>", a2 AS r.a * 2, ts AS TO_TIMESTAMP(r.t)]
    watermark: ts - INTERVAL '1' SECOND
    on_error: dead-letter
    dead_letter: %s
transforms:
  - name: q
    sql: SELECT id, a2, ts FROM s
sinks:
  - {name: o, from: q, type: file, path: %s}
`, in, dlq, out))
	if got := strings.Join(readLines(t, out), " "); got != "1,20,2024-01-01 00:00:01 3,60,2024-01-01 00:00:02" {
		t.Errorf("rows %q", got)
	}
	entries := deadLetters(t, dlq)
	if len(entries) != 1 || entries[0]["row"] != `{"id":2,"r":null,"r.t":"garbage","r.a":20}` {
		t.Errorf("dead letters %v, want the row of id 2 as decoded", entries)
	}
}

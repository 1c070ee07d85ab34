package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/pipetest"
)

// clicks: user, event time (ms), page. With a 5-minute gap, user a's
// first two clicks are 6 minutes apart; the click at 00:06 moves the
// watermark (event time - 1 s) past a's first session [00:00, 00:05),
// which fires, so the click at 00:03 that comes after it joins the 00:06
// one only, as Flink's per-record watermark has it, whatever the batch
// it was read in; b's click at 00:20 opens a new session.
var clicks = []string{
	"a,0,home",        // 00:00
	"a,360000,cart",   // 00:06
	"b,60000,home",    // 00:01
	"a,180000,search", // 00:03 joins a's sessions into [00:00, 00:11)
	"b,1200000,home",  // 00:20
	"a,1500000,home",  // 00:25
}

const clicksPipeline = `version: 1
name: sessions
sources:
  - name: clicks
    type: file
    path: %s
    schema:
      - user_id STRING
      - ts BIGINT
      - page STRING
      - event_time AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: event_time - INTERVAL '1' SECOND
transforms:
  - name: sessions
    sql: |
      SELECT user_id, window_start, window_end, COUNT(*) AS n, LISTAGG(page) AS pages
      FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(event_time), INTERVAL '5' MINUTE))
      GROUP BY user_id, window_start, window_end, window_time
sinks:
  - name: out
    from: sessions
    type: file
    path: %s
    format: csv
%s`

// TestSessionWindowEndToEnd runs SESSION windows from a file into a CSV
// file: sessions that merge across a gap-closing row, in the order they
// closed.
func TestSessionWindowEndToEnd(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "clicks.csv"), filepath.Join(dir, "out.csv")
	if err := os.WriteFile(in, []byte(strings.Join(clicks, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runFile(t, dir, fmt.Sprintf(clicksPipeline, in, out, ""))
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"a,1970-01-01 00:00:00,1970-01-01 00:05:00,1,home",
		"b,1970-01-01 00:01:00,1970-01-01 00:06:00,1,home",
		"a,1970-01-01 00:03:00,1970-01-01 00:11:00,2,\"cart,search\"",
		"b,1970-01-01 00:20:00,1970-01-01 00:25:00,1,home",
		"a,1970-01-01 00:25:00,1970-01-01 00:30:00,1,home",
	}, "\n") + "\n"
	if string(got) != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// TestSessionWindowIntoMySQL writes the sessions to MySQL, keyed by
// user_id, window_start and window_end, and checks the final table.
func TestSessionWindowIntoMySQL(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	t.Setenv("SESSION_TEST_DSN", dsn)
	table := testenv.MySQLTable(t, db, "")
	dir := t.TempDir()
	in := filepath.Join(dir, "clicks.csv")
	if err := os.WriteFile(in, []byte(strings.Join(clicks, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runFile(t, dir, fmt.Sprintf(clicksPipeline, in, filepath.Join(dir, "out.csv"), `  - name: db
    from: sessions
    type: mysql
    dsn: ${SESSION_TEST_DSN}
    table: `+table+`
    create_table: true
`))
	rows, err := db.Query("SELECT user_id, window_start, n, pages FROM " + table + " ORDER BY user_id, window_start")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var u, start, n, pages string
		if err := rows.Scan(&u, &start, &n, &pages); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{u, start, n, pages}, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := "a|1970-01-01 00:00:00.000|1|home a|1970-01-01 00:03:00.000|2|cart,search a|1970-01-01 00:25:00.000|1|home b|1970-01-01 00:01:00.000|1|home b|1970-01-01 00:20:00.000|1|home"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("table %s holds\n%s\nwant\n%s", table, g, want)
	}
}

// sessionLateTests feed the clicks record by record (etld test), so the
// watermark (event time - 1 s) moves per row: a's click at 00:06 moves it
// past a's first session [00:00, 00:05), which fires, so the click at
// 00:03 no longer bridges it and merges with the 00:06 one only; b's
// click at 00:20 fires that one, so a's click at 00:01 is late (dropped),
// while a's click at 00:16, whose own window [00:16, 00:21) has not
// ended, opens a session.
const sessionLateTests = `
tests:
  - name: late rows
    inputs:
      clicks:
        lines: |
          a,0,home
          a,360000,cart
          a,180000,search
          b,1200000,home
          a,60000,late
          a,960000,back
    expect:
      out:
        changes:
          - +I: {user_id: a, window_start: "1970-01-01 00:00:00", window_end: "1970-01-01 00:05:00", n: 1, pages: home}
          - +I: {user_id: a, window_start: "1970-01-01 00:03:00", window_end: "1970-01-01 00:11:00", n: 2, pages: "cart,search"}
          - +I: {user_id: a, window_start: "1970-01-01 00:16:00", window_end: "1970-01-01 00:21:00", n: 1, pages: back}
          - +I: {user_id: b, window_start: "1970-01-01 00:20:00", window_end: "1970-01-01 00:25:00", n: 1, pages: home}
`

// TestSessionWindowLateRows checks the late row through etld test's
// record-by-record run.
func TestSessionWindowLateRows(t *testing.T) {
	dir := t.TempDir()
	runPipeTests(t, dir, fmt.Sprintf(clicksPipeline, filepath.Join(dir, "clicks.csv"), filepath.Join(dir, "out.csv"), "")+sessionLateTests)
}

// runPipeTests runs the tests: of a pipeline file as etld test does.
func runPipeTests(t *testing.T, dir, yaml string) {
	t.Helper()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := pipetest.Load(path, pipetest.Env{Registry: builtin.Registry(), Lookup: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	results := s.Run(context.Background(), nil)
	if len(results) == 0 {
		t.Fatal("no tests ran")
	}
	for _, r := range results {
		if !r.Passed() {
			var out bytes.Buffer
			pipetest.Write(&out, r)
			t.Errorf("%s", out.String())
		}
	}
}

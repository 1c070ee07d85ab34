package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
)

const overPipeline = `version: 1
name: moving
sources:
  - name: orders
    type: file
    path: %s
    schema:
      - product STRING
      - amount BIGINT
      - ts BIGINT
      - event_time AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: event_time - INTERVAL '1' SECOND
transforms:
  - name: moving
    sql: |
      SELECT product, ts, amount, SUM(amount) OVER w AS last3, COUNT(*) OVER w AS n, prev
      FROM (SELECT *, LAG(amount) OVER (PARTITION BY product ORDER BY event_time) AS prev FROM orders)
      WINDOW w AS (PARTITION BY product ORDER BY event_time ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
  - name: peers
    sql: |
      SELECT product, ts, amount, SUM(amount) OVER (PARTITION BY product ORDER BY event_time RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW) AS s
      FROM orders
sinks:
  - name: out
    from: moving
    type: file
    path: %s
  - name: peers
    from: peers
    type: print
%s`

// overLateTests feed the orders record by record (etld test): the
// watermark (event time - 1 s) moves per row, so the row at 1.5 s, after
// one at 3 s, is late; rows of equal time are ordered by arrival in the
// ROWS frame and are peers in the RANGE frame, and for LAG over the
// default RANGE frame, which reads back from the last of them (as Flink).
const overLateTests = `
tests:
  - name: equal times and a late row
    inputs:
      orders:
        lines: |
          a,1,1000
          a,2,2000
          a,3,2000
          a,4,3000
          a,5,1500
          b,6,2500
          a,7,4000
    expect:
      out:
        changes:
          - +I: {product: a, ts: 1000, amount: 1, last3: 1, n: 1, prev: null}
          - +I: {product: a, ts: 2000, amount: 2, last3: 3, n: 2, prev: 2}
          - +I: {product: a, ts: 2000, amount: 3, last3: 6, n: 3, prev: 2}
          - +I: {product: b, ts: 2500, amount: 6, last3: 6, n: 1, prev: null}
          - +I: {product: a, ts: 3000, amount: 4, last3: 9, n: 3, prev: 3}
          - +I: {product: a, ts: 4000, amount: 7, last3: 14, n: 3, prev: 4}
      peers:
        changes:
          - +I: {product: a, ts: 1000, amount: 1, s: 1}
          - +I: {product: a, ts: 2000, amount: 2, s: 6}
          - +I: {product: a, ts: 2000, amount: 3, s: 6}
          - +I: {product: b, ts: 2500, amount: 6, s: 6}
          - +I: {product: a, ts: 3000, amount: 4, s: 9}
          - +I: {product: a, ts: 4000, amount: 7, s: 11}
`

// TestOverLateRowsAndPeers checks equal timestamps and a late row
// through etld test's record-by-record run.
func TestOverLateRowsAndPeers(t *testing.T) {
	dir := t.TempDir()
	runPipeTests(t, dir, fmt.Sprintf(overPipeline, filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv"), "")+overLateTests)
}

// TestOverIntoFileAndMySQL runs a moving sum from a file into a CSV file
// and a MySQL table (append: an OVER aggregate's rows are final and have
// no key) and checks both: rows in event-time order, those of one time in
// arrival order.
func TestOverIntoFileAndMySQL(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	t.Setenv("OVER_TEST_DSN", dsn)
	table := testenv.MySQLTable(t, db, "")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv")
	rows := "a,1,1000\nb,10,1000\na,2,2000\na,3,1500\nb,20,3000\na,4,3000\n"
	if err := os.WriteFile(in, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	runFile(t, dir, fmt.Sprintf(overPipeline, in, out, `  - name: db
    from: moving
    type: mysql
    dsn: ${OVER_TEST_DSN}
    table: `+table+`
    create_table: true
`))
	want := []string{
		"a,1000,1,1,1,", "b,1000,10,10,1,", "a,1500,3,4,2,1", "a,2000,2,6,3,3",
		"b,3000,20,30,2,10", "a,3000,4,9,3,2",
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.TrimSuffix(string(got), "\n"); g != strings.Join(want, "\n") {
		t.Errorf("file holds\n%s\nwant\n%s", g, strings.Join(want, "\n"))
	}
	res, err := db.Query("SELECT product, ts, amount, last3, n, COALESCE(CAST(prev AS CHAR), '') FROM " + table + " ORDER BY ts, product")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var table2 []string
	for res.Next() {
		var p, ts, a, l, n, prev string
		if err := res.Scan(&p, &ts, &a, &l, &n, &prev); err != nil {
			t.Fatal(err)
		}
		table2 = append(table2, strings.Join([]string{p, ts, a, l, n, prev}, ","))
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	want[4], want[5] = want[5], want[4] // ORDER BY ts, product
	if g := strings.Join(table2, "\n"); g != strings.Join(want, "\n") {
		t.Errorf("table %s holds\n%s\nwant\n%s", table, g, strings.Join(want, "\n"))
	}
}

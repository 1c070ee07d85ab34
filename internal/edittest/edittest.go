// Package edittest holds the edit matrix's cases, which the pipeline's
// restart tests and the daemon's reload tests both run: a pipeline file
// over two followed CSV files, each stateful operator kind in a query
// and in the same query with the operator itself changed, and the rows.
// It imports nothing of etld's.
package edittest

import (
	"fmt"
	"strings"
)

// Pipeline reads the followed files a.csv and b.csv of directory %[1]s
// (rows as Rows writes them) into transform %[4]s (its SQL and options the case gives) and sink out; more
// holds the edit's extra transforms and sinks.
const Pipeline = `version: 1
name: edits
sources:
  - name: a
    type: file
    path: %[1]s/a.csv
    follow: true
    monitor_interval: 20ms
    schema: [id INT, k STRING, v BIGINT, ts BIGINT, "et AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: et - INTERVAL '5' SECOND
  - name: b
    type: file
    path: %[1]s/b.csv
    follow: true
    monitor_interval: 20ms
    schema: [id INT, k STRING, v BIGINT, ts BIGINT, "et AS TO_TIMESTAMP_LTZ(ts, 3)"]
    watermark: et - INTERVAL '5' SECOND
transforms:
  - name: %[4]s
%[3]s    sql: %[2]s
%[5]s
sinks:
  - name: out
    from: %[4]s
    type: blackhole
%[6]s`

// Op is a stateful operator kind of the matrix: Name, its state ID in
// transform q (ID), a query with it (SQL), and the same query with the
// operator itself changed (Changed).
type Op struct{ Name, ID, SQL, Changed string }

// Ops are the stateful operator kinds of the edit matrix: a query
// with the operator (its state ID in transform q), and the same query
// with the operator itself changed.
var Ops = []Op{
	{"group_aggregate", "group_aggregate#1",
		"SELECT k, COUNT(*) AS n, SUM(v) AS s FROM a GROUP BY k",
		"SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM a GROUP BY k"},
	{"window_aggregate", "window_aggregate#1",
		"SELECT k, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(et), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end",
		"SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(et), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end"},
	{"join", "join#1",
		"SELECT a.id, b.id AS bid, a.k FROM a JOIN b ON a.k = b.k",
		"SELECT a.id, b.id AS bid, a.k FROM a JOIN b ON a.k = b.k AND a.v > b.v"},
	{"top_n", "rank#1",
		"SELECT * FROM (SELECT id, k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM a) WHERE rn <= 2",
		"SELECT * FROM (SELECT id, k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM a) WHERE rn <= 3"},
	{"deduplicate", "deduplicate#1",
		"SELECT id, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY et DESC) AS rn FROM a) WHERE rn = 1",
		"SELECT id, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k, id % 2 ORDER BY et DESC) AS rn FROM a) WHERE rn = 1"},
	{"over", "over_aggregate#1",
		"SELECT id, k, SUM(v) OVER (PARTITION BY k ORDER BY et RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW) AS s FROM a",
		"SELECT id, k, SUM(v) OVER (PARTITION BY k ORDER BY et RANGE BETWEEN INTERVAL '20' SECOND PRECEDING AND CURRENT ROW) AS s FROM a"},
	{"distinct", "distinct#1",
		"SELECT DISTINCT k, v % 3 AS r FROM a",
		"SELECT DISTINCT k, v % 3 AS r, id % 2 AS p FROM a"},
	{"set_operation", "set_operation#1",
		"SELECT k, v FROM a INTERSECT ALL SELECT k, v FROM b",
		"SELECT k, v FROM a EXCEPT ALL SELECT k, v FROM b"},
	{"interval_join", "join#1",
		"SELECT a.id, b.id AS bid, a.k FROM a, b WHERE a.k = b.k AND a.et BETWEEN b.et - INTERVAL '3' SECOND AND b.et + INTERVAL '3' SECOND",
		"SELECT a.id, b.id AS bid, a.k FROM a, b WHERE a.k = b.k AND a.et BETWEEN b.et - INTERVAL '4' SECOND AND b.et + INTERVAL '3' SECOND"},
	{"window_top_n", "window_rank#1",
		"SELECT window_start, k, id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(et), INTERVAL '20' SECOND))) WHERE rn <= 2",
		"SELECT window_start, k, id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) AS rn FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(et), INTERVAL '20' SECOND))) WHERE rn <= 3"},
	{"match_recognize", "match_recognize#1",
		"SELECT * FROM a MATCH_RECOGNIZE (PARTITION BY k ORDER BY et MEASURES FIRST(U.id) AS first_id, LAST(U.id) AS last_id ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (U{2,} D) DEFINE U AS U.v >= 20, D AS D.v < 0) AS T",
		"SELECT * FROM a MATCH_RECOGNIZE (PARTITION BY k ORDER BY et MEASURES FIRST(U.id) AS first_id, LAST(U.id) AS last_id ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (U{3,} D) DEFINE U AS U.v >= 20, D AS D.v < 0) AS T"},
}

// Rows is the CSV of n rows id,k,v,ts: keys k0..k4, values 0..39 and
// event times step seconds apart.
func Rows(n, step int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d,k%d,%d,%d\n", i, i%5, (i*7)%40, 1_700_000_000_000+int64(i*step)*1000)
	}
	return b.String()
}

// Halves cuts a CSV's lines in two, the first half first.
func Halves(csv string) (head, tail string) {
	lines := strings.SplitAfter(csv, "\n")
	half := len(lines) / 2
	return strings.Join(lines[:half], ""), strings.Join(lines[half:], "")
}

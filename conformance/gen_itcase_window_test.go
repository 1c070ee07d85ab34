package conformance

import "fmt"

// Queries adapted from Flink's window ITCases of flink-table-planner
// (runtime/stream/sql): WindowJoinITCase, WindowRankITCase,
// WindowDeduplicateITCase, WindowTableFunctionITCase,
// WindowDistinctAggregateITCase and WindowAggregateITCase's CDC source,
// over TestData.scala's windowDataWithTimestamp (table W of
// gen_itcase_test.go: out of order, its row of 00:00:04 late) and
// windowData2WithTimestamp (W2 here).
//
// Adapted for the case format: Flink's tables read `ts` as a STRING and
// derive `rowtime AS TO_TIMESTAMP(ts)`; here ts is the TIMESTAMP(3)
// column itself, with the same watermark (ts - 1 s), and the columns
// `int`, `double`, `float`, `bigdec`, `string` are i, d, f, bd, s. The
// ITCases' TIMESTAMP_LTZ variants (Asia/Shanghai) and their failing
// source (a restore from a checkpoint) are left out.

func init() { areaCases = append(areaCases, itcaseWindowCases) }

// windowData2WithTimestamp: windowDataWithTimestamp with name a1 for a.
func itWindowData2() [][]any {
	out := make([][]any, len(itWindowData))
	for i, r := range itWindowData {
		c := append([]any(nil), r...)
		if c[6] == "a" {
			c[6] = "a1"
		}
		out[i] = c
	}
	return out
}

// itWindowCDC is windowDataWithTimestamp as a changelog (WindowAggregate-
// ITCase's T1_CDC, 'changelog-mode' = 'I,UA,UB,D'), written as debezium
// events keyed by id: updates and deletes of rows in still-open windows,
// an update moving a row to another window, and the late row. Adapted:
// TestData's windowChangelogDataWithTimestamp is a values-connector
// changelog; the changes here are ours, over the same rows.
const itWindowCDC = `{"before":null,"after":{"id":1,"ts":"2020-10-10 00:00:01","i":1,"d":1.0,"s":"Hi","name":"a"},"op":"c"}
{"before":null,"after":{"id":2,"ts":"2020-10-10 00:00:02","i":2,"d":2.0,"s":"Comment#1","name":"a"},"op":"c"}
{"before":{"id":2,"ts":"2020-10-10 00:00:02","i":2,"d":2.0,"s":"Comment#1","name":"a"},"after":{"id":2,"ts":"2020-10-10 00:00:02","i":22,"d":2.0,"s":"Comment#1","name":"a"},"op":"u"}
{"before":null,"after":{"id":3,"ts":"2020-10-10 00:00:03","i":2,"d":2.0,"s":"Comment#1","name":"a"},"op":"c"}
{"before":null,"after":{"id":4,"ts":"2020-10-10 00:00:04","i":5,"d":5.0,"s":null,"name":"a"},"op":"c"}
{"before":{"id":1,"ts":"2020-10-10 00:00:01","i":1,"d":1.0,"s":"Hi","name":"a"},"after":null,"op":"d"}
{"before":null,"after":{"id":5,"ts":"2020-10-10 00:00:07","i":3,"d":3.0,"s":"Hello","name":"b"},"op":"c"}
{"before":null,"after":{"id":6,"ts":"2020-10-10 00:00:06","i":6,"d":6.0,"s":"Hi","name":"b"},"op":"c"}
{"before":null,"after":{"id":7,"ts":"2020-10-10 00:00:08","i":3,"d":null,"s":"Comment#2","name":"a"},"op":"c"}
{"before":null,"after":{"id":8,"ts":"2020-10-10 00:00:04","i":5,"d":5.0,"s":"Hi","name":"a"},"op":"c"}
{"before":{"id":5,"ts":"2020-10-10 00:00:07","i":3,"d":3.0,"s":"Hello","name":"b"},"after":{"id":5,"ts":"2020-10-10 00:00:09","i":4,"d":3.0,"s":"Hello","name":"b"},"op":"u"}
{"before":null,"after":{"id":9,"ts":"2020-10-10 00:00:16","i":4,"d":4.0,"s":"Hi","name":"b"},"op":"c"}
{"before":{"id":7,"ts":"2020-10-10 00:00:08","i":3,"d":null,"s":"Comment#2","name":"a"},"after":null,"op":"d"}
{"before":null,"after":{"id":10,"ts":"2020-10-10 00:00:32","i":7,"d":7.0,"s":null,"name":null},"op":"c"}
{"before":null,"after":{"id":11,"ts":"2020-10-10 00:00:34","i":1,"d":3.0,"s":"Comment#3","name":"b"},"op":"c"}
`

var itWindowTables = map[string][2]string{
	"W2": {"table: W2 (ts TIMESTAMP(3), i INT, d DOUBLE, f FLOAT, bd DECIMAL(10, 2), s STRING, name STRING) json watermark ts AS ts - INTERVAL '1' SECOND",
		itJSON([]string{"ts", "i", "d", "f", "bd", "s", "name"}, itWindowData2())},
	"WC": {"table: WC (id INT, ts TIMESTAMP(3), i INT, d DOUBLE, s STRING, name STRING) debezium-json key id watermark ts AS ts - INTERVAL '1' SECOND", itWindowCDC},
}

// The window aggregate each side of WindowJoinITCase's joins reads.
const (
	wjL = "(SELECT name, window_start, window_end, COUNT(DISTINCT s) AS uv1 FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end)"
	wjR = "(SELECT name, window_start, window_end, COUNT(DISTINCT s) AS uv2 FROM TABLE(TUMBLE(TABLE W2, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end)"
	// The columns WindowJoinITCase's joins of TVFs select, but its
	// TO_TIMESTAMP(L.ts) (of a STRING ts): ts here is the rowtime itself,
	// and Flink writes no row with two rowtime columns (ts, window_time).
	wjCols = "L.i, L.d, L.f, L.bd, L.s, L.name, CAST(L.ts AS STRING), L.window_start, L.window_end, L.window_time"
	// The windowed aggregate WindowRankITCase ranks.
	wrAgg = "SELECT window_start, window_end, name, COUNT(*) AS cnt, SUM(i) AS sum_int, COUNT(DISTINCT s) AS distinct_cnt FROM TABLE(%s) GROUP BY window_start, window_end, name"
)

var itcaseWindowQueries = []struct {
	name   string
	modes  []string
	tables []string
	query  string
}{
	// WindowJoinITCase.
	{"wjoin-inner-agg", streaming, []string{"W", "W2"}, "SELECT L.name, L.window_start, L.window_end, uv1, uv2 FROM " + wjL + " L JOIN " + wjR + " R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"},
	{"wjoin-inner-tvf", streaming, []string{"W", "W2"}, "SELECT " + wjCols + ", R.i, R.s, R.name FROM (SELECT * FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L JOIN (SELECT * FROM TABLE(TUMBLE(TABLE W2, DESCRIPTOR(ts), INTERVAL '5' SECOND))) R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"},
	{"wjoin-inner-tvf-offset", streaming, []string{"W", "W2"}, "SELECT " + wjCols + ", R.i, R.s, R.name FROM (SELECT * FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' SECOND))) L JOIN (SELECT * FROM TABLE(TUMBLE(TABLE W2, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' SECOND))) R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"},
	{"wjoin-inner-tvf-negative-offset", streaming, []string{"W", "W2"}, "SELECT " + wjCols + ", R.i, R.s, R.name FROM (SELECT * FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '-1' SECOND))) L JOIN (SELECT * FROM TABLE(TUMBLE(TABLE W2, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '-1' SECOND))) R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"},
	{"wjoin-not-distinct-tvf", streaming, []string{"W", "W2"}, "SELECT " + wjCols + ", R.i, R.s, R.name FROM (SELECT * FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L JOIN (SELECT * FROM TABLE(TUMBLE(TABLE W2, DESCRIPTOR(ts), INTERVAL '5' SECOND))) R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name IS NOT DISTINCT FROM R.name"},
	{"wjoin-semi-exists", streaming, []string{"W", "W2"}, "SELECT * FROM " + wjL + " L WHERE EXISTS (SELECT * FROM " + wjR + " R WHERE L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name)"},
	{"wjoin-semi-in-tvf", streaming, []string{"W", "W2"}, "SELECT " + wjCols + " FROM (SELECT * FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L WHERE L.name IN (SELECT name FROM TABLE(TUMBLE(TABLE W2, DESCRIPTOR(ts), INTERVAL '5' SECOND)) R WHERE L.window_start = R.window_start AND L.window_end = R.window_end)"},
	{"wjoin-anti-not-exists", streaming, []string{"W", "W2"}, "SELECT * FROM " + wjL + " L WHERE NOT EXISTS (SELECT * FROM " + wjR + " R WHERE L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name)"},
	{"wjoin-anti-not-exists-tvf", streaming, []string{"W", "W2"}, "SELECT " + wjCols + " FROM (SELECT * FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L WHERE NOT EXISTS (SELECT * FROM TABLE(TUMBLE(TABLE W2, DESCRIPTOR(ts), INTERVAL '5' SECOND)) R WHERE L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name) AND L.f IS NOT NULL"},
	{"wjoin-anti-not-in", streaming, []string{"W", "W2"}, "SELECT * FROM " + wjL + " L WHERE L.name NOT IN (SELECT name FROM " + wjR + " R WHERE L.window_start = R.window_start AND L.window_end = R.window_end)"},
	{"wjoin-left-agg", streaming, []string{"W", "W2"}, "SELECT L.name, L.window_start, L.window_end, uv1, uv2 FROM " + wjL + " L LEFT JOIN " + wjR + " R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"},
	// Whether a row is late for a window join depends on how far the
	// other input has got (docs/sql.md), in Flink as in etld: W2's late
	// row (f NULL), padded or dropped, is filtered out, as the ITCase's
	// testAntiJoinNotExistsWTF filters L.float.
	{"wjoin-right-tvf", streaming, []string{"W", "W2"}, "SELECT L.i, L.name, R.ts, R.i, R.s, R.name, R.window_start, R.window_end FROM (SELECT * FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L RIGHT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE W2, DESCRIPTOR(ts), INTERVAL '5' SECOND))) R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name WHERE R.f IS NOT NULL"},
	{"wjoin-full-agg", streaming, []string{"W", "W2"}, "SELECT L.name, L.window_start, L.window_end, uv1, R.name, R.window_start, R.window_end, uv2 FROM " + wjL + " L FULL OUTER JOIN " + wjR + " R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"},
	{"wjoin-full-hop-agg", streaming, []string{"W", "W2"}, "SELECT L.name, L.window_start, L.window_end, L.cnt, R.name, R.cnt FROM (SELECT name, window_start, window_end, COUNT(*) AS cnt FROM TABLE(HOP(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY name, window_start, window_end) L FULL JOIN (SELECT name, window_start, window_end, COUNT(*) AS cnt FROM TABLE(HOP(TABLE W2, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY name, window_start, window_end) R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"},
	{"wjoin-cumulate-tvf", streaming, []string{"W", "W2"}, "SELECT L.i, L.name, L.window_start, L.window_end, R.i FROM (SELECT * FROM TABLE(CUMULATE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))) L JOIN (SELECT * FROM TABLE(CUMULATE(TABLE W2, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))) R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name AND L.i > R.i"},
	// WindowRankITCase.
	{"wrank-tumble-agg", streaming, []string{"W"}, "SELECT window_start, window_end, name, cnt, sum_int, distinct_cnt FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY cnt DESC, sum_int) AS rownum FROM (" + wrAggTumble + ")) WHERE rownum <= 2"},
	{"wrank-hop-agg", streaming, []string{"W"}, "SELECT window_start, window_end, name, cnt, sum_int, rownum FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY sum_int DESC) AS rownum FROM (" + wrAggHop + ")) WHERE rownum <= 1"},
	{"wrank-cumulate-agg", streaming, []string{"W"}, "SELECT window_start, window_end, name, cnt, sum_int, distinct_cnt, rownum FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY cnt DESC, name) AS rownum FROM (" + wrAggCumulate + ")) WHERE rownum <= 3"},
	{"wrank-tvf-topn", streaming, []string{"W"}, "SELECT ts, i, s, name, window_start, window_end, rownum FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY i DESC, ts) AS rownum FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND))) WHERE rownum <= 2"},
	{"wrank-tvf-rank-ties", streaming, []string{"W"}, "SELECT i, d, name, window_start, rk FROM (SELECT *, RANK() OVER (PARTITION BY window_start, window_end ORDER BY i DESC) AS rk FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rk <= 2"},
	{"wrank-tvf-dense-offset", streaming, []string{"W"}, "SELECT i, name, window_start, rk FROM (SELECT *, DENSE_RANK() OVER (PARTITION BY window_start, window_end ORDER BY i) AS rk FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '2' SECOND))) WHERE rk > 1 AND rk <= 3"},
	// WindowDeduplicateITCase.
	{"wdedup-first-tumble", streaming, []string{"W"}, "SELECT CAST(ts AS STRING), i, s, name, window_start, window_end, window_time FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY ts ASC) AS rownum FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND))) WHERE rownum <= 1"},
	{"wdedup-last-hop", streaming, []string{"W"}, "SELECT ts, i, s, name, window_start, window_end FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY ts DESC) AS rownum FROM TABLE(HOP(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))) WHERE rownum = 1"},
	{"wdedup-last-cumulate", streaming, []string{"W"}, "SELECT ts, i, name, window_start, window_end FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY ts DESC) AS rownum FROM TABLE(CUMULATE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))) WHERE rownum <= 1"},
	{"wdedup-first-offset-no-name", streaming, []string{"W"}, "SELECT ts, i, name, window_start, window_end FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY ts) AS rownum FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '2' SECOND))) WHERE rownum = 1"},
	// WindowTableFunctionITCase: the TVFs alone, with the late row and
	// offsets. A query writing window_time writes ts as text: Flink
	// writes no row with two rowtime columns.
	{"wtvf-tumble", both, []string{"W"}, "SELECT CAST(ts AS STRING), i, d, f, bd, s, name, window_start, window_end, window_time FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND))"},
	{"wtvf-tumble-negative-offset", streaming, []string{"W"}, "SELECT CAST(ts AS STRING), i, name, window_start, window_end, window_time FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '-1' SECOND))"},
	{"wtvf-hop", streaming, []string{"W"}, "SELECT CAST(ts AS STRING), i, s, name, window_start, window_end, window_time FROM TABLE(HOP(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))"},
	{"wtvf-hop-offset", streaming, []string{"W"}, "SELECT ts, i, name, window_start, window_end FROM TABLE(HOP(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND, INTERVAL '1' SECOND))"},
	{"wtvf-cumulate", streaming, []string{"W"}, "SELECT CAST(ts AS STRING), i, name, window_start, window_end, window_time FROM TABLE(CUMULATE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))"},
	{"wtvf-cumulate-offset", streaming, []string{"W"}, "SELECT ts, i, name, window_start, window_end FROM TABLE(CUMULATE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND, INTERVAL '3' SECOND))"},
	{"wtvf-tumble-named-args", streaming, []string{"W"}, "SELECT i, name, window_start, window_end FROM TABLE(TUMBLE(DATA => TABLE W, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '10' SECOND))"},
	// WindowDistinctAggregateITCase. (Flink 2.3's HOP window refuses
	// LISTAGG(DISTINCT ...) and SUM(DISTINCT ...): This function does not
	// support retraction; etld computes them.)
	{"wdistinct-tumble", streaming, []string{"W"}, "SELECT name, window_start, window_end, COUNT(DISTINCT s), SUM(DISTINCT i), COUNT(DISTINCT i) FILTER (WHERE i > 2), MAX(DISTINCT d), COUNT(*), SUM(i) FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end"},
	{"wdistinct-hop", streaming, []string{"W"}, "SELECT name, window_start, window_end, COUNT(DISTINCT s), COUNT(DISTINCT i), AVG(DISTINCT bd), COUNT(DISTINCT d) FROM TABLE(HOP(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY name, window_start, window_end"},
	{"wdistinct-cumulate", streaming, []string{"W"}, "SELECT name, window_start, window_end, COUNT(DISTINCT s), COUNT(DISTINCT s) FILTER (WHERE i > 3), SUM(DISTINCT i) FROM TABLE(CUMULATE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) GROUP BY name, window_start, window_end"},
	{"wdistinct-tumble-grouping-sets", streaming, []string{"W"}, "SELECT name, window_start, window_end, COUNT(*), COUNT(DISTINCT s), SUM(i) FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY GROUPING SETS ((name), ()), window_start, window_end"},
	{"wdistinct-hop-cube", streaming, []string{"W"}, "SELECT name, s, window_start, window_end, COUNT(*), COUNT(DISTINCT i), GROUPING_ID(name, s) FROM TABLE(HOP(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY CUBE(name, s), window_start, window_end"},
	{"wdistinct-tumble-repeated-set", streaming, []string{"W"}, "SELECT name, window_start, window_end, COUNT(*), COUNT(DISTINCT s), GROUP_ID(), GROUPING(name) FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY GROUPING SETS ((name), (name), ()), window_start, window_end"},
	{"wdistinct-cumulate-rollup", streaming, []string{"W"}, "SELECT name, window_start, window_end, COUNT(DISTINCT s), MAX(i), GROUPING(name) FROM TABLE(CUMULATE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) GROUP BY ROLLUP(name), window_start, window_end"},
	// WindowAggregateITCase over a changelog (CDC) source.
	{"wcdc-tumble", streaming, []string{"WC"}, "SELECT name, window_start, window_end, COUNT(*), SUM(i), MAX(i), COUNT(DISTINCT s) FROM TABLE(TUMBLE(TABLE WC, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end"},
	{"wcdc-hop", streaming, []string{"WC"}, "SELECT window_start, window_end, COUNT(*), SUM(d), MIN(i) FROM TABLE(HOP(TABLE WC, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end"},
	{"wcdc-cumulate", streaming, []string{"WC"}, "SELECT name, window_start, window_end, COUNT(*), SUM(i), AVG(d) FROM TABLE(CUMULATE(TABLE WC, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) GROUP BY name, window_start, window_end"},
}

var (
	wrAggTumble   = fmt.Sprintf(wrAgg, "TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)")
	wrAggHop      = fmt.Sprintf(wrAgg, "HOP(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)")
	wrAggCumulate = fmt.Sprintf(wrAgg, "CUMULATE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)")
)

func itcaseWindowCases() []genCase {
	var out []genCase
	for _, q := range itcaseWindowQueries {
		for _, mode := range q.modes {
			lines, data := readTables(q.tables, itWindowTables, itTables)
			h := append([]string{"mode: " + mode}, lines...)
			name := "itcase-" + q.name
			if len(q.modes) > 1 {
				name += "-" + mode
			}
			out = append(out, genCase{name: name, header: h, query: q.query, data: data})
		}
	}
	return out
}

package conformance

import (
	"fmt"
	"time"
)

// The TIMESTAMP_LTZ variants of Flink's window ITCases (runtime/stream/sql:
// WindowAggregateITCase, WindowTableFunctionITCase, WindowJoinITCase,
// WindowRankITCase, WindowDeduplicateITCase), which run each query over
// TestData.scala's windowDataWithLtzInShanghai: the rows of
// windowDataWithTimestamp (itWindowData) as epoch milliseconds of their
// wall clock in Asia/Shanghai, read as `rowtime AS TO_TIMESTAMP_LTZ(ts,
// 3)` with table.local-time-zone Asia/Shanghai. Windows then align to
// Shanghai's wall clock (a day's window starts at its midnight) and
// window_start/window_end are that wall clock. Beside them, cases of our
// own over America/Los_Angeles's daylight-saving changes of 2021, where a
// local hour is missing (March 14) or twice (November 7).
//
// Adapted for the case format as gen_itcase_window_test.go's: columns
// `int`, `double`, `float`, `bigdec`, `string` are i, d, f, bd, s; the
// user aggregate concat_distinct_agg is left out, and a query writing the
// row's time writes its BIGINT ts (Flink writes no row with two rowtime
// columns).

func init() { areaCases = append(areaCases, itcaseLTZCases) }

const (
	shanghai   = "Asia/Shanghai"
	losAngeles = "America/Los_Angeles"
)

// epochMillis is the epoch milliseconds of wall clock text in zone.
func epochMillis(zone, text string) int64 {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		panic(err)
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05", text, loc)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

// itWindowLTZ is windowDataWithLtzInShanghai (rename a to a1 for
// windowData2).
func itWindowLTZ(rename bool) [][]any {
	out := make([][]any, len(itWindowData))
	for i, r := range itWindowData {
		c := append([]any(nil), r...)
		c[0] = epochMillis(shanghai, r[0].(string))
		if rename && c[6] == "a" {
			c[6] = "a1"
		}
		out[i] = c
	}
	return out
}

// itDSTData: rows around Los Angeles's 2021 changes, given as instants
// (UTC): 2021-03-14 02:00 PST became 03:00 PDT (10:00Z), 2021-11-07 02:00
// PDT became 01:00 PST (09:00Z), so 01:00-02:00 local came twice.
func itDSTData() [][]any {
	rows := []struct {
		utc  string
		v    int
		name string
	}{
		{"2021-03-14 07:30:00", 1, "a"},  // 23:30 PST the day before
		{"2021-03-14 09:30:00", 2, "a"},  // 01:30 PST
		{"2021-03-14 09:59:59", 3, "b"},  // 01:59:59 PST
		{"2021-03-14 10:00:00", 4, "a"},  // 03:00 PDT
		{"2021-03-14 10:30:00", 5, "b"},  // 03:30 PDT
		{"2021-03-15 06:30:00", 6, "a"},  // 23:30 PDT
		{"2021-11-07 06:30:00", 7, "a"},  // 23:30 PDT, November 6
		{"2021-11-07 07:30:00", 8, "b"},  // 00:30 PDT
		{"2021-11-07 08:15:00", 9, "a"},  // 01:15 PDT
		{"2021-11-07 08:45:00", 10, "b"}, // 01:45 PDT
		{"2021-11-07 09:10:00", 11, "a"}, // 01:10 PST
		{"2021-11-07 09:50:00", 12, "a"}, // 01:50 PST
		{"2021-11-07 10:30:00", 13, "b"}, // 02:30 PST
		{"2021-11-07 11:00:00", 14, "a"}, // 03:00 PST
		{"2021-11-08 08:10:00", 15, "b"}, // 00:10 PST, November 8
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = []any{epochMillis("UTC", r.utc), r.v, r.name}
	}
	return out
}

var itLTZTables = map[string][2]string{
	"WL": {"table: WL (ts BIGINT, i INT, d DOUBLE, f FLOAT, bd DECIMAL(10, 2), s STRING, name STRING, rowtime AS TO_TIMESTAMP_LTZ(ts, 3)) json watermark rowtime AS rowtime - INTERVAL '1' SECOND",
		itJSON([]string{"ts", "i", "d", "f", "bd", "s", "name"}, itWindowLTZ(false))},
	"WL2": {"table: WL2 (ts BIGINT, i INT, d DOUBLE, f FLOAT, bd DECIMAL(10, 2), s STRING, name STRING, rowtime AS TO_TIMESTAMP_LTZ(ts, 3)) json watermark rowtime AS rowtime - INTERVAL '1' SECOND",
		itJSON([]string{"ts", "i", "d", "f", "bd", "s", "name"}, itWindowLTZ(true))},
	"DL": {"table: DL (ts BIGINT, v INT, name STRING, rowtime AS TO_TIMESTAMP_LTZ(ts, 3)) json watermark rowtime AS rowtime - INTERVAL '1' SECOND",
		itJSON([]string{"ts", "v", "name"}, itDSTData())},
}

// The aggregates WindowAggregateITCase computes (but its user aggregate).
const wlAggs = "COUNT(*), SUM(bd), MAX(d), MIN(f), COUNT(DISTINCT s)"

func wlAgg(tvf string) string {
	return fmt.Sprintf("SELECT name, window_start, window_end, %s FROM TABLE(%s) GROUP BY name, window_start, window_end", wlAggs, tvf)
}

const (
	wlJL   = "(SELECT name, window_start, window_end, COUNT(DISTINCT s) AS uv1 FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end)"
	wlJR   = "(SELECT name, window_start, window_end, COUNT(DISTINCT s) AS uv2 FROM TABLE(TUMBLE(TABLE WL2, DESCRIPTOR(rowtime), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end)"
	wlRank = "SELECT window_start, window_end, name, COUNT(*) AS cnt, SUM(i) AS sum_int, COUNT(DISTINCT s) AS distinct_cnt FROM TABLE(%s) GROUP BY window_start, window_end, name"
)

var itcaseLTZQueries = []struct {
	name   string
	zone   string
	tables []string
	query  string
}{
	// WindowAggregateITCase, useTimestampLtz = true.
	{"wagg-ltz-tumble", shanghai, []string{"WL"}, wlAgg("TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND)")},
	{"wagg-ltz-tumble-day", shanghai, []string{"WL"}, wlAgg("TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '1' DAY)")},
	{"wagg-ltz-tumble-offset", shanghai, []string{"WL"}, wlAgg("TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '1' DAY, INTERVAL '8' HOUR)")},
	{"wagg-ltz-tumble-negative-offset", shanghai, []string{"WL"}, wlAgg("TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '1' DAY, INTERVAL '-8' HOUR)")},
	{"wagg-ltz-cascade-offset", shanghai, []string{"WL"}, "SELECT cnt, window_start, window_end, COUNT(*) FROM (SELECT name, window_start, window_end, COUNT(DISTINCT s) AS cnt FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '1' DAY, INTERVAL '8' HOUR)) GROUP BY name, window_start, window_end) GROUP BY cnt, window_start, window_end"},
	{"wagg-ltz-tumble-grouping-sets", shanghai, []string{"WL"}, "SELECT GROUPING_ID(name), name, window_start, window_end, " + wlAggs + " FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND)) GROUP BY GROUPING SETS ((name), ()), window_start, window_end"},
	{"wagg-ltz-tumble-cube", shanghai, []string{"WL"}, "SELECT GROUPING_ID(name), name, window_start, window_end, " + wlAggs + " FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND)) GROUP BY CUBE(name), window_start, window_end"},
	{"wagg-ltz-hop", shanghai, []string{"WL"}, wlAgg("HOP(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND, INTERVAL '10' SECOND)")},
	{"wagg-ltz-hop-offset", shanghai, []string{"WL"}, wlAgg("HOP(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '12' HOUR, INTERVAL '1' DAY, INTERVAL '8' HOUR)")},
	{"wagg-ltz-hop-rollup", shanghai, []string{"WL"}, "SELECT GROUPING_ID(name), name, window_start, window_end, " + wlAggs + " FROM TABLE(HOP(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY ROLLUP(name), window_start, window_end"},
	{"wagg-ltz-cumulate", shanghai, []string{"WL"}, wlAgg("CUMULATE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND, INTERVAL '15' SECOND)")},
	{"wagg-ltz-cumulate-offset", shanghai, []string{"WL"}, wlAgg("CUMULATE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '12' HOUR, INTERVAL '1' DAY, INTERVAL '8' HOUR)")},
	{"wagg-ltz-cumulate-negative-offset", shanghai, []string{"WL"}, wlAgg("CUMULATE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '12' HOUR, INTERVAL '1' DAY, INTERVAL '-8' HOUR)")},
	{"wagg-ltz-field-name-conflict", shanghai, []string{"WL"}, "SELECT window_time, MIN(rowtime) AS start_time, MAX(rowtime) AS end_time FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, window_time"},
	{"wagg-ltz-session", shanghai, []string{"WL"}, "SELECT name, window_start, window_end, COUNT(*), SUM(i) FROM TABLE(SESSION(TABLE WL PARTITION BY name, DESCRIPTOR(rowtime), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end"},
	// The TIMESTAMP variant under the same zone: a TIMESTAMP is a wall
	// clock already, the zone moves nothing.
	{"wagg-ts-zone-offset", shanghai, []string{"W"}, "SELECT name, window_start, window_end, COUNT(*), SUM(bd) FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '1' DAY, INTERVAL '8' HOUR)) GROUP BY name, window_start, window_end"},
	// WindowTableFunctionITCase, useTimestampLtz = true.
	{"wtvf-ltz-tumble", shanghai, []string{"WL"}, "SELECT ts, i, s, name, window_start, window_end, window_time FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND))"},
	{"wtvf-ltz-tumble-day", shanghai, []string{"WL"}, "SELECT ts, i, name, window_start, window_end, window_time FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '1' DAY))"},
	{"wtvf-ltz-hop-offset", shanghai, []string{"WL"}, "SELECT ts, i, name, window_start, window_end, window_time FROM TABLE(HOP(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '12' HOUR, INTERVAL '1' DAY, INTERVAL '8' HOUR))"},
	{"wtvf-ltz-cumulate", shanghai, []string{"WL"}, "SELECT ts, i, name, window_start, window_end, window_time FROM TABLE(CUMULATE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND, INTERVAL '15' SECOND))"},
	// WindowJoinITCase, useTimestampLtz = true.
	{"wjoin-ltz-inner-agg", shanghai, []string{"WL", "WL2"}, "SELECT L.name, L.window_start, L.window_end, uv1, uv2 FROM " + wlJL + " L JOIN " + wlJR + " R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"},
	{"wjoin-ltz-full-agg", shanghai, []string{"WL", "WL2"}, "SELECT L.name, L.window_start, L.window_end, uv1, R.name, R.window_start, R.window_end, uv2 FROM " + wlJL + " L FULL OUTER JOIN " + wlJR + " R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"},
	{"wjoin-ltz-inner-tvf", shanghai, []string{"WL", "WL2"}, "SELECT L.ts, L.i, L.name, L.window_start, L.window_end, R.i, R.name FROM (SELECT * FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND))) L JOIN (SELECT * FROM TABLE(TUMBLE(TABLE WL2, DESCRIPTOR(rowtime), INTERVAL '5' SECOND))) R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"},
	{"wjoin-ltz-semi-exists", shanghai, []string{"WL", "WL2"}, "SELECT * FROM " + wlJL + " L WHERE EXISTS (SELECT * FROM " + wlJR + " R WHERE L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name)"},
	// WindowRankITCase, useTimestampLtz = true.
	{"wrank-ltz-tumble-agg", shanghai, []string{"WL"}, "SELECT window_start, window_end, name, cnt, sum_int, distinct_cnt FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY cnt DESC, sum_int) AS rownum FROM (" + fmt.Sprintf(wlRank, "TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND)") + ")) WHERE rownum <= 2"},
	{"wrank-ltz-cumulate-agg", shanghai, []string{"WL"}, "SELECT window_start, window_end, name, cnt, sum_int, distinct_cnt, rownum FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY cnt DESC, name) AS rownum FROM (" + fmt.Sprintf(wlRank, "CUMULATE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND, INTERVAL '15' SECOND)") + ")) WHERE rownum <= 3"},
	{"wrank-ltz-tvf-topn", shanghai, []string{"WL"}, "SELECT ts, i, s, name, window_start, window_end, rownum FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY i DESC, ts) AS rownum FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND))) WHERE rownum <= 2"},
	// WindowDeduplicateITCase, useTimestampLtz = true.
	{"wdedup-ltz-first-tumble", shanghai, []string{"WL"}, "SELECT ts, i, s, name, window_start, window_end, window_time FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY rowtime ASC) AS rownum FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '5' SECOND))) WHERE rownum <= 1"},
	{"wdedup-ltz-last-day", shanghai, []string{"WL"}, "SELECT ts, i, name, window_start, window_end FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY rowtime DESC) AS rownum FROM TABLE(TUMBLE(TABLE WL, DESCRIPTOR(rowtime), INTERVAL '1' DAY))) WHERE rownum <= 1"},
	// Ours: Los Angeles's daylight-saving changes.
	{"dst-tumble-hour", losAngeles, []string{"DL"}, "SELECT window_start, window_end, window_time, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE DL, DESCRIPTOR(rowtime), INTERVAL '1' HOUR)) GROUP BY window_start, window_end, window_time"},
	{"dst-tumble-day", losAngeles, []string{"DL"}, "SELECT name, window_start, window_end, window_time, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE DL, DESCRIPTOR(rowtime), INTERVAL '1' DAY)) GROUP BY name, window_start, window_end, window_time"},
	{"dst-hop", losAngeles, []string{"DL"}, "SELECT window_start, window_end, COUNT(*), SUM(v) FROM TABLE(HOP(TABLE DL, DESCRIPTOR(rowtime), INTERVAL '1' HOUR, INTERVAL '2' HOUR)) GROUP BY window_start, window_end"},
	{"dst-cumulate", losAngeles, []string{"DL"}, "SELECT window_start, window_end, COUNT(*), MAX(v) FROM TABLE(CUMULATE(TABLE DL, DESCRIPTOR(rowtime), INTERVAL '6' HOUR, INTERVAL '1' DAY)) GROUP BY window_start, window_end"},
	{"dst-tvf-hour", losAngeles, []string{"DL"}, "SELECT ts, v, window_start, window_end, window_time FROM TABLE(TUMBLE(TABLE DL, DESCRIPTOR(rowtime), INTERVAL '1' HOUR))"},
	{"dst-session", losAngeles, []string{"DL"}, "SELECT name, window_start, window_end, COUNT(*), SUM(v) FROM TABLE(SESSION(TABLE DL PARTITION BY name, DESCRIPTOR(rowtime), INTERVAL '1' HOUR)) GROUP BY name, window_start, window_end"},
	// Expressions over a TIMESTAMP_LTZ under the zone (converted there).
	{"ltz-expr-zone", shanghai, []string{"WL"}, "SELECT ts, CAST(rowtime AS STRING), CAST(rowtime AS TIMESTAMP(3)), HOUR(rowtime), CAST(rowtime AS DATE) FROM WL WHERE i = 7"},
	{"dst-rank-day", losAngeles, []string{"DL"}, "SELECT * FROM (SELECT window_start, window_end, name, SUM(v) AS sv, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY SUM(v) DESC) AS rn FROM TABLE(TUMBLE(TABLE DL, DESCRIPTOR(rowtime), INTERVAL '1' DAY)) GROUP BY window_start, window_end, name) WHERE rn <= 1"},
}

func itcaseLTZCases() []genCase {
	var out []genCase
	for _, q := range itcaseLTZQueries {
		lines, data := readTables(q.tables, itLTZTables, itTables)
		h := append([]string{"mode: streaming"}, lines...)
		h = append(h, "zone: "+q.zone)
		out = append(out, genCase{name: "itcase29-" + q.name, header: h, query: q.query, data: data})
	}
	return out
}

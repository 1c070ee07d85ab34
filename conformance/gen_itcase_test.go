package conformance

import (
	"fmt"
	"strings"
)

// Queries adapted from Flink's own SQL integration tests (the runtime
// ITCases of flink-table-planner: Calc, Aggregate, Join, SemiAntiJoin,
// WindowAggregate, GroupWindow, OverAggregate, Rank, Deduplicate,
// SetOperators, Unnest), over their test data (TestData.scala): the
// suite's measure of a Flink user's everyday queries.

func init() { areaCases = append(areaCases, itcaseCases) }

// itJSON writes one JSON object a row; a nil value is null, a string is
// quoted, anything else is written as Go prints it.
func itJSON(cols []string, rows [][]any) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("{")
		for i, v := range r {
			if i > 0 {
				b.WriteString(",")
			}
			switch x := v.(type) {
			case nil:
				fmt.Fprintf(&b, "%q:null", cols[i])
			case string:
				fmt.Fprintf(&b, "%q:%q", cols[i], x)
			default:
				fmt.Fprintf(&b, "%q:%v", cols[i], x)
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// tupleData3 of TestData.scala.
func itTupleData3() [][]any {
	texts := []string{"Hi", "Hello", "Hello world", "Hello world, how are you?", "I am fine.", "Luke Skywalker"}
	bs := []int{1, 2, 2, 3, 3, 3}
	var rows [][]any
	for i := 1; i <= 21; i++ {
		if i <= 6 {
			rows = append(rows, []any{i, bs[i-1], texts[i-1]})
			continue
		}
		b := 4
		switch {
		case i > 15:
			b = 6
		case i > 10:
			b = 5
		}
		rows = append(rows, []any{i, b, fmt.Sprintf("Comment#%d", i-6)})
	}
	return rows
}

// tupleData5 of TestData.scala.
var itTupleData5 = [][]any{
	{1, 1, 0, "Hallo", 1}, {2, 2, 1, "Hallo Welt", 2}, {2, 3, 2, "Hallo Welt wie", 1},
	{3, 4, 3, "Hallo Welt wie gehts?", 2}, {3, 5, 4, "ABC", 2}, {3, 6, 5, "BCD", 3},
	{4, 7, 6, "CDE", 2}, {4, 8, 7, "DEF", 1}, {4, 9, 8, "EFG", 1}, {4, 10, 9, "FGH", 2},
	{5, 11, 10, "GHI", 1}, {5, 12, 11, "HIJ", 3}, {5, 13, 12, "IJK", 3}, {5, 14, 13, "JKL", 2}, {5, 15, 14, "KLM", 2},
}

// windowDataWithTimestamp of TestData.scala: out of order, one late row.
var itWindowData = [][]any{
	{"2020-10-10 00:00:01", 1, 1.0, 1.0, 1.11, "Hi", "a"},
	{"2020-10-10 00:00:02", 2, 2.0, 2.0, 2.22, "Comment#1", "a"},
	{"2020-10-10 00:00:03", 2, 2.0, 2.0, 2.22, "Comment#1", "a"},
	{"2020-10-10 00:00:04", 5, 5.0, 5.0, 5.55, nil, "a"},
	{"2020-10-10 00:00:07", 3, 3.0, 3.0, nil, "Hello", "b"},
	{"2020-10-10 00:00:06", 6, 6.0, 6.0, 6.66, "Hi", "b"},
	{"2020-10-10 00:00:08", 3, nil, 3.0, 3.33, "Comment#2", "a"},
	{"2020-10-10 00:00:04", 5, 5.0, nil, 5.55, "Hi", "a"},
	{"2020-10-10 00:00:16", 4, 4.0, 4.0, 4.44, "Hi", "b"},
	{"2020-10-10 00:00:32", 7, 7.0, 7.0, 7.77, nil, nil},
	{"2020-10-10 00:00:34", 1, 3.0, 3.0, 3.33, "Comment#3", "b"},
}

// The data of RankITCase's Top-N tests: (category, shopId, num).
var itRankData = [][]any{
	{"book", 1, 12}, {"book", 2, 19}, {"book", 4, 11}, {"fruit", 4, 33}, {"fruit", 3, 44}, {"fruit", 5, 22},
	{"book", 3, 15}, {"fruit", 1, 40}, {"book", 5, 9},
}

// Rows with NULLs in key and value columns, as nullablesOfData3.
var itNullData = [][]any{
	{1, 1, "Hi"}, {2, 2, "Hello"}, {3, 2, nil}, {4, nil, "Hello world"}, {nil, 3, "Luke"}, {6, 3, nil}, {nil, nil, nil}, {8, 4, "Comment"},
}

// Timestamped rows of DeduplicateITCase / OverAggregateITCase:
// (a, b, c, ts) with ts from b seconds, some rows out of order.
var itRowtimeData = [][]any{
	{1, 1, "Hi", "2020-01-01 00:00:01"}, {1, 2, "Hello", "2020-01-01 00:00:02"}, {1, 4, "Hello", "2020-01-01 00:00:04"},
	{2, 3, "Hello world", "2020-01-01 00:00:03"}, {1, 3, "Hello", "2020-01-01 00:00:03"}, {2, 5, "Hi", "2020-01-01 00:00:05"},
	{3, 7, "Hello", "2020-01-01 00:00:07"}, {2, 6, "Hello world", "2020-01-01 00:00:06"}, {3, 8, "Hi", "2020-01-01 00:00:08"},
	{3, 9, "Hello", "2020-01-01 00:00:09"}, {1, 10, "Hi", "2020-01-01 00:00:10"},
}

var itTables = map[string][2]string{
	"T3": {"table: T3 (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, itTupleData3())},
	"S3": {"table: S3 (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, itTupleData3()[:3])},
	"T5": {"table: T5 (d INT, e BIGINT, f INT, g STRING, h BIGINT) json", itJSON([]string{"d", "e", "f", "g", "h"}, itTupleData5)},
	"W": {"table: W (ts TIMESTAMP(3), i INT, d DOUBLE, f FLOAT, bd DECIMAL(10, 2), s STRING, name STRING) json watermark ts AS ts - INTERVAL '1' SECOND",
		itJSON([]string{"ts", "i", "d", "f", "bd", "s", "name"}, itWindowData)},
	"R":  {"table: R (category STRING, shopId INT, num BIGINT) json", itJSON([]string{"category", "shopId", "num"}, itRankData)},
	"N":  {"table: N (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, itNullData)},
	"RT": {"table: RT (a INT, b BIGINT, c STRING, ts TIMESTAMP(3)) json watermark ts AS ts - INTERVAL '1' SECOND", itJSON([]string{"a", "b", "c", "ts"}, itRowtimeData)},
	"A": {"table: A (x INT, arr ARRAY<INT>, m MAP<STRING, INT>, s STRING) json",
		`{"x":1,"arr":[12,45],"m":{"a":1,"b":2},"s":"x;y"}
{"x":2,"arr":[41,5],"m":{"c":3},"s":"z"}
{"x":3,"arr":[18,42],"m":{},"s":null}
{"x":4,"arr":[],"m":null,"s":"q;r;s"}
{"x":5,"arr":null,"m":{"d":null},"s":""}
`},
}

var itcaseQueries = []struct {
	name   string
	modes  []string
	tables []string
	query  string
}{
	// CalcITCase.
	{"calc-filter-or", streaming, []string{"T3"}, "SELECT a, c FROM T3 WHERE a < 3 OR a > 19 OR c LIKE '%world%'"},
	{"calc-case-when", streaming, []string{"T3"}, "SELECT a, CASE WHEN a < 3 THEN 'small' WHEN a < 10 THEN 'mid' ELSE c END, CASE b WHEN 1 THEN 'one' WHEN 2 THEN 'two' END FROM T3 WHERE a < 12"},
	{"calc-in-values", streaming, []string{"T3"}, "SELECT a, c FROM T3 WHERE b IN (1, 3, 6) AND a NOT IN (4, 17)"},
	{"calc-between-substr", streaming, []string{"T3"}, "SELECT a, SUBSTRING(c, 2, 4), CHAR_LENGTH(c), UPPER(c) FROM T3 WHERE a BETWEEN 3 AND 8"},
	{"calc-nulls", streaming, []string{"N"}, "SELECT a, b, c, a IS NULL, COALESCE(c, 'x'), IFNULL(b, -1), NULLIF(a, 1), c IS DISTINCT FROM 'Hi' FROM N"},
	{"calc-arith-types", streaming, []string{"T5"}, "SELECT d, e * 2, f / 3, h % 2, d + e, CAST(e AS DOUBLE) / 4, -f, ABS(f - 7), MOD(e, 4) FROM T5 WHERE d > 3"},
	{"calc-decimal", streaming, []string{"W"}, "SELECT bd, bd * 2, bd + 1, bd / 3, CAST(bd AS INT), ROUND(bd, 1), FLOOR(bd), CEIL(bd) FROM W"},
	{"calc-string-fns", streaming, []string{"T3"}, "SELECT a, CONCAT(c, '-', CAST(b AS STRING)), CONCAT_WS('|', c, 'x'), REPLACE(c, 'o', '0'), POSITION('o' IN c), TRIM(c), LPAD(c, 6, '*'), RPAD(c, 6, '*') FROM T3 WHERE a < 6"},
	{"calc-row-values", streaming, []string{"S3"}, "SELECT x, y, z * 2 FROM (VALUES (1, 'a', CAST(NULL AS DOUBLE)), (2, 'bb', 2.5), (3, CAST(NULL AS STRING), 1e3)) AS v(x, y, z)"},
	{"calc-cast-string", streaming, []string{"T5"}, "SELECT CAST(d AS STRING), CAST(e AS VARCHAR(3)), CAST(g AS CHAR(4)), CAST(f AS BOOLEAN), CAST(h AS DECIMAL(5, 2)) FROM T5 WHERE d < 3"},
	{"calc-timestamp-fns", streaming, []string{"W"}, "SELECT ts, DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm'), EXTRACT(SECOND FROM ts), CAST(ts AS DATE), TIMESTAMPADD(MINUTE, 90, ts), TIMESTAMPDIFF(SECOND, TIMESTAMP '2020-10-10 00:00:00', ts), FLOOR(ts TO MINUTE) FROM W WHERE i > 4"},
	{"calc-float-double", streaming, []string{"W"}, "SELECT d, f, d * f, f + 1, CAST(f AS DOUBLE), d / 0.5, POWER(d, 2), SQRT(d) FROM W WHERE name = 'a'"},
	{"calc-like-escape", streaming, []string{"T3"}, "SELECT a, c FROM T3 WHERE c LIKE 'Comment#1_' OR c SIMILAR TO 'H(i|ello)' OR c LIKE '%!%%' ESCAPE '!'"},
	// AggregateITCase.
	{"agg-distinct", both, []string{"T5"}, "SELECT d, COUNT(DISTINCT h), SUM(DISTINCT h), COUNT(*), AVG(f), MIN(g), MAX(g) FROM T5 GROUP BY d"},
	{"agg-distinct-filter", both, []string{"T5"}, "SELECT d, COUNT(DISTINCT e) FILTER (WHERE f > 5), SUM(e) FILTER (WHERE h = 2), COUNT(*) FILTER (WHERE g LIKE 'H%') FROM T5 GROUP BY d"},
	{"agg-nested-agg", both, []string{"T3"}, "SELECT cnt, COUNT(*), SUM(s) FROM (SELECT b, COUNT(a) AS cnt, SUM(a) AS s FROM T3 GROUP BY b) GROUP BY cnt"},
	{"agg-group-expr", both, []string{"T3"}, "SELECT MOD(a, 4), b > 3, COUNT(*), MAX(c), LISTAGG(c) FROM T3 WHERE a < 10 GROUP BY MOD(a, 4), b > 3"},
	{"agg-listagg-sep", batch, []string{"T3"}, "SELECT b, LISTAGG(c, '#') FROM (SELECT * FROM T3 WHERE a < 8) GROUP BY b"},
	{"agg-avg-types", both, []string{"T5"}, "SELECT d, AVG(e), AVG(CAST(f AS DOUBLE)), AVG(CAST(h AS DECIMAL(10, 2))), SUM(CAST(f AS DECIMAL(5, 1))) FROM T5 GROUP BY d"},
	{"agg-stddev-var", batch, []string{"T5"}, "SELECT d, STDDEV_POP(f), STDDEV_SAMP(f), VAR_POP(f), VAR_SAMP(f) FROM T5 GROUP BY d"},
	{"agg-nulls", both, []string{"N"}, "SELECT b, COUNT(a), COUNT(*), SUM(a), MIN(c), MAX(a), AVG(a) FROM N GROUP BY b"},
	{"agg-no-group-empty", both, []string{"T3"}, "SELECT COUNT(*), SUM(a), MAX(c), AVG(b) FROM T3 WHERE a > 100"},
	{"agg-having-complex", both, []string{"T5"}, "SELECT d, SUM(e) AS s FROM T5 GROUP BY d HAVING COUNT(DISTINCT h) > 1 AND SUM(e) < 60"},
	{"agg-first-last", streaming, []string{"T3"}, "SELECT b, FIRST_VALUE(c), LAST_VALUE(c), FIRST_VALUE(a), LAST_VALUE(a) FROM T3 GROUP BY b"},
	{"agg-bool", both, []string{"T5"}, "SELECT d, BOOL_AND(f > 2), BOOL_OR(h = 3) FROM T5 GROUP BY d"},
	{"agg-count-distinct-multi", both, []string{"T5"}, "SELECT h, COUNT(DISTINCT d, f), COUNT(DISTINCT g) FROM T5 GROUP BY h"},
	{"agg-retract-max", streaming, []string{"T3"}, "SELECT cnt, MAX(b), MIN(b) FROM (SELECT b, COUNT(*) AS cnt FROM T3 GROUP BY b) GROUP BY cnt"},
	{"agg-collect", batch, []string{"T5"}, "SELECT d, COLLECT(h) FROM T5 WHERE d < 4 GROUP BY d"},
	// JoinITCase.
	{"join-inner-where", both, []string{"S3", "T5"}, "SELECT c, g FROM S3, T5 WHERE a = d AND b < h"},
	{"join-left-nonequi", both, []string{"S3", "T5"}, "SELECT c, g FROM S3 LEFT JOIN T5 ON a = d AND b < e"},
	{"join-right", both, []string{"S3", "T5"}, "SELECT c, g FROM S3 RIGHT JOIN T5 ON a = d WHERE e < 6"},
	{"join-full", both, []string{"S3", "T5"}, "SELECT c, g, d FROM S3 FULL OUTER JOIN T5 ON b = e AND a < 3"},
	{"join-full-nonequi", batch, []string{"S3", "T5"}, "SELECT c, g FROM S3 FULL JOIN T5 ON a = d AND b > f"},
	{"join-multi-key", both, []string{"T3", "T5"}, "SELECT c, g FROM T3 JOIN T5 ON a = d AND b = h"},
	{"join-agg-inputs", both, []string{"T3", "T5"}, "SELECT x.b, x.cnt, y.s FROM (SELECT b, COUNT(*) AS cnt FROM T3 GROUP BY b) x JOIN (SELECT h, SUM(e) AS s FROM T5 GROUP BY h) y ON x.b = y.h"},
	{"join-left-agg", both, []string{"T3", "T5"}, "SELECT d, COUNT(c) FROM T5 LEFT JOIN T3 ON d = a AND a < 3 GROUP BY d"},
	{"join-self-three", batch, []string{"S3"}, "SELECT x.a, y.a, z.c FROM S3 x JOIN S3 y ON x.a = y.b JOIN S3 z ON y.a = z.a"},
	{"join-nulls", both, []string{"N", "S3"}, "SELECT N.a, N.c, S3.c FROM N LEFT JOIN S3 ON N.b = S3.b"},
	{"join-expr-key", both, []string{"S3", "T5"}, "SELECT a, d, g FROM S3 JOIN T5 ON a + 1 = d"},
	{"join-type-key", both, []string{"S3", "T5"}, "SELECT a, e, g FROM S3 JOIN T5 ON a = e"},
	{"join-cross", batch, []string{"S3", "R"}, "SELECT a, category FROM S3 CROSS JOIN (SELECT DISTINCT category FROM R)"},
	// SemiAntiJoinITCase.
	{"semi-in", both, []string{"T3", "T5"}, "SELECT a, c FROM T3 WHERE a IN (SELECT d FROM T5 WHERE h = 3)"},
	{"anti-not-in", both, []string{"S3", "N"}, "SELECT a, c FROM S3 WHERE a NOT IN (SELECT a FROM N WHERE a < 2)"},
	{"anti-not-in-null", batch, []string{"S3", "N"}, "SELECT a, c FROM S3 WHERE b NOT IN (SELECT b FROM N)"},
	{"semi-exists", both, []string{"T3", "T5"}, "SELECT a, c FROM T3 WHERE EXISTS (SELECT * FROM T5 WHERE d = a AND e > 12)"},
	{"anti-not-exists", both, []string{"T3", "T5"}, "SELECT a FROM T3 WHERE NOT EXISTS (SELECT * FROM T5 WHERE d = a)"},
	{"semi-exists-nonequi", both, []string{"S3", "T5"}, "SELECT a, c FROM S3 WHERE EXISTS (SELECT * FROM T5 WHERE e < a)"},
	{"semi-in-multi", both, []string{"T3", "T5"}, "SELECT a, b FROM T3 WHERE (a, b) IN (SELECT d, h FROM T5)"},
	{"semi-in-agg", both, []string{"T3", "T5"}, "SELECT b, COUNT(*) FROM T3 WHERE a IN (SELECT d FROM T5 GROUP BY d HAVING COUNT(*) > 2) GROUP BY b"},
	// WindowAggregateITCase.
	{"win-tumble", both, []string{"W"}, "SELECT name, window_start, window_end, COUNT(*), SUM(d), MAX(f), COUNT(DISTINCT s) FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end"},
	{"win-hop", both, []string{"W"}, "SELECT name, window_start, window_end, COUNT(*), SUM(bd), MIN(i) FROM TABLE(HOP(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY name, window_start, window_end"},
	{"win-cumulate", both, []string{"W"}, "SELECT name, window_start, window_end, COUNT(*), SUM(i), LISTAGG(s) FROM TABLE(CUMULATE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) GROUP BY name, window_start, window_end"},
	{"win-tumble-filter", streaming, []string{"W"}, "SELECT name, window_end, COUNT(*) FILTER (WHERE i > 2), AVG(d), window_time FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end, window_time"},
	{"win-tumble-cascade", streaming, []string{"W"}, "WITH w5 AS (SELECT name, window_time AS rt, COUNT(*) AS cnt FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end, window_time) SELECT window_start, window_end, SUM(cnt) FROM TABLE(TUMBLE(TABLE w5, DESCRIPTOR(rt), INTERVAL '10' SECOND)) GROUP BY window_start, window_end"},
	{"win-session", streaming, []string{"W"}, "SELECT name, window_start, window_end, COUNT(*), SUM(i) FROM TABLE(SESSION(TABLE W PARTITION BY name, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end"},
	{"win-topn", streaming, []string{"W"}, "SELECT * FROM (SELECT name, window_start, window_end, cnt, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY cnt DESC) AS rn FROM (SELECT name, window_start, window_end, COUNT(*) AS cnt FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end)) WHERE rn <= 1"},
	{"win-dedup", streaming, []string{"W"}, "SELECT name, i, s, window_start FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY ts DESC) AS rn FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND))) WHERE rn = 1"},
	{"win-tvf-plain", streaming, []string{"W"}, "SELECT name, i, window_start, window_end FROM TABLE(HOP(TABLE W, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '20' SECOND)) WHERE i > 4"},
	{"win-join", streaming, []string{"W"}, "SELECT L.name, L.window_start, L.cnt, R.cnt FROM (SELECT name, window_start, window_end, COUNT(*) AS cnt FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end) L JOIN (SELECT name, window_start, window_end, COUNT(*) AS cnt FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) WHERE i > 2 GROUP BY name, window_start, window_end) R ON L.name = R.name AND L.window_start = R.window_start AND L.window_end = R.window_end"},
	// GroupWindowITCase (legacy group windows).
	{"gw-tumble-many", both, []string{"W"}, "SELECT name, TUMBLE_START(ts, INTERVAL '5' SECOND), TUMBLE_END(ts, INTERVAL '5' SECOND), TUMBLE_ROWTIME(ts, INTERVAL '5' SECOND), COUNT(*), SUM(i), AVG(d), MIN(bd), COUNT(DISTINCT s) FROM W GROUP BY name, TUMBLE(ts, INTERVAL '5' SECOND)"},
	{"gw-hop-distinct", streaming, []string{"W"}, "SELECT HOP_START(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND), COUNT(DISTINCT name), SUM(i) FROM W GROUP BY HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)"},
	{"gw-session-name", streaming, []string{"W"}, "SELECT name, SESSION_START(ts, INTERVAL '3' SECOND), SESSION_END(ts, INTERVAL '3' SECOND), COUNT(*), MAX(i) FROM W GROUP BY name, SESSION(ts, INTERVAL '3' SECOND)"},
	// OverAggregateITCase.
	{"over-rows-unbounded", streaming, []string{"RT"}, "SELECT a, b, c, COUNT(*) OVER w, SUM(b) OVER w, MIN(c) OVER w FROM RT WINDOW w AS (PARTITION BY a ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"},
	{"over-rows-bounded", streaming, []string{"RT"}, "SELECT a, b, SUM(b) OVER (PARTITION BY a ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), AVG(b) OVER (PARTITION BY a ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM RT"},
	{"over-range-bounded", streaming, []string{"RT"}, "SELECT a, b, c, COUNT(c) OVER (PARTITION BY c ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW), MAX(a) OVER (PARTITION BY c ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW) FROM RT"},
	{"over-no-partition", streaming, []string{"RT"}, "SELECT a, b, SUM(a) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), LISTAGG(c) OVER (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM RT"},
	{"over-distinct", streaming, []string{"RT"}, "SELECT a, b, COUNT(DISTINCT c) OVER (PARTITION BY a ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM RT"},
	{"over-lag-rownum", streaming, []string{"RT"}, "SELECT a, b, ROW_NUMBER() OVER w, LAG(b, 1) OVER w, LAG(c, 2, 'none') OVER w FROM RT WINDOW w AS (PARTITION BY a ORDER BY ts)"},
	{"over-batch-rank", batch, []string{"T5"}, "SELECT d, e, RANK() OVER (PARTITION BY d ORDER BY h), DENSE_RANK() OVER (PARTITION BY d ORDER BY h), SUM(e) OVER (PARTITION BY d ORDER BY e ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM T5"},
	// RankITCase.
	{"rank-topn", both, []string{"R"}, "SELECT * FROM (SELECT category, shopId, num, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num DESC) AS rank_num FROM R) WHERE rank_num <= 2"},
	{"rank-topn-norank", both, []string{"R"}, "SELECT category, shopId, num FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num) AS rk FROM R) WHERE rk <= 3"},
	{"rank-rank-fn", both, []string{"R"}, "SELECT * FROM (SELECT category, shopId, num, RANK() OVER (PARTITION BY shopId ORDER BY category) AS rk FROM R) WHERE rk <= 1"},
	{"rank-dense", batch, []string{"T5"}, "SELECT * FROM (SELECT d, h, e, DENSE_RANK() OVER (PARTITION BY d ORDER BY h DESC) AS rk FROM T5) WHERE rk <= 2"},
	{"rank-updating-input", streaming, []string{"R"}, "SELECT * FROM (SELECT category, total, ROW_NUMBER() OVER (ORDER BY total DESC) AS rn FROM (SELECT category, SUM(num) AS total FROM R GROUP BY category)) WHERE rn <= 1"},
	{"rank-topn-offset", both, []string{"R"}, "SELECT * FROM (SELECT category, shopId, num, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num DESC) AS rn FROM R) WHERE rn > 1 AND rn <= 3"},
	// DeduplicateITCase.
	{"dedup-first-rowtime", streaming, []string{"RT"}, "SELECT a, b, c FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY ts ASC) AS rn FROM RT) WHERE rn = 1"},
	{"dedup-last-rowtime", streaming, []string{"RT"}, "SELECT a, b, c FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY ts DESC) AS rn FROM RT) WHERE rn = 1"},
	{"dedup-last-batch", batch, []string{"RT"}, "SELECT a, b, c, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY c ORDER BY ts DESC) AS rn FROM RT) WHERE rn = 1"},
	// SetOperatorsITCase, UnionITCase.
	{"set-union", both, []string{"S3", "T5"}, "SELECT c FROM S3 UNION SELECT g FROM T5 WHERE d < 3"},
	{"set-union-all-types", streaming, []string{"S3", "T5"}, "SELECT a, c FROM S3 UNION ALL SELECT f, g FROM T5 WHERE d = 2"},
	{"set-intersect-all", batch, []string{"T3", "T5"}, "SELECT b FROM T3 INTERSECT ALL SELECT h FROM T5"},
	{"set-except-all", batch, []string{"T3", "T5"}, "SELECT b FROM T3 EXCEPT ALL SELECT h FROM T5"},
	{"set-in-large-values", streaming, []string{"T3"}, "SELECT a, c FROM T3 WHERE c IN ('Hi', 'Hello', 'Comment#3', 'Comment#7', 'Comment#11', 'Comment#15', 'Luke Skywalker', 'x', 'y', 'z', 'w', 'v', 'u', 't', 's', 'r', 'q', 'p', 'o', 'n', 'm')"},
	// UnnestITCase.
	{"unnest-array", both, []string{"A"}, "SELECT x, v FROM A CROSS JOIN UNNEST(arr) AS t(v)"},
	{"unnest-map", streaming, []string{"A"}, "SELECT x, k, v FROM A CROSS JOIN UNNEST(m) AS t(k, v)"},
	{"unnest-left", streaming, []string{"A"}, "SELECT x, v FROM A LEFT JOIN UNNEST(arr) AS t(v) ON TRUE"},
	{"unnest-ordinality", streaming, []string{"A"}, "SELECT x, v, o FROM A CROSS JOIN UNNEST(arr) WITH ORDINALITY AS t(v, o)"},
	{"unnest-split", streaming, []string{"A"}, "SELECT x, p FROM A CROSS JOIN UNNEST(SPLIT(s, ';')) AS t(p)"},
	{"unnest-agg", both, []string{"A"}, "SELECT x, SUM(v), COUNT(*) FROM A, UNNEST(arr) AS t(v) GROUP BY x"},
	{"unnest-values-array", streaming, []string{"S3"}, "SELECT * FROM UNNEST(ARRAY[1, 2, 3]) AS t(v)"},
	// IntervalJoinITCase, TemporalJoinITCase-style and mixed queries.
	{"ijoin-between", streaming, []string{"RT"}, "SELECT L.a, L.b, R.b FROM RT L JOIN RT R ON L.a = R.a AND L.ts BETWEEN R.ts - INTERVAL '1' SECOND AND R.ts AND L.b <> R.b"},
	{"ijoin-left", streaming, []string{"RT", "W"}, "SELECT RT.a, RT.c, W.s FROM RT LEFT JOIN W ON RT.c = W.s AND RT.ts BETWEEN W.ts - INTERVAL '2' SECOND AND W.ts + INTERVAL '2' SECOND"},
	{"ijoin-agg", streaming, []string{"RT"}, "SELECT L.a, COUNT(*) FROM RT L, RT R WHERE L.a = R.a AND L.ts >= R.ts AND L.ts < R.ts + INTERVAL '3' SECOND GROUP BY L.a"},
	{"win-offset", streaming, []string{"W"}, "SELECT window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '3' SECOND)) GROUP BY window_start, window_end"},
	{"win-cumulate-distinct", streaming, []string{"W"}, "SELECT window_start, window_end, COUNT(DISTINCT name), SUM(DISTINCT i), MAX(s) FROM TABLE(CUMULATE(TABLE W, DESCRIPTOR(ts), INTERVAL '4' SECOND, INTERVAL '12' SECOND)) GROUP BY window_start, window_end"},
	{"win-having-expr", streaming, []string{"W"}, "SELECT name, window_end, SUM(i) * 2 AS s2, CAST(AVG(d) AS INT) FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY name, window_start, window_end HAVING SUM(i) > 3"},
	{"agg-distinct-updating", streaming, []string{"T3"}, "SELECT DISTINCT cnt FROM (SELECT b, COUNT(*) AS cnt FROM T3 GROUP BY b)"},
	{"agg-case-over-agg", both, []string{"T5"}, "SELECT d, CASE WHEN SUM(e) > 20 THEN 'big' ELSE 'small' END, MAX(e) - MIN(e), COUNT(*) * 10 / SUM(h) FROM T5 GROUP BY d"},
	{"agg-join-updating", streaming, []string{"T3", "T5"}, "SELECT x.b, x.s, y.c FROM (SELECT b, SUM(a) AS s FROM T3 GROUP BY b) x LEFT JOIN (SELECT h, COUNT(*) AS c FROM T5 GROUP BY h) y ON x.b = y.h"},
	{"nested-subquery", batch, []string{"T3", "T5"}, "SELECT a, c FROM T3 WHERE b IN (SELECT h FROM T5 WHERE d IN (SELECT a FROM T3 WHERE a < 4))"},
	{"exists-agg-corr", batch, []string{"T3", "T5"}, "SELECT d, g FROM T5 WHERE EXISTS (SELECT 1 FROM T3 WHERE T3.b = T5.h AND T3.a > 15)"},
	{"union-agg", both, []string{"T3", "T5"}, "SELECT k, SUM(v) FROM (SELECT b AS k, a AS v FROM T3 UNION ALL SELECT h AS k, f AS v FROM T5) GROUP BY k"},
	{"dedup-proctime-like", streaming, []string{"T3"}, "SELECT b, c FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a DESC) AS rn FROM T3) WHERE rn = 1"},
	{"rank-window-agg", streaming, []string{"W"}, "SELECT * FROM (SELECT window_start, name, SUM(i) AS si, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY SUM(i) DESC) AS rn FROM TABLE(TUMBLE(TABLE W, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, name) WHERE rn <= 2"},
	{"over-range-unbounded-ts", streaming, []string{"W"}, "SELECT name, i, SUM(i) OVER (PARTITION BY name ORDER BY ts RANGE UNBOUNDED PRECEDING), COUNT(s) OVER (PARTITION BY name ORDER BY ts RANGE UNBOUNDED PRECEDING) FROM W"},
	{"calc-cast-overflow", streaming, []string{"T5"}, "SELECT CAST(e * 100 AS TINYINT), CAST(f AS SMALLINT) * 3000, CAST(g AS INT), TRY_CAST(g AS INT) FROM T5 WHERE d = 5"},
	{"calc-coalesce-types", streaming, []string{"N"}, "SELECT COALESCE(a, b), COALESCE(CAST(a AS DOUBLE), 0.5), CASE WHEN a > 2 THEN b END, GREATEST(a, 3), LEAST(b, 2) FROM N"},
	{"sort-topn-agg-batch", batch, []string{"W"}, "SELECT name, COUNT(*) AS n FROM W GROUP BY name ORDER BY n DESC, name LIMIT 2"},
	// Sort / limit (SortLimitITCase, batch SortITCase).
	{"sort-limit", batch, []string{"T3"}, "SELECT a, c FROM T3 ORDER BY b DESC, a LIMIT 5"},
	{"sort-offset", batch, []string{"T5"}, "SELECT d, e FROM T5 ORDER BY e DESC OFFSET 3 ROWS FETCH NEXT 4 ROWS ONLY"},
	{"sort-limit-stream", streaming, []string{"T3"}, "SELECT a, b FROM T3 ORDER BY a DESC LIMIT 3"},
	{"sort-agg-hidden", both, []string{"T3"}, "SELECT b, COUNT(*) FROM T3 GROUP BY b ORDER BY SUM(a) DESC LIMIT 2"},
	{"sort-union-ordinal", batch, []string{"S3", "T5"}, "SELECT a, c FROM S3 UNION ALL SELECT d, g FROM T5 ORDER BY 1 DESC, 2 LIMIT 4"},
	{"sort-subquery", streaming, []string{"T3"}, "SELECT b, cnt FROM (SELECT b, COUNT(*) AS cnt FROM T3 GROUP BY b ORDER BY cnt DESC, b LIMIT 3) WHERE b <> 6"},
	{"sort-star-expr", streaming, []string{"T5"}, "SELECT * FROM T5 ORDER BY e * -1 LIMIT 3"},
}

func itcaseCases() []genCase {
	var out []genCase
	for _, q := range itcaseQueries {
		for _, mode := range q.modes {
			lines, data := readTables(q.tables, itTables)
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

package conformance

import (
	"fmt"
	"strings"
)

// More of Flink's stream AggregateITCase (runtime/stream/sql): empty
// inputs, MAX and MIN retracted under a filter, DISTINCT aggregates of
// expressions, of many types, over retractions, with NULLs and more than
// 64 of them, DECIMAL SUM and AVG precision (a changelog source's
// retractions too), COUNT of IF, nested GROUP BYs, a group window under
// an unbounded aggregate, LISTAGG over retractions, NULLs and DISTINCT,
// and a scalar subquery's single value.
//
// Adapted for the case format: the user-defined aggregates
// (CntNullNonNull) become COUNT, the 100 filtered COUNT(DISTINCT) of
// testDistinctAggregateMoreThan64 are 70 over a smaller table, and
// testPrecisionForSumWithRetractAggregationOnDecimal's changelog is
// debezium-json keyed by a row number.

func init() { areaCases = append(areaCases, itcaseAgg29Cases) }

// The (a, b, c) rows most of the ITCase's tests share.
var itGBData = [][]any{
	{1, 1, "A"}, {2, 2, "B"}, {3, 2, "B"}, {4, 3, "C"}, {5, 3, "C"}, {6, 3, "C"},
	{7, 4, "B"}, {8, 4, "A"}, {9, 4, "D"}, {10, 4, "E"}, {11, 5, "A"}, {12, 5, "B"},
}

// itMoreThan64 is testDistinctAggregateMoreThan64's (a, b) for b < n.
func itMoreThan64(n int) ([][]any, string) {
	var rows [][]any
	for i := 0; i < n; i++ {
		for j := 0; j < n-i; j++ {
			rows = append(rows, []any{j, i})
		}
	}
	var aggs []string
	for i := 0; i < n; i++ {
		aggs = append(aggs, fmt.Sprintf("COUNT(DISTINCT a) FILTER (WHERE b = %d)", i))
	}
	return rows, "SELECT " + strings.Join(aggs, ", ") + " FROM M64"
}

const itDecimalCDC = `{"before":null,"after":{"id":1,"a":1.03520274,"b":12345.035202748654,"c":12.345678901234567,"d":"a"},"op":"c"}
{"before":null,"after":{"id":2,"a":1.03520274,"b":12345.035202748654,"c":12.345678901234567,"d":"b"},"op":"c"}
{"before":{"id":2,"a":1.03520274,"b":12345.035202748654,"c":12.345678901234567,"d":"b"},"after":null,"op":"d"}
{"before":null,"after":{"id":3,"a":2.13520275,"b":21245.542202748654,"c":242.78594201234567,"d":"a"},"op":"c"}
{"before":null,"after":{"id":4,"a":1.11111111,"b":11111.111111111111,"c":111.11111111111111,"d":"b"},"op":"c"}
{"before":null,"after":{"id":5,"a":1.11111111,"b":11111.111111111111,"c":111.11111111111111,"d":"a"},"op":"c"}
{"before":{"id":4,"a":1.11111111,"b":11111.111111111111,"c":111.11111111111111,"d":"b"},"after":null,"op":"d"}
{"before":null,"after":{"id":6,"a":2.13520275,"b":21245.542202748654,"c":242.78594201234567,"d":"a"},"op":"c"}
`

func itAgg29Tables() map[string][2]string {
	m64, _ := itMoreThan64(70)
	ints := []any{1, 2, nil, 4, 5, 6, 7, nil, nil, 10, 11, 11, 13, 14, 15}
	ids := []int{1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5}
	chars := []any{"A", "B", nil, "D", "E", "F", "H", nil, nil, "K", "L", "L", "N", "O", "P"}
	var cd [][]any
	for i, v := range ints {
		if v == nil {
			cd = append(cd, []any{ids[i], nil, nil, nil, nil, nil, nil, nil})
			continue
		}
		n := v.(int)
		cd = append(cd, []any{ids[i], fmt.Sprintf("1970-01-01 00:00:%02d", n), fmt.Sprintf("1970-01-%02d", n), fmt.Sprintf("00:00:%02d", n), n, n, n, chars[i]})
	}
	// The ITCase shuffles them.
	perm := []int{7, 3, 12, 0, 9, 14, 5, 1, 11, 4, 8, 13, 2, 10, 6}
	shuffled := make([][]any, len(cd))
	for i, p := range perm {
		shuffled[i] = cd[p]
	}
	var t5rt [][]any
	for _, r := range itTupleData5 {
		t5rt = append(t5rt, []any{fmt.Sprintf("1970-01-01 00:00:00.%03d", r[1]), r[0], r[2], r[3], r[4]})
	}
	return map[string][2]string{
		"T":  {"table: T (a INT, b INT) json", itJSON([]string{"a", "b"}, [][]any{{1, 1}, {2, 2}, {3, 3}})},
		"MX": {"table: MX (id INT, price INT) json", itJSON([]string{"id", "price"}, [][]any{{1, 10}, {1, 10}, {2, 5}, {1, 10}})},
		"MN": {"table: MN (id INT, price INT) json", itJSON([]string{"id", "price"}, [][]any{{1, 5}, {2, 6}, {1, 5}})},
		"GB": {"table: GB (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, itGBData)},
		"GR": {"table: GR (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, append([][]any{{1, 1, "A"}, {1, 1, "A"}}, itGBData...))},
		"GN": {"table: GN (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, [][]any{
			{1, 1, "A"}, {2, 2, "B"}, {3, 2, "B"}, {4, 3, "C"}, {5, 3, "C"}, {6, 3, nil}, {7, 3, "C"}, {8, 4, "B"}, {9, 4, nil},
			{10, 4, nil}, {11, 4, "A"}, {12, 4, "D"}, {13, 4, nil}, {14, 4, "E"}, {15, 5, "A"}, {16, 5, nil}, {17, 5, "B"}})},
		"GD": {"table: GD (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, [][]any{
			{1, 1, "A"}, {2, 2, "B"}, {3, 2, "B"}, {4, 3, "C"}, {5, 3, "C"}, {6, 3, "A"}, {7, 4, "EF"}, {1, 1, "A"}, {8, 4, "EF"}, {8, 4, nil}})},
		"CD": {"table: CD (id INT, a TIMESTAMP(3), b DATE, c TIME(0), d DECIMAL(38, 18), e INT, f BIGINT, g STRING) json",
			itJSON([]string{"id", "a", "b", "c", "d", "e", "f", "g"}, shuffled)},
		"M64": {"table: M64 (a INT, b INT) json", itJSON([]string{"a", "b"}, m64)},
		"DS":  {"table: DS (a DOUBLE) json", "{\"a\":1.11111111}\n{\"a\":1.11111111}\n"},
		"DA":  {"table: DA (a DOUBLE) json", "{\"a\":2.22222222}\n{\"a\":3.33333333}\n"},
		"DC":  {"table: DC (id INT, a DECIMAL(32, 8), b DECIMAL(32, 20), c DECIMAL(32, 20), d STRING) debezium-json key id", itDecimalCDC},
		"T5R": {"table: T5R (rt TIMESTAMP(3), a INT, c INT, d STRING, e BIGINT) json watermark rt AS rt",
			itJSON([]string{"rt", "a", "c", "d", "e"}, t5rt)},
		"LX":  {"table: LX (x STRING, y STRING) json", itJSON([]string{"x", "y"}, [][]any{{"1", "a"}, {"1", "b"}, {"1", nil}, {"1", "a"}})},
		"LNL": {"table: LNL (id INT, len INT, content STRING) json", itJSON([]string{"id", "len", "content"}, [][]any{{1, 1, nil}, {2, 1, nil}, {3, 1, nil}})},
		"SV": {"table: SV (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, [][]any{
			{1, 1, "A"}, {2, 2, "B"}, {3, 2, "B"}, {4, 3, "C"}, {5, 3, "C"}, {6, 3, "C"}, {6, 3, "C"}, {6, 3, "C"}, {6, 3, "C"}, {6, 3, "C"},
			{6, 3, "C"}, {6, 3, "C"}, {6, 3, "C"}, {7, 4, "B"}, {8, 4, "A"}, {9, 4, "D"}, {10, 4, "E"}, {11, 5, "A"}, {12, 5, "B"}})},
		// SV again: a scalar subquery over another source than the
		// query's, so the join reads it first (build-input-first); over
		// the same source both engines' changelogs depend on timing.
		"SV2": {"table: SV2 (a INT, b BIGINT, c STRING) json", itJSON([]string{"a", "b", "c"}, [][]any{
			{1, 1, "A"}, {2, 2, "B"}, {3, 2, "B"}, {4, 3, "C"}, {5, 3, "C"}, {6, 3, "C"}, {6, 3, "C"}, {6, 3, "C"}, {6, 3, "C"}, {6, 3, "C"},
			{6, 3, "C"}, {6, 3, "C"}, {6, 3, "C"}, {7, 4, "B"}, {8, 4, "A"}, {9, 4, "D"}, {10, 4, "E"}, {11, 5, "A"}, {12, 5, "B"}})},
	}
}

func itcaseAgg29Queries() []struct {
	name   string
	tables []string
	query  string
} {
	_, q64 := itMoreThan64(70)
	return []struct {
		name   string
		tables []string
		query  string
	}{
		{"agg-empty-input", []string{"T"}, "SELECT SUM(a), AVG(a), MIN(a), COUNT(a), COUNT(1) FROM T WHERE a > 9999 GROUP BY b"},
		{"agg-without-group", []string{"T"}, "SELECT SUM(a), AVG(a), MIN(a), COUNT(a), COUNT(1) FROM T"},
		{"agg-max-retract-filter", []string{"MX"}, "SELECT MAX(price) FROM (SELECT id, COUNT(*) AS c, price FROM MX GROUP BY id, price) WHERE c > 0 AND c < 3"},
		{"agg-min-retract-filter", []string{"MN"}, "SELECT MIN(price) FROM (SELECT id, COUNT(*) AS c, price FROM MN GROUP BY id, price) WHERE c < 2"},
		{"agg-distinct-exprs", []string{"T3"}, "SELECT b, SUM(DISTINCT (a * 3)), COUNT(DISTINCT SUBSTRING(c FROM 1 FOR 2)), COUNT(DISTINCT c) FROM T3 GROUP BY b"},
		{"agg-count-distinct-types", []string{"CD"}, "SELECT id, COUNT(DISTINCT a), COUNT(DISTINCT b), COUNT(DISTINCT c), COUNT(DISTINCT d), COUNT(DISTINCT e), COUNT(DISTINCT f), COUNT(DISTINCT g) FROM CD GROUP BY id"},
		{"agg-distinct-retract", []string{"GR"}, "SELECT COUNT(DISTINCT cnt), SUM(DISTINCT cnt), MAX(DISTINCT cnt), MIN(DISTINCT cnt), AVG(DISTINCT cnt), COUNT(DISTINCT max_a) FROM (SELECT b, COUNT(a) AS cnt, MAX(a) AS max_a FROM GR GROUP BY b)"},
		{"agg-distinct-more-than-64", []string{"M64"}, q64},
		{"agg-distinct-nulls", []string{"GN"}, "SELECT b, COUNT(*), COUNT(DISTINCT c), COUNT(c) FROM GN GROUP BY b"},
		{"agg-decimal-sum-precision", []string{"T"}, "SELECT SUM(CAST(1.03520274 AS DECIMAL(32, 8))), SUM(CAST(12345.035202748654 AS DECIMAL(30, 20))), SUM(CAST(12.345678901234567 AS DECIMAL(25, 22))) FROM T WHERE a = 1"},
		{"agg-decimal-sum-cast", []string{"DS"}, "SELECT SUM(CAST(a AS DECIMAL(32, 8))) FROM DS"},
		{"agg-decimal-sum-retract", []string{"DC"}, "SELECT SUM(a), SUM(b), SUM(c) FROM DC GROUP BY d"},
		{"agg-decimal-avg-precision", []string{"T"}, "SELECT AVG(CAST(1.03520274 AS DECIMAL(32, 8))), AVG(CAST(12345.035202748654 AS DECIMAL(30, 20))), AVG(CAST(12.345678901234567 AS DECIMAL(25, 22))) FROM T WHERE a = 1"},
		{"agg-decimal-avg-cast", []string{"DA"}, "SELECT AVG(CAST(a AS DECIMAL(32, 8))) FROM DA"},
		{"agg-count-if", []string{"GB"}, "SELECT b, COUNT(1), COUNT(IF(c IN ('A', 'B'), CAST(NULL AS INTEGER), 1)) AS cnt, COUNT(IF(c NOT IN ('A', 'B'), 1, CAST(NULL AS INTEGER))) AS cnt1 FROM GB GROUP BY b"},
		{"agg-nested-group-by", []string{"GB"}, "SELECT SUM(b), COUNT(a), MAX(a), MIN(a), c FROM (SELECT b, COUNT(c) AS c, SUM(a) AS a FROM GB GROUP BY b) GROUP BY c"},
		{"agg-window-then-unbounded", []string{"T5R"}, "SELECT c, MAX(a), COUNT(DISTINCT d) FROM (SELECT a, SUM(DISTINCT e) AS b, MIN(DISTINCT e) AS c, COUNT(DISTINCT e) AS d FROM T5R GROUP BY a, TUMBLE(rt, INTERVAL '0.005' SECOND)) GROUP BY c"},
		{"agg-listagg-retract", []string{"LX"}, "SELECT x, '[' || LISTAGG(CONCAT_WS('=', y, ct), ';') || ']' AS list1, '[' || LISTAGG(CONCAT_WS('=', y, ct)) || ']' AS list2 FROM (SELECT x, y, CAST(COUNT(1) AS VARCHAR) AS ct FROM LX GROUP BY x, y) GROUP BY x"},
		{"agg-listagg-nulls", []string{"LNL"}, "SELECT len, LISTAGG(content, '#'), LISTAGG(content) FROM LNL GROUP BY len"},
		{"agg-listagg-distinct", []string{"GD"}, "SELECT b, LISTAGG(DISTINCT c, '#') FROM GD GROUP BY b"},
		{"agg-single-value", []string{"SV", "SV2"}, "SELECT * FROM SV WHERE SV.a < (SELECT COUNT(*) * 0.3 FROM SV2)"},
	}
}

func itcaseAgg29Cases() []genCase {
	tables := itAgg29Tables()
	var out []genCase
	for _, q := range itcaseAgg29Queries() {
		lines, data := readTables(q.tables, tables, itTables)
		h := append([]string{"mode: streaming"}, lines...)
		out = append(out, genCase{name: "itcase29-" + q.name, header: h, query: q.query, data: data})
	}
	return out
}

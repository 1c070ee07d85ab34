package conformance

import (
	"fmt"
	"strings"
)

// The expression area's cases: functions and types of Flink 2.3 that etld
// gained, each a case over the shared table t (or a small table of its
// own), recorded on Flink.

func init() { areaCases = append(areaCases, exprAreaCases) }

// tableJN holds JSON numbers whose text a double would change.
const (
	tableJN = "table: jn (id INT, p STRING) json"
	dataJN  = `{"id":1,"p":"{\"x\":123456789.98765433,\"y\":1.5e3,\"z\":100.10}"}
{"id":2,"p":"{\"x\":0.0000001,\"y\":-0.0,\"z\":12345678901234567890}"}
{"id":3,"p":"{\"x\":7,\"y\":-2.5,\"z\":1E2}"}
`
)

// jsonRows2 writes rows {"id":n,"a":..,"b":..} of two columns' texts.
func jsonRows2(a, b string, values ...[2]string) string {
	var out strings.Builder
	for i, v := range values {
		fmt.Fprintf(&out, "{\"id\":%d,\"%s\":%s,\"%s\":%s}\n", i+1, a, v[0], b, v[1])
	}
	return out.String()
}

// tableJF holds arrays of objects for JSON path filters.
const (
	tableJF = "table: jf (id INT, p STRING) json"
	dataJF  = `{"id":1,"p":"{\"items\":[{\"p\":1,\"n\":\"a\"},{\"p\":3,\"n\":\"b\"},{\"p\":5,\"n\":\"c\"}]}"}
{"id":2,"p":"{\"items\":[]}"}
{"id":3,"p":"{\"other\":1}"}
`
)

var exprAreaExprs = []struct {
	name  string
	exprs []string
}{
	{"extract-fraction", []string{"EXTRACT(MILLISECOND FROM ts)", "EXTRACT(MICROSECOND FROM ts)", "EXTRACT(NANOSECOND FROM ts)"}},
	{"json-nest-array", []string{"JSON_OBJECT(KEY 'a' VALUE ARRAY[i, 2])", "JSON_ARRAY(ARRAY[s, 'x'], ARRAY[ARRAY[1], ARRAY[2, 3]])"}},
	{"json-nest-map-row", []string{"JSON_OBJECT(KEY 'm' VALUE MAP['k', i])", "JSON_ARRAY(MAP['a', ARRAY[b]])", "JSON_OBJECT(KEY 'r' VALUE CAST(ROW(i, s) AS ROW<n INT, t STRING>))"}},
	{"translate", []string{"TRANSLATE(s, 'lo', 'x')", "TRANSLATE(s, 'Hd', 'hD')", "TRANSLATE(s, ' ', '')"}},
	{"elt", []string{"ELT(id, s, 'x', 'y')", "ELT(i, 'a', 'b')"}},
	{"regexp-extract-all", []string{"REGEXP_EXTRACT_ALL(s, '(\\w)(\\w)', 1)", "REGEXP_EXTRACT_ALL(s, 'o', 0)", "REGEXP_EXTRACT_ALL(s, '(l+)')"}},
	{"row-constructor", []string{"(i, s)", "CAST((i, s) AS ROW<a INT, b STRING>)['b']", "CAST((i, s) AS ROW<a INT, b STRING>)[1]"}},
	{"collection-search", []string{"ARRAY_CONTAINS(ARRAY[i, 1], 0)", "ARRAY_CONTAINS(ARRAY[i, 1], i)", "ARRAY_POSITION(ARRAY[1, i, i], i)", "ARRAY_REMOVE(ARRAY[i, 1, i], i)", "ARRAY_APPEND(ARRAY[i], id)", "ARRAY_PREPEND(ARRAY[s], 'x')"}},
	{"collection-array", []string{"ARRAY_DISTINCT(ARRAY[i, id, i])", "ARRAY_REVERSE(ARRAY[i, id])", "ARRAY_MAX(ARRAY[i, id])", "ARRAY_MIN(ARRAY[s, 'b'])", "ARRAY_CONCAT(ARRAY[i], ARRAY[id, 7])"}},
	{"collection-join-map", []string{"ARRAY_JOIN(ARRAY[s, 'x', CAST(NULL AS STRING)], '-')", "ARRAY_JOIN(ARRAY[s, 'y'], ',', 'N')", "MAP_KEYS(MAP['k', i, 'j', id])", "MAP_VALUES(MAP['k', i, 'j', id])", "SPLIT(s, 'l')", "SPLIT(s, '')"}},
	{"affix-hex-bin", []string{"STARTSWITH(s, 'He')", "ENDSWITH(s, '')", "HEX(i)", "HEX(b)", "HEX(s)", "BIN(i)", "BIN(b)"}},
	{"url-code", []string{"URL_ENCODE(s)", "URL_DECODE(URL_ENCODE(s))", "URL_ENCODE('*~.-_ /')", "URL_DECODE('a+b%2Fc')"}},
	{"url-decode-bad", []string{"URL_DECODE('%zz')", "URL_DECODE('a%2')"}},
	{"parse-url", []string{"PARSE_URL(CONCAT('http://u@h.com:81/p/q?a=1&b=', s, '#r'), 'QUERY', 'b')", "PARSE_URL(CONCAT('https://h.com/', s), 'PATH')", "PARSE_URL('http://u@h.com:81/p?a=1#r', 'AUTHORITY')", "PARSE_URL('http://u@h.com:81/p?a=1#r', 'FILE')", "PARSE_URL('http://u@h.com:81/p?a=1#r', 'USERINFO')", "PARSE_URL('http://h.com', 'PATH')", "PARSE_URL('http://h.com', 'REF')", "PARSE_URL('h.com/x', 'HOST')"}},
	{"unhex-instr", []string{"UNHEX(HEX(s))", "UNHEX('F')", "UNHEX('zz')", "INSTR(s, 'o')", "INSTR(s, '日')", "INSTR(s, '')"}},
	{"regexp-search", []string{"REGEXP_COUNT(s, '[a-z]')", "REGEXP_INSTR(s, 'o')", "REGEXP_INSTR(s, '本')", "REGEXP_SUBSTR(s, '[a-z]+')", "REGEXP_COUNT(s, 'x*')"}},
	{"array-set", []string{"ARRAY_UNION(ARRAY[i, 1, i], ARRAY[id, 1])", "ARRAY_INTERSECT(ARRAY[1, 2, 2, id], ARRAY[2, id, 5])", "ARRAY_EXCEPT(ARRAY[1, 2, 1, id, id], ARRAY[2])", "ARRAY_EXCEPT(ARRAY[i, 1], ARRAY[i])"}},
	{"array-slice", []string{"ARRAY_SLICE(ARRAY[1, 2, 3, 4], id)", "ARRAY_SLICE(ARRAY[1, 2, 3, 4], -id)", "ARRAY_SLICE(ARRAY[1, 2, 3, 4], 0, id - 2)", "ARRAY_SLICE(ARRAY[1, 2, 3, 4], id, 2)", "ARRAY_SLICE(ARRAY[1, 2, 3, 4], 2, -id)", "ARRAY_SLICE(ARRAY[1, 2, 3], i)"}},
	{"array-sort", []string{"ARRAY_SORT(ARRAY[i, 3, CAST(NULL AS INT), id])", "ARRAY_SORT(ARRAY[i, 3, CAST(NULL AS INT), id], FALSE)", "ARRAY_SORT(ARRAY[i, 3, CAST(NULL AS INT)], TRUE, FALSE)", "ARRAY_SORT(ARRAY[i, 3, CAST(NULL AS INT)], FALSE, TRUE)", "ARRAY_SORT(ARRAY[s, 'b', 'B'])"}},
	{"is-alpha-digit", []string{"IS_ALPHA(s)", "IS_DIGIT(s)", "IS_DIGIT(CAST(i AS STRING))", "IS_ALPHA(SUBSTRING(s, 1, 3))", "IS_ALPHA('')"}},
	{"json-quote", []string{"JSON_QUOTE(s)", "JSON_QUOTE(CONCAT(s, '\"/\\', CHR(9), CHR(1)))", "JSON_UNQUOTE(JSON_QUOTE(s))", "JSON_UNQUOTE('\"a\\u0041\\/\"')", "JSON_UNQUOTE('\"bad\\x\"')", "JSON_UNQUOTE(s)"}},
	{"map-entries", []string{"MAP_ENTRIES(MAP['k', i, 'j', id])", "MAP_ENTRIES(MAP[s, id, 'a', i])", "MAP_ENTRIES(CAST(NULL AS MAP<STRING, INT>))"}},
	{"array-append-narrow", []string{"ARRAY_APPEND(ARRAY[b, 1], i)", "ARRAY_PREPEND(ARRAY[m], id)", "ARRAY_APPEND(ARRAY[b], CAST(NULL AS INT))"}},
	{"array-append-widen", []string{"ARRAY_APPEND(ARRAY[i, 1], b)"}},
	{"similar-to", []string{"s SIMILAR TO 'Hello_World'", "s SIMILAR TO '(Hello|Hi) [A-Z]%'", "s NOT SIMILAR TO '%o{2,}%'", "s SIMILAR TO 'Hello.World'", "s SIMILAR TO '%!_%' ESCAPE '!'", "s SIMILAR TO CONCAT(SUBSTRING(s, 1, 2), '%')", "CAST(i AS STRING) SIMILAR TO '-?[0-9]+'", "'a$b\\c' SIMILAR TO 'a$b\\c'"}},
	{"split-empty", []string{"SPLIT('', ';')", "CARDINALITY(SPLIT('', ';'))", "SPLIT(SUBSTRING(s, 1, 0), ',')", "SPLIT(';', ';')", "SPLIT('', '')"}},
	{"json-nest-raw", []string{"JSON_ARRAY(ARRAY[JSON_OBJECT(KEY 'k' VALUE i)])", "JSON_OBJECT(KEY 'o' VALUE JSON_ARRAY(i, s))"}},
}

func exprAreaCases() []genCase {
	var out []genCase
	for _, e := range exprAreaExprs {
		out = append(out, genCase{name: "fn-" + e.name, header: []string{tableT}, query: exprQuery("t", e.exprs), data: map[string]string{"t": dataT}})
	}
	// TINYINT and SMALLINT: read, written and computed in their range.
	const smallCols = "id INT, x TINYINT, y SMALLINT"
	small := map[string]string{"ty": jsonRows2("x", "y", [2]string{"0", "0"}, [2]string{"-128", "-32768"}, [2]string{"127", "32767"}, [2]string{"100", "300"}, [2]string{"null", "null"})}
	smallTable := "table: ty (" + smallCols + ") json"
	out = append(out,
		genCase{name: "type-tinyint-smallint-print", header: []string{smallTable}, query: "SELECT * FROM ty", data: small},
		genCase{name: "type-tinyint-smallint-csv", header: []string{"mode: batch", smallTable, "sink: csv (" + smallCols + ")"}, query: "SELECT * FROM ty", data: small},
		genCase{name: "type-tinyint-smallint-json", header: []string{"mode: batch", smallTable, "sink: json (" + smallCols + ")"}, query: "SELECT * FROM ty", data: small},
		genCase{name: "fn-tinyint-arith", header: []string{smallTable}, query: "SELECT id, x + x, x * y, -x, x + 1, x % 3, x / 2, CAST(y AS TINYINT), ABS(x), x + 1.5 FROM ty", data: small},
		genCase{name: "fn-tinyint-cast", header: []string{tableT}, query: "SELECT id, CAST(i AS TINYINT), CAST(b AS SMALLINT), CAST(d AS TINYINT), CAST(m AS SMALLINT), TRY_CAST(s AS TINYINT), CAST(1000 AS TINYINT) FROM t", data: map[string]string{"t": dataT}},
		genCase{name: "type-tinyint-widen-union", header: []string{smallTable}, query: "SELECT x FROM ty UNION ALL SELECT y FROM ty UNION ALL SELECT id FROM ty", data: small},
		genCase{name: "type-tinyint-widen-setop", header: []string{"mode: batch", smallTable}, query: "SELECT x FROM ty INTERSECT SELECT y FROM ty", data: small},
		genCase{name: "type-tinyint-widen-join", header: []string{smallTable}, query: "SELECT a.id, b.id, a.x FROM ty a JOIN ty b ON a.x = b.y", data: small},
		genCase{name: "type-tinyint-widen-exprs", header: []string{smallTable},
			query: "SELECT id, CASE WHEN id > 2 THEN x ELSE y END, COALESCE(x, y), x IN (y, 100), x = y, IF(id > 2, x, id), NULLIF(y, x) FROM ty", data: small},
		genCase{name: "agg-tinyint-sum-batch", header: []string{"mode: batch", smallTable}, query: "SELECT SUM(x), SUM(y), MIN(x), MAX(y), COUNT(x) FROM ty", data: small},
	)
	for _, e := range []struct {
		name  string
		exprs []string
	}{
		{"is-json", []string{"p IS JSON", "p IS JSON OBJECT", "p IS NOT JSON ARRAY", "p IS JSON SCALAR", "'[1]' IS JSON ARRAY"}},
		{"json-path-wildcard", []string{"JSON_QUERY(p, '$.arr[*]')", "JSON_QUERY(p, '$..d')", "JSON_QUERY(p, '$.arr[0:2]')", "JSON_EXISTS(p, '$.b.*')", "JSON_VALUE(p, '$.arr[*]')"}},
		{"json-query-returning-array", []string{"JSON_QUERY(p, '$.arr' RETURNING ARRAY<STRING>)", "JSON_QUERY(p, 'lax $.b.d' RETURNING ARRAY<STRING> EMPTY ARRAY ON EMPTY)"}},
	} {
		out = append(out, genCase{name: "fn-" + e.name, header: []string{tableJ}, query: exprQuery("j", e.exprs), data: map[string]string{"j": dataJ}})
	}
	out = append(out, genCase{name: "fn-json-path-filter", header: []string{tableJF},
		query: "SELECT id, JSON_QUERY(p, '$.items[?(@.p > 1)].n'), JSON_QUERY(p, '$.items[?(@.p > 1 && @.n == \"b\")]'), JSON_QUERY(p, '$.items[1,0].p') FROM jf",
		data:  map[string]string{"jf": dataJF}})
	// TIME(3): read, written and computed.
	const timeCols = "id INT, x TIME(3)"
	times := map[string]string{"tt": jsonRows("x", `"10:30:45.123"`, `"00:00:00"`, `"23:59:59.999"`, `"10:30:00"`, `"07:05:09.1"`, "null")}
	timeTable := "table: tt (" + timeCols + ") json"
	out = append(out,
		genCase{name: "type-time-print", header: []string{timeTable}, query: "SELECT * FROM tt", data: times},
		genCase{name: "type-time-csv", header: []string{"mode: batch", timeTable, "sink: csv (" + timeCols + ")"}, query: "SELECT * FROM tt", data: times},
		genCase{name: "type-time-json", header: []string{"mode: batch", timeTable, "sink: json (" + timeCols + ")"}, query: "SELECT * FROM tt", data: times},
		genCase{name: "fn-time-ops", header: []string{timeTable}, query: "SELECT id, CAST(x AS STRING), HOUR(x), EXTRACT(MILLISECOND FROM x), x < TIME '12:00:00', CAST(x AS TIMESTAMP(3)), CAST(TIMESTAMP '2024-01-02 10:30:45.123' AS TIME(3)), CAST(CAST(x AS TIME) AS STRING) FROM tt", data: times},
	)
	out = append(out, genCase{name: "fn-json-value-number-text", header: []string{tableJN},
		query: "SELECT id, JSON_VALUE(p, '$.x'), JSON_VALUE(p, '$.y'), JSON_VALUE(p, '$.z') FROM jn",
		data:  map[string]string{"jn": dataJN}})
	return out
}

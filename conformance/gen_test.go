package conformance

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var generate = flag.Bool("generate", false, "write the generated cases (gen_test.go's tables) into cases/, keeping what is recorded for an unchanged case")

// A genCase is one generated case: header lines, the query, the data.
type genCase struct {
	name   string
	header []string
	query  string
	data   map[string]string
}

// readTables gives the header lines declaring the tables a case reads
// and their data, each table looked up in defs in order (a file's own
// tables before the shared ones it also reads).
func readTables(names []string, defs ...map[string][2]string) ([]string, map[string]string) {
	lines, data := make([]string, 0, len(names)), map[string]string{}
	for _, tb := range names {
		var def [2]string
		for _, d := range defs {
			if x, ok := d[tb]; ok {
				def = x
				break
			}
		}
		lines = append(lines, def[0])
		data[tb] = def[1]
	}
	return lines, data
}

// The shared tables the expression cases read.
const (
	tableT = "table: t (id INT, i INT, b BIGINT, d DOUBLE, f FLOAT, m DECIMAL(10, 2), s STRING, dt DATE, ts TIMESTAMP(3), bo BOOLEAN) json"
	dataT  = `{"id":1,"i":5,"b":10000000000,"d":2.5,"f":1.25,"m":123.45,"s":"Hello World","dt":"2024-01-15","ts":"2024-01-15 10:30:45.123","bo":true}
{"id":2,"i":-3,"b":-7,"d":-0.1,"f":-2.5,"m":-0.05,"s":"  padded  ","dt":"2000-02-29","ts":"2000-02-29 23:59:59.999","bo":false}
{"id":3,"i":0,"b":0,"d":0.0,"f":0.0,"m":0.00,"s":"","dt":"1970-01-01","ts":"1970-01-01 00:00:00","bo":false}
{"id":4,"i":null,"b":null,"d":null,"f":null,"m":null,"s":null,"dt":null,"ts":null,"bo":null}
{"id":5,"i":2147483647,"b":9223372036854775807,"d":1.0E300,"f":3.4E38,"m":99999999.99,"s":"ÄÖü ß 日本 x","dt":"1969-12-31","ts":"1969-12-31 23:59:59.5","bo":true}
`
	tableJ = "table: j (id INT, p STRING) json"
	dataJ  = `{"id":1,"p":"{\"a\":1,\"b\":{\"c\":\"x\",\"d\":[true,null]},\"arr\":[1,2,3],\"n\":null,\"f\":1.5,\"t\":true,\"s\":\"str\"}"}
{"id":2,"p":"{\"a\":\"7\",\"b\":{},\"arr\":[],\"f\":-2,\"t\":false}"}
{"id":3,"p":"not json"}
{"id":4,"p":null}
`
	tableO = "table: o (oid INT, category STRING, product STRING, price DOUBLE, qty INT, amt DECIMAL(10, 2), user_id INT) json"
	dataO  = `{"oid":1,"category":"books","product":"novel","price":12.5,"qty":2,"amt":25.00,"user_id":1}
{"oid":2,"category":"books","product":"atlas","price":40.0,"qty":1,"amt":40.00,"user_id":2}
{"oid":3,"category":"toys","product":"ball","price":3.25,"qty":4,"amt":13.00,"user_id":1}
{"oid":4,"category":"books","product":"novel","price":12.5,"qty":null,"amt":12.50,"user_id":3}
{"oid":5,"category":null,"product":"misc","price":null,"qty":7,"amt":null,"user_id":2}
{"oid":6,"category":"toys","product":"kite","price":8.75,"qty":1,"amt":8.75,"user_id":1}
{"oid":7,"category":"games","product":"chess","price":30.0,"qty":3,"amt":90.00,"user_id":4}
`
	tableE = "table: e (k STRING, v INT, ts TIMESTAMP(3)) json watermark ts AS ts - INTERVAL '1' SECOND"
	dataE  = `{"k":"a","v":1,"ts":"2024-01-01 10:00:01"}
{"k":"b","v":2,"ts":"2024-01-01 10:00:20"}
{"k":"a","v":3,"ts":"2024-01-01 10:00:59.999"}
{"k":"a","v":4,"ts":"2024-01-01 10:01:00"}
{"k":"b","v":5,"ts":"2024-01-01 10:01:30"}
{"k":"a","v":6,"ts":"2024-01-01 10:02:10"}
{"k":"b","v":null,"ts":"2024-01-01 10:04:00"}
`
)

// exprCases: a function or operator family, a few calls of it, over t
// (or j for the JSON functions). One case a row, in streaming mode.
var exprCases = []struct {
	name  string
	exprs []string
}{
	// Conditional and comparison
	{"coalesce", []string{"COALESCE(s, 'x')", "COALESCE(i, b)", "COALESCE(CAST(NULL AS DOUBLE), d, 0.5)"}},
	{"ifnull", []string{"IFNULL(s, '-')", "IFNULL(i, 0)"}},
	{"if", []string{"IF(i > 0, 'pos', 'other')", "IF(bo, i, -i)"}},
	{"nullif", []string{"NULLIF(i, 0)", "NULLIF(s, '')"}},
	{"greatest", []string{"GREATEST(i, 1, -1)", "GREATEST(s, 'M')", "GREATEST(d, f)"}},
	{"least", []string{"LEAST(i, b)", "LEAST(d, 0.0)", "LEAST(dt, DATE '2000-01-01')"}},
	{"case-searched", []string{"CASE WHEN i > 0 THEN 'p' WHEN i < 0 THEN 'n' ELSE 'z' END"}},
	{"case-simple", []string{"CASE i WHEN 5 THEN 'five' WHEN 0 THEN 'zero' END", "CASE WHEN bo THEN d END"}},
	{"is-null", []string{"i IS NULL", "s IS NOT NULL"}},
	{"between", []string{"i BETWEEN 0 AND 5", "i NOT BETWEEN -1 AND 1", "s BETWEEN 'A' AND 'Z'"}},
	{"in", []string{"i IN (0, 5, 7)", "s NOT IN ('', 'x')", "b IN (0, -7)"}},
	{"like", []string{"s LIKE 'H%'", "s LIKE '%o_l%'", "s NOT LIKE '%d'"}},
	{"like-escape", []string{"s LIKE '%!%%' ESCAPE '!'", "'50%' LIKE '50!%' ESCAPE '!'"}},
	{"is-true", []string{"bo IS TRUE", "bo IS NOT FALSE", "(i > 0) IS FALSE"}},
	{"boolean-logic", []string{"bo AND i > 0", "bo OR i > 0", "NOT bo"}},
	{"comparison", []string{"i = 5", "i <> 5", "d >= 0", "s < 'b'", "ts > TIMESTAMP '2000-01-01 00:00:00'"}},
	{"comparison-mixed", []string{"i = d", "m > i", "b < d", "dt = CAST(ts AS DATE)"}},
	// Strings
	{"concat-op", []string{"s || '!'", "s || CAST(i AS STRING)"}},
	{"concat", []string{"CONCAT(s, '-', s)", "CONCAT(s, CAST(NULL AS STRING))"}},
	{"concat-ws", []string{"CONCAT_WS('-', s, 'x', CAST(NULL AS STRING))", "CONCAT_WS(CAST(NULL AS STRING), s)"}},
	{"upper-lower", []string{"UPPER(s)", "LOWER(s)"}},
	{"reverse", []string{"REVERSE(s)"}},
	{"initcap", []string{"INITCAP(s)", "INITCAP('hello wORLD-foo bar_baz 1st')"}},
	{"char-length", []string{"CHAR_LENGTH(s)", "CHARACTER_LENGTH(s)"}},
	{"substring", []string{"SUBSTRING(s FROM 2)", "SUBSTRING(s FROM 2 FOR 3)", "SUBSTRING(s FROM -3)"}},
	{"substr", []string{"SUBSTR(s, 1, 5)", "SUBSTR(s, 0)", "SUBSTR(s, 3, -1)"}},
	{"position", []string{"POSITION('o' IN s)", "POSITION('' IN s)"}},
	{"locate", []string{"LOCATE('o', s)", "LOCATE('o', s, 6)"}},
	{"replace", []string{"REPLACE(s, 'o', '0')", "REPLACE(s, ' ', '')"}},
	{"trim", []string{"TRIM(s)", "TRIM(LEADING FROM s)", "TRIM(TRAILING FROM s)", "TRIM(BOTH 'd' FROM s)"}},
	{"ltrim-rtrim", []string{"LTRIM(s)", "RTRIM(s)"}},
	{"btrim", []string{"BTRIM(s)", "BTRIM(s, ' Hd')"}},
	{"lpad-rpad", []string{"LPAD(s, 8, '*')", "RPAD(s, 3, 'xy')", "RPAD(s, 14, 'xy')"}},
	{"lpad-edge", []string{"LPAD(s, -1, 'a')", "LPAD(s, 5, '')", "LPAD(s, 0, 'a')"}},
	{"repeat", []string{"REPEAT(s, 2)", "REPEAT(s, 0)", "REPEAT(s, -1)"}},
	{"left-right", []string{"LEFT(s, 3)", "RIGHT(s, 3)", "LEFT(s, -1)"}},
	{"split-index", []string{"SPLIT_INDEX(s, ' ', 0)", "SPLIT_INDEX(s, ' ', 1)", "SPLIT_INDEX(s, ' ', 5)"}},
	{"ascii-chr", []string{"ASCII(s)", "CHR(65)", "CHR(i + 100)"}},
	{"regexp", []string{"REGEXP(s, 'o.l')", "REGEXP(s, '^\\s')"}},
	{"regexp-extract", []string{"REGEXP_EXTRACT(s, '(\\w+) (\\w+)', 2)", "REGEXP_EXTRACT(s, 'x(y)', 1)", "REGEXP_EXTRACT(s, 'l+')"}},
	{"regexp-replace", []string{"REGEXP_REPLACE(s, 'o', '0')", "REGEXP_REPLACE(s, '(\\w+) (\\w+)', '$2 $1')", "REGEXP_REPLACE(s, '\\s+', '')"}},
	{"md5", []string{"MD5(s)"}},
	{"sha1-sha256", []string{"SHA1(s)", "SHA256(s)"}},
	{"sha224-384-512", []string{"SHA224(s)", "SHA384(s)", "SHA512(s)"}},
	{"sha2", []string{"SHA2(s, 256)", "SHA2(s, 384)", "SHA2(s, 100)"}},
	{"base64", []string{"TO_BASE64(s)", "FROM_BASE64(TO_BASE64(s))", "FROM_BASE64('aGk=')"}},
	{"uuid", []string{"CHAR_LENGTH(UUID())", "SUBSTRING(UUID() FROM 15 FOR 1)"}},
	// Numbers
	{"abs", []string{"ABS(i)", "ABS(d)", "ABS(m)", "ABS(b)"}},
	{"sign", []string{"SIGN(i)", "SIGN(d)", "SIGN(m)"}},
	{"round", []string{"ROUND(d)", "ROUND(d, 1)", "ROUND(m, 1)", "ROUND(i, -1)"}},
	{"round-half", []string{"ROUND(2.5)", "ROUND(-2.5)", "ROUND(CAST(2.5 AS DOUBLE))", "ROUND(1.005, 2)"}},
	{"truncate", []string{"TRUNCATE(d, 1)", "TRUNCATE(m, 1)", "TRUNCATE(i, -1)"}},
	{"floor-ceil", []string{"FLOOR(d)", "CEIL(d)", "CEILING(m)", "FLOOR(m)"}},
	{"mod", []string{"MOD(i, 3)", "MOD(b, 7)", "MOD(-7, 3)"}},
	{"power-sqrt", []string{"POWER(d, 2)", "POW(i, 2)", "SQRT(ABS(d))"}},
	{"exp-ln", []string{"EXP(d)", "LN(ABS(d) + 1)", "LOG10(ABS(d) + 1)", "LOG2(ABS(d) + 1)"}},
	{"log", []string{"LOG(ABS(d) + 1)", "LOG(2, ABS(d) + 1)"}},
	{"trig", []string{"SIN(d)", "COS(d)", "TAN(d)", "COT(d + 1)"}},
	{"atrig", []string{"ASIN(d / 10)", "ACOS(d / 10)", "ATAN(d)", "ATAN2(d, 2)"}},
	{"hyperbolic", []string{"SINH(d)", "COSH(d)", "TANH(d)"}},
	{"degrees-radians", []string{"DEGREES(d)", "RADIANS(d)"}},
	{"pi-e", []string{"PI()", "E()"}},
	{"arith-int", []string{"i + 1", "i - 1", "i * 2", "i / 2", "-i"}},
	{"arith-bigint", []string{"b + 1", "b * 2", "b / 3", "b - i"}},
	{"arith-double", []string{"d + 1", "d * d", "d / 3", "d - f"}},
	{"arith-float", []string{"f + 1", "f * f", "f / 3"}},
	{"arith-decimal", []string{"m + 1", "m * 2", "m - m"}},
	{"arith-decimal-div", []string{"m / 3", "m / m"}},
	{"arith-mixed", []string{"i + d", "i + m", "b + m", "m + d", "i + b"}},
	{"div-double-zero", []string{"d / 0.0", "-d / 0.0", "d - d / 0.0"}},
	{"div-int-zero", []string{"i / 0"}},
	{"mod-zero", []string{"MOD(i, 0)"}},
	{"int-overflow", []string{"i + 1", "i * 2"}},
	{"bigint-overflow", []string{"b + 1"}},
	// Casts
	{"cast-int", []string{"CAST(i AS BIGINT)", "CAST(i AS DOUBLE)", "CAST(i AS STRING)", "CAST(i AS DECIMAL(12, 2))", "CAST(i AS BOOLEAN)"}},
	{"cast-double", []string{"CAST(d AS INT)", "CAST(d AS BIGINT)", "CAST(d AS STRING)", "CAST(d AS FLOAT)"}},
	{"cast-double-decimal", []string{"CAST(d AS DECIMAL(10, 3))", "CAST(d AS DECIMAL(18, 1))"}},
	{"cast-decimal", []string{"CAST(m AS INT)", "CAST(m AS DOUBLE)", "CAST(m AS STRING)", "CAST(m AS BIGINT)"}},
	{"cast-decimal-narrow", []string{"CAST(m AS DECIMAL(5, 1))", "CAST(m AS DECIMAL(4, 0))"}},
	{"cast-overflow-null", []string{"CAST(1.0E300 AS DECIMAL(10, 1))", "CAST(99999999.99 AS DECIMAL(5, 1))", "CAST(m AS DECIMAL(3, 1))"}},
	{"cast-string-decimal-overflow", []string{"CAST('123456' AS DECIMAL(5, 1))"}},
	{"try-cast-decimal-overflow", []string{"TRY_CAST('123456' AS DECIMAL(5, 1))", "TRY_CAST(s AS DECIMAL(5, 1))"}},
	{"cast-string", []string{"CAST('42' AS INT)", "CAST('1.5' AS DOUBLE)", "CAST('true' AS BOOLEAN)", "CAST('2024-01-02' AS DATE)", "CAST('2024-01-02 03:04:05.6' AS TIMESTAMP(3))"}},
	{"cast-string-decimal", []string{"CAST('2.5E-7' AS DECIMAL(18, 12))", "CAST('-0.125' AS DECIMAL(5, 2))", "CAST('1e2' AS DECIMAL(6, 1))"}},
	{"cast-string-bad", []string{"CAST(s AS INT)"}},
	{"cast-bool", []string{"CAST(bo AS INT)", "CAST(bo AS STRING)", "CAST(bo AS BIGINT)"}},
	{"cast-date-time", []string{"CAST(dt AS STRING)", "CAST(dt AS TIMESTAMP(3))", "CAST(ts AS DATE)", "CAST(ts AS STRING)"}},
	{"cast-timestamp-precision", []string{"CAST(ts AS TIMESTAMP(0))", "CAST(ts AS TIMESTAMP(6))", "CAST(CAST(ts AS TIMESTAMP(0)) AS STRING)"}},
	{"cast-ltz", []string{"CAST(ts AS TIMESTAMP_LTZ(3))", "CAST(CAST(ts AS TIMESTAMP_LTZ(3)) AS STRING)"}},
	{"try-cast", []string{"TRY_CAST(s AS INT)", "TRY_CAST('12x' AS INT)", "TRY_CAST('7' AS BIGINT)", "TRY_CAST(s AS DATE)"}},
	{"cast-float-text", []string{"CAST(f AS STRING)", "CAST(f AS DOUBLE)", "f * 2"}},
	{"cast-string-int-space", []string{"CAST(' 42 ' AS INT)", "CAST('+7' AS INT)"}},
	{"cast-to-varchar", []string{"CAST(i AS VARCHAR(3))", "CAST(s AS VARCHAR(4))", "CAST(s AS CHAR(3))"}},
	{"cast-bytes", []string{"CAST(s AS BYTES)", "CAST(CAST(s AS BYTES) AS STRING)"}},
	// Dates and times
	{"interval-day", []string{"ts + INTERVAL '1' DAY", "ts - INTERVAL '1:30' HOUR TO MINUTE", "dt + INTERVAL '1' DAY"}},
	{"interval-month", []string{"dt + INTERVAL '1' MONTH", "ts - INTERVAL '2' YEAR", "dt + INTERVAL '1-6' YEAR TO MONTH"}},
	{"interval-month-end", []string{"DATE '2024-01-31' + INTERVAL '1' MONTH", "TIMESTAMP '2023-03-31 12:00:00' - INTERVAL '1' MONTH"}},
	{"interval-seconds", []string{"ts + INTERVAL '1.5' SECOND", "ts + INTERVAL '90' MINUTE", "ts - INTERVAL '1 02:03:04.005' DAY TO SECOND"}},
	{"timestampadd", []string{"TIMESTAMPADD(DAY, 3, ts)", "TIMESTAMPADD(MONTH, 1, dt)", "TIMESTAMPADD(WEEK, 1, ts)", "TIMESTAMPADD(QUARTER, -1, dt)"}},
	{"timestampadd-date-hour", []string{"TIMESTAMPADD(HOUR, 5, dt)", "TIMESTAMPADD(SECOND, 1, dt)"}},
	{"timestampdiff", []string{"TIMESTAMPDIFF(DAY, ts, TIMESTAMP '2024-03-01 00:00:00')", "TIMESTAMPDIFF(SECOND, ts, ts + INTERVAL '1' HOUR)", "TIMESTAMPDIFF(HOUR, ts, TIMESTAMP '2000-01-01 00:00:00')"}},
	{"timestampdiff-month", []string{"TIMESTAMPDIFF(MONTH, dt, DATE '2024-02-29')", "TIMESTAMPDIFF(YEAR, dt, DATE '2024-01-01')", "TIMESTAMPDIFF(QUARTER, DATE '2024-01-31', DATE '2024-04-30')"}},
	{"date-format", []string{"DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm')", "DATE_FORMAT(ts, 'yyyyMMddHHmmssSSS')", "DATE_FORMAT(ts, 'EEE, d MMM yyyy')"}},
	{"date-format-string", []string{"DATE_FORMAT('2024-01-02 03:04:05', 'HH:mm')", "DATE_FORMAT(CAST(ts AS STRING), 'yy/MM')"}},
	{"to-timestamp", []string{"TO_TIMESTAMP('2024-01-02 03:04:05')", "TO_TIMESTAMP('02/01/2024', 'dd/MM/yyyy')", "TO_TIMESTAMP('garbage')"}},
	{"to-date", []string{"TO_DATE('2024-01-02')", "TO_DATE('20240102', 'yyyyMMdd')", "TO_DATE('x')"}},
	{"to-timestamp-ltz", []string{"TO_TIMESTAMP_LTZ(1700000000123, 3)", "TO_TIMESTAMP_LTZ(1700000000, 0)", "TO_TIMESTAMP_LTZ(CAST(i AS BIGINT) * 1000, 3)"}},
	{"to-timestamp-ltz-negative", []string{"TO_TIMESTAMP_LTZ(-1, 3)", "TO_TIMESTAMP_LTZ(-1500, 3)", "TO_TIMESTAMP_LTZ(-86400000, 3)"}},
	{"unix-timestamp", []string{"UNIX_TIMESTAMP('2024-01-02 03:04:05')", "UNIX_TIMESTAMP('2024-01-02', 'yyyy-MM-dd')", "UNIX_TIMESTAMP('bad')"}},
	{"from-unixtime", []string{"FROM_UNIXTIME(1700000000)", "FROM_UNIXTIME(0, 'yyyy-MM-dd')", "FROM_UNIXTIME(-1)"}},
	{"convert-tz", []string{"CONVERT_TZ('2024-01-02 03:04:05', 'UTC', 'America/Los_Angeles')", "CONVERT_TZ('2024-07-02 03:04:05', 'Europe/Berlin', 'UTC')", "CONVERT_TZ('2024-01-02 03:04:05', 'GMT+05:30', 'UTC')"}},
	{"extract", []string{"EXTRACT(YEAR FROM ts)", "EXTRACT(MONTH FROM dt)", "EXTRACT(DAY FROM ts)", "EXTRACT(HOUR FROM ts)", "EXTRACT(MINUTE FROM ts)", "EXTRACT(SECOND FROM ts)"}},
	{"date-parts", []string{"YEAR(dt)", "QUARTER(dt)", "MONTH(dt)", "WEEK(dt)", "DAYOFYEAR(dt)", "DAYOFMONTH(dt)", "DAYOFWEEK(dt)"}},
	{"time-parts", []string{"HOUR(ts)", "MINUTE(ts)", "SECOND(ts)"}},
	{"clock", []string{"CURRENT_TIMESTAMP IS NOT NULL", "NOW() > TIMESTAMP '2020-01-01 00:00:00'", "CURRENT_DATE > DATE '2020-01-01'", "LOCALTIMESTAMP IS NOT NULL"}},
	{"literals-time", []string{"DATE '2024-02-29'", "TIMESTAMP '2024-01-02 03:04:05.678'", "TIMESTAMP '2024-01-02 03:04:00'", "TIMESTAMP '2024-01-02 00:00:00'"}},
	{"literals-number", []string{"1", "10000000000", "1.50", "1.5E3", "-0.0E0", "CAST(1 AS TINYINT)", "CAST(1 AS SMALLINT)"}},
	{"literals-string", []string{"'it''s'", "CAST('' AS STRING)", "'a' = 'a'", "TRUE", "CAST(NULL AS STRING)"}},
}

// jsonCases read j.
var jsonCases = []struct {
	name  string
	exprs []string
}{
	{"json-value", []string{"JSON_VALUE(p, '$.a')", "JSON_VALUE(p, '$.b.c')", "JSON_VALUE(p, '$.arr[1]')", "JSON_VALUE(p, '$.f')"}},
	{"json-value-returning", []string{"JSON_VALUE(p, '$.a' RETURNING INT)", "JSON_VALUE(p, '$.t' RETURNING BOOLEAN)", "JSON_VALUE(p, '$.f' RETURNING DOUBLE)"}},
	{"json-value-default", []string{"JSON_VALUE(p, 'lax $.missing' DEFAULT 'd' ON EMPTY)", "JSON_VALUE(p, '$.missing' DEFAULT 'e' ON ERROR)", "JSON_VALUE(p, '$.b' DEFAULT 'obj' ON ERROR)"}},
	{"json-value-null", []string{"JSON_VALUE(p, '$.n')", "JSON_VALUE(p, '$.s')", "JSON_VALUE(p, 'lax $.zz')"}},
	{"json-query", []string{"JSON_QUERY(p, '$.b')", "JSON_QUERY(p, '$.arr')", "JSON_QUERY(p, '$.a' WITH WRAPPER)", "JSON_QUERY(p, '$.arr' WITH CONDITIONAL ARRAY WRAPPER)"}},
	{"json-query-empty", []string{"JSON_QUERY(p, 'lax $.x' EMPTY ARRAY ON EMPTY)", "JSON_QUERY(p, '$.x' EMPTY OBJECT ON ERROR)", "JSON_QUERY(p, '$.a')"}},
	{"json-exists", []string{"JSON_EXISTS(p, '$.a')", "JSON_EXISTS(p, '$.n')", "JSON_EXISTS(p, '$.zz')", "JSON_EXISTS(p, 'lax $.zz')"}},
	{"json-object", []string{"JSON_OBJECT('k' VALUE id, 'n' VALUE CAST(NULL AS STRING))", "JSON_OBJECT(KEY 'p' VALUE p ABSENT ON NULL)"}},
	{"json-array", []string{"JSON_ARRAY(id, 'x', TRUE)", "JSON_ARRAY(CAST(NULL AS INT), 1 NULL ON NULL)", "JSON_ARRAY()"}},
	{"json-nested", []string{"JSON_OBJECT(KEY 'arr' VALUE JSON_ARRAY(1, 2), KEY 'o' VALUE JSON_OBJECT(KEY 'x' VALUE id))"}},
	{"json-object-types", []string{"JSON_OBJECT(KEY 'd' VALUE 1.5, KEY 'b' VALUE FALSE, KEY 'dt' VALUE DATE '2024-01-02', KEY 'ts' VALUE TIMESTAMP '2024-01-02 10:30:45.123')"}},
}

// aggCases read o; each runs in streaming and in batch mode.
var aggCases = []struct{ name, query string }{
	{"count", "SELECT category, COUNT(*), COUNT(qty), COUNT(DISTINCT user_id) FROM o GROUP BY category"},
	{"sum", "SELECT category, SUM(qty), SUM(price), SUM(amt) FROM o GROUP BY category"},
	{"avg", "SELECT category, AVG(qty), AVG(price), AVG(amt) FROM o GROUP BY category"},
	{"min-max", "SELECT category, MIN(price), MAX(product), MIN(amt), MAX(qty) FROM o GROUP BY category"},
	{"variance", "SELECT category, VAR_POP(price), VAR_SAMP(price), STDDEV_POP(price), STDDEV_SAMP(price) FROM o GROUP BY category"},
	{"variance-int", "SELECT category, VAR_POP(qty), VAR_SAMP(qty), STDDEV_SAMP(qty) FROM o GROUP BY category"},
	{"first-last", "SELECT category, FIRST_VALUE(product), LAST_VALUE(product) FROM o GROUP BY category"},
	{"listagg", "SELECT category, LISTAGG(product), LISTAGG(product, '; ') FROM o GROUP BY category"},
	{"filter", "SELECT category, COUNT(*) FILTER (WHERE price > 10), SUM(qty) FILTER (WHERE user_id = 1) FROM o GROUP BY category"},
	{"distinct-aggs", "SELECT category, SUM(DISTINCT qty), AVG(DISTINCT price), COUNT(DISTINCT product) FROM o GROUP BY category"},
	{"global", "SELECT COUNT(*), SUM(price), MAX(qty), MIN(product) FROM o"},
	{"global-empty", "SELECT COUNT(*), SUM(price) FROM o WHERE qty > 100"},
	{"having", "SELECT category, COUNT(*) AS n FROM o GROUP BY category HAVING COUNT(*) > 1"},
	{"multi-key", "SELECT category, user_id, SUM(qty) FROM o GROUP BY category, user_id"},
	{"expr-key", "SELECT UPPER(category), COUNT(*) FROM o GROUP BY UPPER(category)"},
	{"agg-expr", "SELECT category, SUM(price * qty) + 1, MAX(qty) - MIN(qty) FROM o GROUP BY category"},
	{"agg-of-agg", "SELECT n, COUNT(*) FROM (SELECT category, COUNT(*) AS n FROM o GROUP BY category) GROUP BY n"},
	{"select-distinct", "SELECT DISTINCT category FROM o"},
	{"select-distinct-multi", "SELECT DISTINCT category, user_id FROM o"},
	{"where-then-agg", "SELECT user_id, COUNT(*) FROM o WHERE price > 5 GROUP BY user_id"},
	{"listagg-distinct", "SELECT category, LISTAGG(DISTINCT product) FROM o GROUP BY category"},
	{"minmax-distinct", "SELECT category, MIN(DISTINCT qty), MAX(DISTINCT price) FROM o GROUP BY category"},
	{"count-expr", "SELECT COUNT(category), COUNT(DISTINCT category), COUNT(1) FROM o"},
	{"sum-int-overflow", "SELECT SUM(qty * 1000000000) FROM o"},
	{"avg-int", "SELECT user_id, AVG(qty), AVG(CAST(qty AS DOUBLE)) FROM o GROUP BY user_id"},
}

// queryCases: SQL constructs, each once in the mode given.
var queryCases = []struct {
	name, mode string
	tables     []string
	query      string
}{
	{"select-star", "streaming", []string{"o"}, "SELECT * FROM o"},
	{"select-alias", "streaming", []string{"o"}, "SELECT oid AS id, price * 2 AS double_price FROM o"},
	{"where", "streaming", []string{"o"}, "SELECT oid FROM o WHERE price > 10 AND category = 'books'"},
	{"where-or-null", "streaming", []string{"o"}, "SELECT oid FROM o WHERE category IS NULL OR qty > 3"},
	{"where-null-cond", "streaming", []string{"o"}, "SELECT oid FROM o WHERE NOT (qty > 1)"},
	{"subquery", "streaming", []string{"o"}, "SELECT x FROM (SELECT oid * 10 AS x FROM o WHERE qty > 1) WHERE x > 20"},
	{"subquery-alias", "streaming", []string{"o"}, "SELECT q.oid FROM (SELECT oid, category FROM o) AS q WHERE q.category = 'toys'"},
	{"nested-subquery", "streaming", []string{"o"}, "SELECT y + 1 FROM (SELECT x * 2 AS y FROM (SELECT oid AS x FROM o))"},
	{"table-alias", "streaming", []string{"o"}, "SELECT t1.oid, t1.category FROM o t1 WHERE t1.qty = 1"},
	{"literal-select", "streaming", []string{"o"}, "SELECT 1, 'x', oid FROM o WHERE oid < 3"},
	{"union-all", "streaming", []string{"o", "t"}, "SELECT oid AS id, product AS name FROM o UNION ALL SELECT id, s FROM t"},
	{"union-all-types", "streaming", []string{"o", "t"}, "SELECT oid AS id, price AS x FROM o WHERE oid < 3 UNION ALL SELECT id, i FROM t UNION ALL SELECT id, m FROM t WHERE id = 1"},
	{"union-distinct", "streaming", []string{"o"}, "SELECT category FROM o UNION SELECT product FROM o WHERE qty = 1"},
	{"union-distinct-batch", "batch", []string{"o"}, "SELECT category FROM o UNION SELECT 'books' FROM o"},
	{"union-updating", "streaming", []string{"o"}, "SELECT category, COUNT(*) AS n FROM o GROUP BY category UNION ALL SELECT product, 0 FROM o WHERE oid = 1"},
	{"union-agg-above", "streaming", []string{"o"}, "SELECT k, COUNT(*) FROM (SELECT category AS k FROM o UNION ALL SELECT product FROM o) GROUP BY k"},
	{"with", "streaming", []string{"o"}, "WITH cheap AS (SELECT oid, price FROM o WHERE price < 20) SELECT oid FROM cheap WHERE price > 5"},
	{"with-twice", "streaming", []string{"o"}, "WITH c AS (SELECT category FROM o WHERE qty > 1) SELECT category FROM c UNION ALL SELECT category FROM c"},
	{"with-chain", "streaming", []string{"o"}, "WITH a AS (SELECT oid FROM o), b AS (SELECT oid * 2 AS x FROM a) SELECT x FROM b WHERE x > 6"},
	{"with-agg", "batch", []string{"o"}, "WITH per_cat AS (SELECT category, SUM(qty) AS q FROM o GROUP BY category) SELECT category FROM per_cat WHERE q > 3"},
	{"filter-over-updating", "streaming", []string{"o"}, "SELECT category, n FROM (SELECT category, COUNT(*) AS n FROM o GROUP BY category) WHERE n < 2"},
	{"filter-over-updating-batch", "batch", []string{"o"}, "SELECT category, n FROM (SELECT category, COUNT(*) AS n FROM o GROUP BY category) WHERE n < 2"},
	{"calc-over-updating", "streaming", []string{"o"}, "SELECT category, n * 10 FROM (SELECT category, COUNT(*) AS n FROM o GROUP BY category)"},
	{"tumble", "streaming", []string{"e"}, "SELECT window_start, window_end, k, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k"},
	{"tumble-global", "streaming", []string{"e"}, "SELECT window_start, window_end, MAX(v), MIN(k) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '2' MINUTE)) GROUP BY window_start, window_end"},
	{"tumble-window-time", "streaming", []string{"e"}, "SELECT window_time, COUNT(*) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, window_time"},
	{"tumble-batch", "batch", []string{"e"}, "SELECT window_start, window_end, k, COUNT(*) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k"},
	{"tumble-offset", "streaming", []string{"e"}, "SELECT window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '30' SECOND)) GROUP BY window_start, window_end"},
	{"tumble-aggs", "streaming", []string{"e"}, "SELECT window_start, k, AVG(v), LISTAGG(CAST(v AS STRING)), FIRST_VALUE(v), LAST_VALUE(v) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k"},
	{"tumble-having", "streaming", []string{"e"}, "SELECT window_start, k, SUM(v) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k HAVING SUM(v) > 2"},
	{"tumble-where", "streaming", []string{"e"}, "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) WHERE k = 'a' GROUP BY window_start, window_end"},
	{"hop", "streaming", []string{"e"}, "SELECT window_start, window_end, COUNT(*), SUM(v) FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE)) GROUP BY window_start, window_end"},
	{"hop-batch", "batch", []string{"e"}, "SELECT window_start, window_end, k, MAX(v) FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)) GROUP BY window_start, window_end, k"},
	{"cumulate", "streaming", []string{"e"}, "SELECT window_start, window_end, COUNT(*), SUM(v) FROM TABLE(CUMULATE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '3' MINUTE)) GROUP BY window_start, window_end"},
	{"cumulate-keyed", "streaming", []string{"e"}, "SELECT window_start, window_end, k, MAX(v) FROM TABLE(CUMULATE(TABLE e, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '2' MINUTE)) GROUP BY window_start, window_end, k"},
	{"window-distinct-filter", "streaming", []string{"e"}, "SELECT window_start, COUNT(DISTINCT k), COUNT(*) FILTER (WHERE v > 2) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '2' MINUTE)) GROUP BY window_start, window_end"},
	{"window-tvf-select", "streaming", []string{"e"}, "SELECT k, v, window_start, window_end FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE))"},
	{"window-join-self", "streaming", []string{"e"}, "SELECT a.k, a.v, b.v AS bv, a.window_start FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) a JOIN TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) b ON a.k = b.k AND a.window_start = b.window_start AND a.window_end = b.window_end AND a.v < b.v"},
	{"window-join-left-hop", "streaming", []string{"e"}, "SELECT a.k, a.v, b.v AS bv, a.window_end FROM (SELECT * FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE))) a LEFT JOIN (SELECT * FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)) WHERE v > 3) b ON a.k = b.k AND a.window_start = b.window_start AND a.window_end = b.window_end"},
	{"window-anti-join", "streaming", []string{"e"}, "SELECT a.k, a.v, a.window_start FROM (SELECT * FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) a WHERE a.k NOT IN (SELECT b.k FROM (SELECT * FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) b WHERE a.window_start = b.window_start AND a.window_end = b.window_end AND b.v > 2)"},
	{"window-join-different-windows", "streaming", []string{"e"}, "SELECT a.k, a.v, b.v AS bv FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) a JOIN TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '2' MINUTE)) b ON a.k = b.k AND a.window_start = b.window_start AND a.window_end = b.window_end"},
	{"window-join-start-only", "streaming", []string{"e"}, "SELECT a.k, a.v, b.v AS bv FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) a LEFT JOIN TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) b ON a.k = b.k AND a.window_start = b.window_start AND b.v > 2"},
	{"window-start-only", "streaming", []string{"e"}, "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start"},
	{"computed-column", "streaming", []string{"tc"}, "SELECT id, total, label FROM tc"},
	{"group-by-batch-order", "batch", []string{"o"}, "SELECT user_id, LISTAGG(product) FROM o GROUP BY user_id"},
	{"top-n", "streaming", []string{"o"}, "SELECT category, product FROM (SELECT category, product, ROW_NUMBER() OVER (PARTITION BY category ORDER BY price DESC) AS rn FROM o) WHERE rn <= 1"},
	{"over-agg", "streaming", []string{"e"}, "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM e"},
	{"regexp-backreference", "streaming", []string{"t"}, "SELECT id, REGEXP_REPLACE(s, '(l)\\1', 'L') FROM t"},
	{"convert-tz-unknown-zone", "streaming", []string{"t"}, "SELECT id, CONVERT_TZ('2024-01-02 03:04:05', 'Mars/Olympus', 'UTC') FROM t WHERE id = 1"},
	{"json-query-number-text", "streaming", []string{"jn"}, "SELECT id, JSON_QUERY(p, '$.o') FROM jn"},
	{"composite-array", "streaming", []string{"t"}, "SELECT id, CARDINALITY(ARRAY[i, 1]) FROM t"},
	{"composite-row", "streaming", []string{"t"}, "SELECT id, ROW(i, s) FROM t WHERE id = 1"},
	{"decimal-wide", "streaming", []string{"t"}, "SELECT id, m * m FROM t"},
	{"decimal-wide-cast", "streaming", []string{"t"}, "SELECT id, CAST(m AS DECIMAL(20, 12)) FROM t WHERE id < 4"},
}

// Extra tables of queryCases.
var extraTables = map[string][2]string{
	"t":  {tableT, dataT},
	"o":  {tableO, dataO},
	"e":  {tableE, dataE},
	"j":  {tableJ, dataJ},
	"tc": {"table: tc (id INT, price DOUBLE, qty INT, total AS price * qty, label AS CONCAT('#', CAST(id AS STRING))) json", "{\"id\":1,\"price\":2.5,\"qty\":4}\n{\"id\":2,\"price\":null,\"qty\":1}\n"},
	"jn": {"table: jn (id INT, p STRING) json", "{\"id\":1,\"p\":\"{\\\"o\\\":{\\\"x\\\":1.5e3,\\\"y\\\":10,\\\"z\\\":0.1}}\"}\n"},
}

func exprQuery(table string, exprs []string) string {
	key := "id"
	return fmt.Sprintf("SELECT %s, %s FROM %s", key, strings.Join(exprs, ", "), table)
}

// both is the modes of a case run in streaming and in batch.
var both = []string{"streaming", "batch"}

// areaCases are the generators of the per-area files (gen_AREA_test.go),
// each adding itself in an init function, so areas grow apart.
var areaCases []func() []genCase

func allGenerated() []genCase {
	var out []genCase
	for _, gen := range areaCases {
		out = append(out, gen()...)
	}
	for _, e := range exprCases {
		out = append(out, genCase{name: "fn-" + e.name, header: []string{tableT}, query: exprQuery("t", e.exprs), data: map[string]string{"t": dataT}})
	}
	for _, e := range jsonCases {
		out = append(out, genCase{name: "fn-" + e.name, header: []string{tableJ}, query: exprQuery("j", e.exprs), data: map[string]string{"j": dataJ}})
	}
	for _, a := range aggCases {
		for _, mode := range []string{"streaming", "batch"} {
			out = append(out, genCase{name: "agg-" + a.name + "-" + mode, header: []string{"mode: " + mode, tableO}, query: a.query, data: map[string]string{"o": dataO}})
		}
	}
	for _, q := range queryCases {
		h := []string{"mode: " + q.mode}
		data := map[string]string{}
		for _, tb := range q.tables {
			h = append(h, extraTables[tb][0])
			data[tb] = extraTables[tb][1]
		}
		out = append(out, genCase{name: "sql-" + q.name, header: h, query: q.query, data: data})
	}
	out = append(out, typeCases()...)
	out = append(out, formatCases()...)
	return out
}

func (g genCase) text() string {
	var b strings.Builder
	b.WriteString("# generated by gen_test.go (go test ./conformance -generate); edit the tables there\n")
	for _, h := range g.header {
		b.WriteString(h + "\n")
	}
	fmt.Fprintf(&b, "-- %s --\n%s\n", QuerySection, g.query)
	var names []string
	for _, h := range g.header {
		if rest, ok := strings.CutPrefix(h, "table: "); ok {
			name, _, _ := strings.Cut(rest, " ")
			names = append(names, name)
		}
	}
	for _, n := range names {
		fmt.Fprintf(&b, "-- %s%s --\n%s", n, dataSectionExt, g.data[n])
	}
	return b.String()
}

// TestGenerate writes the generated cases with -generate. A case whose
// query, tables and data are unchanged keeps its recorded sections and
// its hand-written header lines (expect:); a changed one loses its
// recorded Flink result.
func TestGenerate(t *testing.T) {
	gens := allGenerated()
	seen := map[string]bool{}
	for _, g := range gens {
		if seen[g.name] {
			t.Errorf("generated case %s twice", g.name)
		}
		seen[g.name] = true
		if _, err := Parse(g.name+".case", []byte(g.text())); err != nil {
			t.Errorf("generated case: %v", err)
		}
	}
	if !*generate {
		// The case files are what the generator writes: an edit by hand
		// of a generated case's inputs would be lost at the next -generate.
		for _, g := range gens {
			path := filepath.Join(casesDir, g.name+".case")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("generated case %s has no file: go test ./conformance -run TestGenerate -args -generate", g.name)
				continue
			}
			prev, err := Parse(path, data)
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := Parse(path, []byte(g.text()))
			if !sameInputs(fresh, prev) {
				t.Errorf("%s: its query, tables or data differ from gen_test.go's; edit the tables there and run -generate", path)
			}
		}
		return
	}
	var re *regexp.Regexp
	if *only != "" {
		re = regexp.MustCompile(*only)
	}
	for _, g := range gens {
		if re != nil && !re.MatchString(g.name) {
			continue
		}
		path := filepath.Join(casesDir, g.name+".case")
		fresh, err := Parse(path, []byte(g.text()))
		if err != nil {
			t.Fatal(err)
		}
		if old, err := os.ReadFile(path); err == nil {
			prev, err := Parse(path, old)
			if err != nil {
				t.Fatal(err)
			}
			fresh = merge(fresh, prev)
		}
		out := fresh.Format()
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, out) {
			continue
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// merge keeps prev's expect line and, when the inputs are the same, its
// recorded sections.
func merge(fresh, prev *Case) *Case {
	same := sameInputs(fresh, prev)
	// A generator may write the expect line itself: then it, not the
	// previous file's, holds, and no line is kept twice.
	have := map[string]bool{}
	for _, h := range fresh.Header {
		have[h] = true
	}
	for _, h := range prev.Header {
		kept := strings.HasPrefix(h, "expect:") && fresh.Expect == "" || (strings.HasPrefix(h, "#") && !strings.HasPrefix(h, "# generated"))
		if kept && !have[h] {
			fresh.Header = append(fresh.Header, h)
		}
	}
	if fresh.Expect == "" {
		fresh.Expect = prev.Expect
	}
	names := []string{EtldOutSection}
	if same {
		names = append(names, FlinkOutSection, FlinkErrSection)
	}
	for _, n := range names {
		if body, ok := prev.Section(n); ok {
			fresh.SetSection(n, body, false)
		}
	}
	return fresh
}

// sameInputs says whether two cases run the same query over the same
// tables, data, sink, mode and zone.
func sameInputs(a, b *Case) bool {
	if a.Query() != b.Query() || len(a.Tables) != len(b.Tables) || a.Batch != b.Batch || a.Zone != b.Zone || fmt.Sprint(a.Sink) != fmt.Sprint(b.Sink) {
		return false
	}
	for i, t := range a.Tables {
		if a.Data(t.Name) != b.Data(t.Name) || fmt.Sprint(t) != fmt.Sprint(b.Tables[i]) {
			return false
		}
	}
	return true
}

package conformance

import (
	"fmt"
	"strings"
)

// Cases ported from Flink's own function tests
// (flink-table-planner/src/test/java/org/apache/flink/table/planner/functions/*ITCase.java):
// each TestSetSpec's fields (onFieldsWithData, andDataTypes) become one
// row of a table f, and its SQL expressions (testSqlResult, testResult's
// SQL form) the columns of one query over it, a few to a case so a failing
// one (a validation error) spoils few. The expected values the ITCases
// write are not copied: Flink 2.3's recorded output is the reference.

func init() { areaCases = append(areaCases, flinkFnCases) }

// flinkFnSpec is one case: the table's columns, its one row (JSON) and the
// expressions.
type flinkFnSpec struct {
	name  string
	cols  string
	row   string
	exprs []string
}

func flinkFnCases() []genCase {
	var specs []flinkFnSpec
	specs = append(specs, flinkStringSpecs...)
	specs = append(specs, flinkRegexpSpecs...)
	specs = append(specs, flinkMathSpecs...)
	specs = append(specs, flinkCoalesceSpecs()...)
	specs = append(specs, flinkTimeSpecs()...)
	specs = append(specs, flinkCastSpecs...)
	out := make([]genCase, 0, len(specs))
	for _, s := range specs {
		out = append(out, genCase{
			name:   "fn-flink-" + s.name,
			header: []string{"table: f (" + s.cols + ") json"},
			query:  fmt.Sprintf("SELECT %s FROM f", strings.Join(s.exprs, ", ")),
			data:   map[string]string{"f": s.row + "\n"},
		})
	}
	return out
}

// StringFunctionsITCase: ELT, REGEXP_EXTRACT's return type, TRANSLATE.
var flinkStringSpecs = []flinkFnSpec{
	{"string-elt", "f0 INT, f1 STRING", `{"f0":null,"f1":null}`, []string{
		"ELT(f0, 'a', 'b')", "ELT(1, f1)", "ELT(1, 'a', f1)", "ELT(1, 'scala', 'java')", "ELT(2, 'a', 'b')"}},
	{"string-elt-out-of-range", "f0 INT", `{"f0":4}`, []string{"ELT(f0, 'a', 'b', 'c')"}},
	{"string-regexp-extract-type", "f0 STRING, f1 STRING", `{"f0":"22","f1":"ABC"}`, []string{
		"REGEXP_EXTRACT(f0,'[A-Z]+')", "REGEXP_EXTRACT(f1, '[A-Z]+')"}},
	{"string-translate-null-empty", "f0 STRING, f1 STRING, f2 STRING", `{"f0":null,"f1":"www.apache.org","f2":""}`, []string{
		"TRANSLATE(f0, 'abc', '123')", "TRANSLATE(f1, f0, '123')", "TRANSLATE(f1, 'abc', f0)",
		"TRANSLATE(f2, 'abc', '123')", "TRANSLATE(f1, f2, '123')", "TRANSLATE(f1, 'abc', f2)"}},
	{"string-translate-lengths", "f1 STRING", `{"f1":"www.apache.org"}`, []string{
		"TRANSLATE(f1, 'abcde', '123')", "TRANSLATE(f1, 'abcde.', '123')", "TRANSLATE(f1, 'abc', '12345')",
		"TRANSLATE(f1, 'abcae', '12345')", "TRANSLATE(f1, '...', '123')", "TRANSLATE(f1, 'ABCDE', '12345')"}},
	{"string-translate-unicode", "f3 STRING, f4 STRING", `{"f3":"翻译test，测试","f4":"www.😀.org"}`, []string{
		"TRANSLATE(f3, '翻译测试test，', '测试翻译tset。')", "TRANSLATE(f3, '翻译测试test，', 'test翻译  ')",
		"TRANSLATE(f4, '.😀', '😀.')", "TRANSLATE(f4, '😀w', '笑α')"}},
	{"string-translate-normal", "f1 STRING", `{"f1":"www.apache.org"}`, []string{
		"TRANSLATE('www.apache.org', 'abc', '123')", "TRANSLATE(TRANSLATE('www.apache.org', 'abc', '123'), 'abc', '123')",
		"TRANSLATE(f1, 'abc', '123')", "TRANSLATE(f1, 'abc', 'ABC')", "TRANSLATE(f1, 'abcworg', '123 ')"}},
}

// RegexpFunctionsITCase: REGEXP_COUNT, REGEXP_EXTRACT_ALL, REGEXP_INSTR.
var flinkRegexpSpecs = []flinkFnSpec{
	{"regexp-count", "f0 STRING, f1 STRING", `{"f0":null,"f1":"abcdeabde"}`, []string{
		"REGEXP_COUNT(f0, f1)", "REGEXP_COUNT(f1, f0)",
		"REGEXP_COUNT('hello world! Hello everyone!', 'Hello')", "REGEXP_COUNT('abcabcabc', 'abcab')",
		"REGEXP_COUNT('abcd', 'z')", `REGEXP_COUNT('^abc', '\^abc')`, `REGEXP_COUNT('a.b.c.d', '\.')`,
		`REGEXP_COUNT('a*b*c*d', '\*')`, `REGEXP_COUNT('abc123xyz456', '\d')`,
		`REGEXP_COUNT('Helloworld! Hello everyone!', '\bHello\b')`}},
	{"regexp-invalid", "f1 STRING", `{"f1":"abcdeabde"}`, []string{
		"REGEXP_COUNT(f1, '(')", "REGEXP_EXTRACT_ALL(f1, '(')", "REGEXP_INSTR(f1, '(')"}},
	{"regexp-extract-all-null-index", "f0 STRING, f1 STRING, f2 STRING", `{"f0":null,"f1":"abcdeabde","f2":"100-200, 300-400"}`, []string{
		"REGEXP_EXTRACT_ALL(f0, f1)", "REGEXP_EXTRACT_ALL(f1, f0)", "REGEXP_EXTRACT_ALL(f1, f1, NULL)",
		"REGEXP_EXTRACT_ALL(f1, '(abcdeabde)', -1)", "REGEXP_EXTRACT_ALL(f1, 'abcdeabde')",
		"REGEXP_EXTRACT_ALL(f1, '(abcdeabde)', 2)", "REGEXP_EXTRACT_ALL(f2, '[a-z]', 0)"}},
	{"regexp-extract-all-groups", "f1 STRING, f2 STRING", `{"f1":"abcdeabde","f2":"100-200, 300-400"}`, []string{
		"REGEXP_EXTRACT_ALL(f1, '(abcdeabde)|([a-z]*)', 2)", "REGEXP_EXTRACT_ALL(f1, 'ab((c)|(.?))de', 2)",
		"REGEXP_EXTRACT_ALL(f1, '(ab)([a-z]+)(e)', 2)", "REGEXP_EXTRACT_ALL(f1, '', 0)",
		`REGEXP_EXTRACT_ALL(f2, '(\d+)-(\d+)', 0)`, `REGEXP_EXTRACT_ALL(f2, '(\d+)-(\d+)', 1)`,
		`REGEXP_EXTRACT_ALL(f2, '(\d+)-(\d+)', 2)`, `REGEXP_EXTRACT_ALL(f2, '(\d+).*', 1)`}},
	{"regexp-replace-empty", "f0 STRING, f1 STRING", `{"f0":"abc","f1":"ab x"}`, []string{
		"REGEXP_REPLACE(f0, '[a-z]*', 'X')", "REGEXP_REPLACE(f1, 'x*', '-')", "REGEXP_REPLACE(f0, '(abc)|([a-z]*)', '-')"}},
	{"regexp-instr", "f0 STRING, f1 STRING, f2 STRING", `{"f0":null,"f1":"abcdeabde","f2":"100-200, 300-400"}`, []string{
		"REGEXP_INSTR(f0, f1)", "REGEXP_INSTR(f1, f0)", "REGEXP_INSTR(f2, '[a-z]')",
		`REGEXP_INSTR('Helloworld! Hello everyone!', '\bHello\b')`, `REGEXP_INSTR('Helloworld!  Hello everyone!', '\bHello\b')`,
		"REGEXP_INSTR('hello world! Hello everyone!', 'Hello')", `REGEXP_INSTR('a.b.c.d', '\.')`,
		`REGEXP_INSTR('abc123xyz456', '\d')`, `REGEXP_INSTR(f2, '(\d+)-(\d+)')`}},
}

// MathFunctionsITCase: DECIMAL arithmetic's result types, MOD, ROUND,
// TRUNCATE. (Its INTERVAL times a number Flink 2.3's parser refuses in a
// SELECT list: left out.)
var flinkMathSpecs = []flinkFnSpec{
	{"math-decimal-plus-minus", "f0 DECIMAL(19, 0)", `{"f0":1514356320000}`, []string{"f0 + 6", "f0 + f0", "f0 - 6", "f0 - f0"}},
	{"math-decimal-divide", "f0 DECIMAL(19, 0)", `{"f0":1514356320000}`, []string{"f0 / 6", "f0 / f0"}},
	{"math-decimal-times", "f0 DECIMAL(19, 0)", `{"f0":1514356320000}`, []string{"f0 * 6", "f0 * f0"}},
	{"math-mod", "f0 DECIMAL(19, 0), f1 BIGINT, f2 INT", `{"f0":1514356320000,"f1":44,"f2":3}`, []string{"MOD(f0, f0)", "MOD(f0, 6)", "MOD(f1, f2)"}},
	{"math-round-truncate", "f0 DECIMAL(10, 5), f1 DECIMAL(6, 3)", `{"f0":12345.12345,"f1":123.456}`, []string{"ROUND(f0, 2)", "TRUNCATE(f1, 2)"}},
}

// CoalesceFunctionITCase and GreatestLeastFunctionsITCase.
func flinkCoalesceSpecs() []flinkFnSpec {
	basic := []struct{ name, typ, v1, v2 string }{
		{"boolean", "BOOLEAN", "true", "false"},
		{"tinyint", "TINYINT", "5", "10"},
		{"smallint", "SMALLINT", "100", "200"},
		{"int", "INT", "1", "2"},
		{"bigint", "BIGINT", "100", "200"},
		{"float", "FLOAT", "1.5", "2.5"},
		{"double", "DOUBLE", "1.5", "2.5"},
		{"decimal", "DECIMAL(5, 2)", "123.45", "234.56"},
		{"char", "CHAR(5)", `"hello"`, `"world"`},
		{"varchar", "VARCHAR(10)", `"hello"`, `"world"`},
		{"string", "STRING", `"hello"`, `"world"`},
		{"date", "DATE", `"2026-01-01"`, `"2026-12-31"`},
		{"time", "TIME(0)", `"12:34:56"`, `"23:59:59"`},
		{"timestamp", "TIMESTAMP(6)", `"2026-01-01 12:00:00"`, `"2026-12-31 23:59:59"`},
		{"array", "ARRAY<INT>", "[1,2,3]", "[4,5,6]"},
		{"map", "MAP<STRING, INT>", `{"a":1,"b":2}`, `{"c":3,"d":4}`},
		{"row", "ROW<a INT, b STRING>", `{"a":1,"b":"hello"}`, `{"a":2,"b":"world"}`},
	}
	var out []flinkFnSpec
	for _, b := range basic {
		out = append(out, flinkFnSpec{"coalesce-" + b.name, fmt.Sprintf("f0 %s, f1 %[1]s, f2 %[1]s", b.typ),
			fmt.Sprintf(`{"f0":null,"f1":%s,"f2":%s}`, b.v1, b.v2),
			[]string{"COALESCE(f0, f1)", "COALESCE(f1, f2)", "COALESCE(f0, f0, f2)"}})
	}
	promote := []struct{ name, t0, t2, v1, v2 string }{
		{"int-bigint", "INT", "BIGINT", "1", "2"},
		{"tinyint-int", "TINYINT", "INT", "7", "42"},
		{"timestamp-precision", "TIMESTAMP(0)", "TIMESTAMP(3)", `"2026-01-01 00:00:00"`, `"2026-01-01 00:00:00.123"`},
		{"decimal-same-scale", "DECIMAL(5, 2)", "DECIMAL(10, 2)", "1.23", "9876543.21"},
		{"decimal-scale", "DECIMAL(5, 2)", "DECIMAL(10, 4)", "1.23", "4.5678"},
	}
	for _, p := range promote {
		out = append(out, flinkFnSpec{"coalesce-promote-" + p.name, fmt.Sprintf("f0 %s, f1 %[1]s, f2 %s", p.t0, p.t2),
			fmt.Sprintf(`{"f0":null,"f1":%s,"f2":%s}`, p.v1, p.v2), []string{"COALESCE(f0, f1, f2)"}})
	}
	const glCols = "f0 INT, f1 INT, f2 INT, f3 DECIMAL(3, 2), f4 STRING, f5 STRING, f6 TIMESTAMP(3), f7 TIMESTAMP(3)"
	const glRow = `{"f0":null,"f1":1,"f2":2,"f3":3.14,"f4":"hello","f5":"world","f6":"1970-01-01 00:00:03.001","f7":"1970-01-01 00:00:02.001"}`
	out = append(out,
		flinkFnSpec{"greatest", glCols, glRow, []string{"CAST(GREATEST(f1, f3, f2) AS DECIMAL(3, 2))", "GREATEST(f0, f1, f2)", "GREATEST(f4, f5)", "GREATEST(f6, f7)"}},
		flinkFnSpec{"least", glCols, glRow, []string{"CAST(LEAST(f1, f3, f2) AS DECIMAL(3, 2))", "LEAST(f0, f1)", "LEAST(f4, f5)"}},
		flinkFnSpec{"greatest-mixed-invalid", glCols, glRow, []string{"GREATEST(f1, f4)"}},
		flinkFnSpec{"least-mixed-invalid", glCols, glRow, []string{"LEAST(f1, f4)"}},
	)
	return out
}

// TimeFunctionsITCase: EXTRACT, OVERLAPS, CEIL and FLOOR to a unit.
func flinkTimeSpecs() []flinkFnSpec {
	const exCols = "f0 TIMESTAMP(6), f1 TIMESTAMP(6), f2 TIMESTAMP(6), f3 DATE"
	const exRow = `{"f0":"2000-01-31 11:22:33.123456","f1":"2020-02-29 01:56:59.987654","f2":null,"f3":"1990-10-14"}`
	extract := func(units ...string) []string {
		var e []string
		for _, u := range units {
			for _, f := range []string{"f0", "f1", "f2"} {
				e = append(e, fmt.Sprintf("EXTRACT(%s FROM %s)", u, f))
			}
		}
		return e
	}
	out := []flinkFnSpec{
		{"time-extract-fraction", exCols, exRow, extract("NANOSECOND", "MICROSECOND", "MILLISECOND")},
		{"time-extract-clock", exCols, exRow, extract("SECOND", "MINUTE", "HOUR")},
		{"time-extract-calendar", exCols, exRow, append(extract("DAY", "WEEK", "MONTH", "QUARTER", "YEAR"), "EXTRACT(DAY FROM f3)")},
		{"time-extract-era", exCols, exRow, extract("DECADE", "CENTURY", "MILLENNIUM")},
		{"time-extract-dow", exCols, exRow, extract("DOW", "ISODOW", "DOY", "ISOYEAR")},
		{"time-extract-epoch", exCols, exRow, extract("EPOCH")},
		{"time-extract-nanosecond-date", exCols, exRow, []string{"EXTRACT(NANOSECOND FROM f3)"}},
		{"time-overlaps-time", "f0 TIME(0), f2 TIME(0), g0 TIME(0), g1 TIME(0), g2 TIME(0), g3 TIME(0), g4 TIME(0), g5 TIME(0)",
			`{"f0":"02:55:00","f2":"03:30:00","g0":"09:00:00","g1":"09:30:00","g2":"09:29:00","g3":"09:31:00","g4":"10:00:00","g5":"10:15:00"}`,
			[]string{"(f0, INTERVAL '1' HOUR) OVERLAPS (f2, INTERVAL '2' HOUR)", "(g0, g1) OVERLAPS (g2, g3)", "(g0, g4) OVERLAPS (g5, INTERVAL '3' HOUR)"}},
		{"time-overlaps-date", "f0 DATE, f2 DATE", `{"f0":"2011-03-10","f2":"2011-03-19"}`,
			[]string{"(f0, INTERVAL '10' DAY) OVERLAPS (f2, INTERVAL '10' DAY)"}},
		{"time-overlaps-timestamp", "f0 TIMESTAMP(6), f2 TIMESTAMP(6), f3 TIMESTAMP(6), f4 TIMESTAMP(6), f5 TIMESTAMP(6)",
			`{"f0":"2011-03-10 05:02:02","f2":"2011-03-10 05:02:02","f3":"2011-03-10 05:02:01","f4":"2011-03-10 05:02:02.001","f5":"2011-03-10 05:02:02.002"}`,
			[]string{"(f0, INTERVAL '0' SECOND) OVERLAPS (f2, f3)", "(f4, INTERVAL '0' SECOND) OVERLAPS (f5, f5)"}},
	}
	out = append(out, flinkFnSpec{"time-ceil-millisecond-micros", "f0 TIMESTAMP(6), f1 TIMESTAMP(6), f2 TIMESTAMP(6)",
		`{"f0":"2024-01-01 00:00:00.000001","f1":"2024-01-01 00:00:00.999500","f2":"2024-01-01 00:00:00.123"}`,
		[]string{"CEIL(f0 TO MILLISECOND)", "CEIL(f1 TO MILLISECOND)", "CEIL(f2 TO MILLISECOND)", "FLOOR(f1 TO MILLISECOND)",
			"CEIL(CAST(f0 AS TIMESTAMP_LTZ(6)) TO MILLISECOND)", "CEIL(f1 TO SECOND)"}})
	const cfCols = "f0 TIME(0), f1 DATE, f2 TIMESTAMP(6)"
	const cfRow = `{"f0":"11:22:33","f1":"1990-10-14","f2":"2020-02-29 01:56:59.987654"}`
	for _, fn := range []string{"CEIL", "FLOOR"} {
		lower := strings.ToLower(fn)
		var clock, date, ts []string
		for _, u := range []string{"MILLISECOND", "SECOND", "MINUTE", "HOUR"} {
			clock = append(clock, fmt.Sprintf("%s(f0 TO %s)", fn, u))
		}
		for _, u := range []string{"MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR", "DECADE", "CENTURY", "MILLENNIUM"} {
			date = append(date, fmt.Sprintf("%s(f1 TO %s)", fn, u))
			ts = append(ts, fmt.Sprintf("%s(f2 TO %s)", fn, u))
		}
		out = append(out,
			flinkFnSpec{"time-" + lower + "-time", cfCols, cfRow, clock},
			flinkFnSpec{"time-" + lower + "-date", cfCols, cfRow, date},
			flinkFnSpec{"time-" + lower + "-timestamp", cfCols, cfRow, ts},
		)
	}
	return out
}

// CastFunctionITCase (allTypesBasic) and CastFunctionMiscITCase: CAST of
// a column of each type, TRY_CAST to TIME, binary literals.
var flinkCastSpecs = []flinkFnSpec{
	{"cast-to-string-numbers", "d0 DECIMAL(4, 3), d1 DECIMAL(10, 5), t0 TINYINT, t1 TINYINT, s0 SMALLINT, s1 SMALLINT, i0 INT, i1 INT, b0 BIGINT, b1 BIGINT, bo BOOLEAN",
		`{"d0":9.87,"d1":1,"t0":5,"t1":-5,"s0":12345,"s1":-12345,"i0":1234567,"i1":-1234567,"b0":12345678901,"b1":-12345678901,"bo":true}`,
		[]string{"CAST(d0 AS STRING)", "CAST(d1 AS STRING)", "CAST(t0 AS STRING)", "CAST(t1 AS STRING)", "CAST(s0 AS STRING)", "CAST(s1 AS STRING)",
			"CAST(i0 AS STRING)", "CAST(i1 AS STRING)", "CAST(b0 AS STRING)", "CAST(b1 AS STRING)", "CAST(bo AS STRING)"}},
	{"cast-to-string-floats", "f0 FLOAT, f1 FLOAT, d0 DOUBLE, d1 DOUBLE", `{"f0":123.456,"f1":-123.456,"d0":123.456789,"d1":-123.456789}`,
		[]string{"CAST(f0 AS STRING)", "CAST(f1 AS STRING)", "CAST(d0 AS STRING)", "CAST(d1 AS STRING)"}},
	{"cast-to-string-times", "dt DATE, tm TIME(0), ts6 TIMESTAMP(6), ts4 TIMESTAMP(4), ts3 TIMESTAMP(3), tsn TIMESTAMP(4)",
		`{"dt":"2021-09-24","tm":"12:34:56","ts6":"2021-09-24 12:34:56.123456","ts4":"2021-09-24 12:34:56.1234","ts3":"2021-09-24 12:34:56.1","tsn":null}`,
		[]string{"CAST(dt AS STRING)", "CAST(tm AS STRING)", "CAST(ts6 AS STRING)", "CAST(ts4 AS STRING)", "CAST(ts3 AS STRING)", "CAST(tsn AS STRING)"}},
	{"cast-to-string-chars", "c0 VARCHAR(5), c1 VARCHAR(10), c2 STRING, c3 STRING", `{"c0":"Flink","c1":"Flink","c2":"Apache Flink","c3":null}`,
		[]string{"CAST(c0 AS STRING)", "CAST(c1 AS STRING)", "CAST(c2 AS STRING)", "CAST(c3 AS STRING)"}},
	{"cast-to-string-char-padded", "c0 CHAR(5)", `{"c0":"foo"}`, []string{"CAST(c0 AS STRING)"}},
	{"cast-interval-to-string", "x INT", `{"x":1}`, []string{
		"CAST(INTERVAL '7' YEAR AS STRING)", "CAST(INTERVAL '5' MONTH AS STRING)", "CAST(INTERVAL '10-3' YEAR TO MONTH AS STRING)",
		"CAST(INTERVAL '1027-10' YEAR(4) TO MONTH AS STRING)", "CAST(INTERVAL '36' HOUR AS STRING)", "CAST(INTERVAL '1 10:17:36.789' DAY TO SECOND AS STRING)"}},
	{"cast-to-varchar-truncate", "a VARCHAR(5), b STRING, c DATE", `{"a":"foo","b":"abcdef","c":"2021-09-24"}`, []string{
		"CAST(a AS VARCHAR(3))", "CAST(b AS VARCHAR(3))", "CAST(b AS CHAR(3))", "CAST(c AS CHAR(3))", "CAST(a AS CHAR(3))"}},
	{"cast-char-pad", "a VARCHAR(3)", `{"a":"foo"}`, []string{"CAST(a AS CHAR(5))"}},
	{"cast-to-boolean", "a CHAR(4), b VARCHAR(5), c STRING, t0 TINYINT, t1 TINYINT, t2 TINYINT, s0 SMALLINT, s1 SMALLINT, i0 INT, i1 INT, b0 BIGINT, b1 BIGINT, bo BOOLEAN",
		`{"a":"true","b":"FalsE","c":"TRUE","t0":5,"t1":-5,"t2":0,"s0":12345,"s1":0,"i0":-1234567,"i1":0,"b0":12345678901,"b1":0,"bo":false}`,
		[]string{"CAST(a AS BOOLEAN)", "CAST(b AS BOOLEAN)", "CAST(c AS BOOLEAN)", "CAST(t0 AS BOOLEAN)", "CAST(t1 AS BOOLEAN)", "CAST(t2 AS BOOLEAN)",
			"CAST(s0 AS BOOLEAN)", "CAST(s1 AS BOOLEAN)", "CAST(i0 AS BOOLEAN)", "CAST(i1 AS BOOLEAN)", "CAST(b0 AS BOOLEAN)", "CAST(b1 AS BOOLEAN)", "CAST(bo AS BOOLEAN)"}},
	{"cast-approx-to-boolean", "d DECIMAL(4, 3), f FLOAT, g DOUBLE", `{"d":4.3,"f":-123.456,"g":0}`,
		[]string{"CAST(d AS BOOLEAN)", "CAST(f AS BOOLEAN)", "CAST(g AS BOOLEAN)"}},
	{"cast-to-boolean-bad", "a STRING", `{"a":"Apache Flink"}`, []string{"CAST(a AS BOOLEAN)"}},
	{"cast-to-boolean-empty", "a STRING", `{"a":""}`, []string{"CAST(a AS BOOLEAN)"}},
	{"cast-to-decimal", "s0 STRING, s1 STRING, bo0 BOOLEAN, bo1 BOOLEAN, d DECIMAL(4, 3), t TINYINT, sm SMALLINT, i INT, b BIGINT, f FLOAT, g DOUBLE",
		`{"s0":"1.234","s1":"1.2","bo0":true,"bo1":false,"d":9.87,"t":-1,"sm":3,"i":42,"b":8,"f":-12.345,"g":12.678}`,
		[]string{"CAST(s0 AS DECIMAL(5, 3))", "CAST(s1 AS DECIMAL(5, 3))", "CAST(bo0 AS DECIMAL(5, 3))", "CAST(bo1 AS DECIMAL(5, 3))", "CAST(d AS DECIMAL(5, 3))",
			"CAST(t AS DECIMAL(5, 3))", "CAST(sm AS DECIMAL(5, 3))", "CAST(i AS DECIMAL(5, 3))", "CAST(b AS DECIMAL(5, 3))", "CAST(f AS DECIMAL(5, 3))", "CAST(g AS DECIMAL(5, 3))"}},
	{"cast-to-decimal-bad", "a STRING", `{"a":"Apache"}`, []string{"CAST(a AS DECIMAL(5, 3))"}},
	{"cast-string-to-binary", "a CHAR(4), b VARCHAR(8), c STRING, d VARCHAR(4), e STRING", `{"a":"666F","b":"666f","c":"AAbbcCdD","d":"FC","e":"df"}`,
		[]string{"CAST(a AS BINARY(2))", "CAST(b AS BINARY(2))", "CAST(c AS BINARY(2))", "CAST(d AS BINARY(2))", "CAST(e AS BINARY(2))"}},
	{"cast-string-to-bytes", "a CHAR(4), b VARCHAR(8), c STRING", `{"a":"666f","b":"666F","c":"aaBBCcDdEe"}`,
		[]string{"CAST(a AS BYTES)", "CAST(b AS BYTES)", "CAST(c AS BYTES)", "CAST(c AS VARBINARY(4))"}},
	{"cast-binary-pad", "a STRING, b BYTES", `{"a":"a","b":"bw=="}`, []string{
		"CAST(a AS BINARY(3))", "CAST(a AS VARBINARY(3))", "CAST(b AS BINARY(2))", "CAST(CAST(a AS BINARY(3)) AS STRING)"}},
	{"cast-binary-literal", "x STRING", `{"x":"foo"}`, []string{
		"CAST(CAST(x'68656C6C6F20636F6465' AS BINARY(10)) AS VARCHAR)", "CAST(CAST(x'68656C6C6F2063617374' AS BINARY(10)) AS VARCHAR)"}},
	{"cast-try-time", "f0 STRING, f1 STRING, f2 TIME(0)", `{"f0":"Flink","f1":"12:34:56","f2":"12:34:56"}`, []string{
		"TRY_CAST(f0 AS TIME)", "TRY_CAST(f1 AS TIME)", "TRY_CAST(f2 AS STRING)"}},
	{"cast-row", "f0 ROW<i1 INT, i2 INT, s STRING>", `{"f0":{"i1":12,"i2":42,"s":"Hello"}}`, []string{
		"CAST(f0 AS ROW<a STRING, b BIGINT, c STRING>)", "TRY_CAST(f0 AS ROW<a TINYINT, b DOUBLE, c INT>)"}},
}

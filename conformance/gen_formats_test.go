package conformance

import (
	"fmt"
	"strings"
)

// A typeGroup is a set of columns and the JSON rows that hold their text
// forms' edge cases; each goes to print, csv and json.
var typeGroups = []struct {
	name    string
	columns string
	rows    string
}{
	{"boolean", "id INT, x BOOLEAN", `{"id":1,"x":true}` + "\n" + `{"id":2,"x":false}` + "\n" + `{"id":3,"x":null}` + "\n"},
	{"integers", "id INT, x INT, y BIGINT", `{"id":1,"x":0,"y":0}` + "\n" + `{"id":2,"x":-2147483648,"y":-9223372036854775808}` + "\n" + `{"id":3,"x":2147483647,"y":9223372036854775807}` + "\n" + `{"id":4,"x":null,"y":null}` + "\n"},
	{"double", "id INT, x DOUBLE", jsonRows("x", "0.0", "-0.0", "1.0", "0.1", "100.0", "1234567.0", "12345678.0", "1.0E7", "0.001", "1.0E-4", "1.0E-5", "123456789.123", "1.7976931348623157E308", "4.9E-324", "-2.5", "null")},
	{"float", "id INT, x FLOAT", jsonRows("x", "0.0", "1.0", "0.1", "1.0E7", "1.0E-4", "3.4028235E38", "-2.5", "16777216.0", "null")},
	{"decimal", "id INT, x DECIMAL(12, 4), y DECIMAL(18, 12)", `{"id":1,"x":0,"y":0}` + "\n" + `{"id":2,"x":1.5,"y":0.00000025}` + "\n" + `{"id":3,"x":-99999999.9999,"y":0.000001}` + "\n" + `{"id":4,"x":0.0001,"y":123456.123456789012}` + "\n" + `{"id":5,"x":null,"y":null}` + "\n"},
	{"decimal-scale0", "id INT, x DECIMAL(10, 0)", jsonRows("x", "0", "10", "-123456789", "null")},
	{"string", "id INT, x STRING", `{"id":1,"x":"plain"}` + "\n" + `{"id":2,"x":"with, comma"}` + "\n" + `{"id":3,"x":"quote \" and 'single'"}` + "\n" + `{"id":4,"x":"back\\slash"}` + "\n" + `{"id":5,"x":"ünïcødé 日本 😀"}` + "\n" + `{"id":6,"x":""}` + "\n" + `{"id":7,"x":null}` + "\n" + `{"id":8,"x":"tab\there"}` + "\n" + `{"id":9,"x":"[brackets]"}` + "\n"},
	{"string-newline", "id INT, x STRING", `{"id":1,"x":"two\nlines"}` + "\n" + `{"id":2,"x":"cr\rx"}` + "\n"},
	{"varchar", "id INT, x VARCHAR(5)", `{"id":1,"x":"abc"}` + "\n" + `{"id":2,"x":null}` + "\n"},
	{"date", "id INT, x DATE", jsonRows("x", `"2024-01-15"`, `"1970-01-01"`, `"1969-12-31"`, `"0001-01-01"`, `"9999-12-31"`, `"2000-02-29"`, "null")},
	{"timestamp3", "id INT, x TIMESTAMP(3)", jsonRows("x", `"2024-01-15 10:30:45.123"`, `"2024-01-15 10:30:00"`, `"2024-01-15 00:00:00"`, `"2024-01-15 10:30:45.100"`, `"1969-12-31 23:59:59.999"`, `"1970-01-01 00:00:00.001"`, "null")},
	{"timestamp0", "id INT, x TIMESTAMP(0)", jsonRows("x", `"2024-01-15 10:30:45"`, `"2024-01-15 10:30:00"`, "null")},
	{"timestamp6", "id INT, x TIMESTAMP(6)", jsonRows("x", `"2024-01-15 10:30:45.123456"`, `"2024-01-15 10:30:45.000001"`, `"2024-01-15 10:30:45.5"`, "null")},
	{"timestamp-ltz", "id INT, x TIMESTAMP_LTZ(3)", jsonRows("x", `"2024-01-15 10:30:45.123Z"`, `"2024-01-15 10:30:00Z"`, `"1970-01-01 00:00:00Z"`, "null")},
	{"bytes", "id INT, x BYTES", jsonRows("x", `"aGVsbG8="`, `""`, `"AP8="`, "null")},
}

func jsonRows(col string, values ...string) string {
	var b strings.Builder
	for i, v := range values {
		fmt.Fprintf(&b, "{\"id\":%d,\"%s\":%s}\n", i+1, col, v)
	}
	return b.String()
}

func typeCases() []genCase {
	var out []genCase
	for _, g := range typeGroups {
		table := fmt.Sprintf("table: ty (%s) json", g.columns)
		data := map[string]string{"ty": g.rows}
		out = append(out,
			genCase{name: "type-" + g.name + "-print", header: []string{table}, query: "SELECT * FROM ty", data: data},
			genCase{name: "type-" + g.name + "-csv", header: []string{"mode: batch", table, fmt.Sprintf("sink: csv (%s)", g.columns)}, query: "SELECT * FROM ty", data: data},
			genCase{name: "type-" + g.name + "-json", header: []string{"mode: batch", table, fmt.Sprintf("sink: json (%s)", g.columns)}, query: "SELECT * FROM ty", data: data},
		)
	}
	// DECIMAL text of computed values, in the three outputs.
	decimals := "SELECT id, CAST(0 AS DECIMAL(10, 7)) AS z7, CAST(0.00000025 AS DECIMAL(18, 12)) AS small, CAST(123.45 AS DECIMAL(10, 2)) AS plain, CAST(0.000001 AS DECIMAL(10, 6)) AS micro, CAST(0.0000001 AS DECIMAL(10, 7)) AS tenth_micro FROM t WHERE id = 1"
	decCols := "id INT, z7 DECIMAL(10, 7), small DECIMAL(18, 12), plain DECIMAL(10, 2), micro DECIMAL(10, 6), tenth_micro DECIMAL(10, 7)"
	out = append(out,
		genCase{name: "type-decimal-text-print", header: []string{tableT}, query: decimals, data: map[string]string{"t": dataT}},
		genCase{name: "type-decimal-text-csv", header: []string{"mode: batch", tableT, "sink: csv (" + decCols + ")"}, query: decimals, data: map[string]string{"t": dataT}},
		genCase{name: "type-decimal-text-json", header: []string{"mode: batch", tableT, "sink: json (" + decCols + ")"}, query: decimals, data: map[string]string{"t": dataT}},
		genCase{name: "type-null-print", header: []string{tableT}, query: "SELECT id, CAST(NULL AS INT), CAST(NULL AS STRING), CAST(NULL AS TIMESTAMP(3)) FROM t WHERE id = 4", data: map[string]string{"t": dataT}},
		genCase{name: "type-all-print-batch", header: []string{"mode: batch", tableT}, query: "SELECT * FROM t", data: map[string]string{"t": dataT}},
	)
	return out
}

// formatCase: a source format's edge case, read by SELECT * (or the
// query given).
type formatCase struct {
	name, table, query, data string
}

var formatInputs = []formatCase{
	// csv
	{"csv-quoted", "(id INT, s STRING) csv", "", "1,\"a,b\"\n2,\"say \"\"hi\"\"\"\n3,plain\n"},
	{"csv-quoted-newline", "(id INT, s STRING) csv", "", "1,\"two\nlines\"\n2,x\n"},
	{"csv-empty-string", "(id INT, s STRING) csv", "", "1,\n2,\"\"\n3,x\n"},
	{"csv-empty-int", "(id INT, n INT) csv", "", "1,\n2,5\n"},
	{"csv-types", "(id INT, bo BOOLEAN, b BIGINT, d DOUBLE, m DECIMAL(8, 3), dt DATE, ts TIMESTAMP(3)) csv", "", "1,true,-5,2.5,1.250,2024-01-02,2024-01-02 03:04:05.678\n2,false,0,1e3,-0.5,1970-01-01,2024-01-02 03:04:05\n3,TRUE,10,-0.0,7,2000-02-29,2024-01-02 03:04:05.1\n"},
	{"csv-double-special", "(id INT, d DOUBLE) csv", "", "1,NaN\n2,Infinity\n3,-Infinity\n4,1.5E-7\n"},
	{"csv-decimal-exponent", "(id INT, m DECIMAL(10, 4)) csv", "", "1,2.5E-3\n2,1e2\n3,12.34567\n"},
	{"csv-bad-int", "(id INT, n INT) csv", "", "1,5\n2,x5\n"},
	{"csv-int-spaces", "(id INT, n INT) csv", "", "1, 5\n"},
	{"csv-crlf", "(id INT, s STRING) csv", "", "1,a\r\n2,b\r\n"},
	{"csv-unicode", "(id INT, s STRING) csv", "", "1,ünïcødé\n2,日本\n"},
	{"csv-timestamp-t", "(id INT, ts TIMESTAMP(3)) csv", "", "1,2024-01-02T03:04:05\n"},
	{"csv-too-few-fields", "(id INT, s STRING, n INT) csv", "", "1,a\n"},
	{"csv-too-many-fields", "(id INT, s STRING) csv", "", "1,a,extra\n"},
	{"csv-bool-words", "(id INT, bo BOOLEAN) csv", "", "1,true\n2,False\n3,yes\n"},
	// json
	{"json-missing-field", "(id INT, s STRING, n INT) json", "", "{\"id\":1,\"s\":\"a\"}\n{\"id\":2}\n"},
	{"json-extra-field", "(id INT, s STRING) json", "", "{\"id\":1,\"s\":\"a\",\"zz\":[1,2]}\n"},
	{"json-number-as-string", "(id INT, n INT, d DOUBLE, b BIGINT) json", "", "{\"id\":1,\"n\":\"5\",\"d\":\"2.5\",\"b\":\"-9\"}\n"},
	{"json-number-into-string", "(id INT, s STRING) json", "", "{\"id\":1,\"s\":42}\n{\"id\":2,\"s\":1.50}\n{\"id\":3,\"s\":true}\n"},
	{"json-object-into-string", "(id INT, s STRING) json", "", "{\"id\":1,\"s\":{\"a\":1,\"b\":[true,null]}}\n{\"id\":2,\"s\":[1, 2]}\n"},
	{"json-float-into-int", "(id INT, n INT) json", "", "{\"id\":1,\"n\":1.7}\n"},
	{"json-bool-string", "(id INT, bo BOOLEAN) json", "", "{\"id\":1,\"bo\":\"true\"}\n{\"id\":2,\"bo\":false}\n"},
	{"json-timestamp-iso", "(id INT, ts TIMESTAMP(3)) json", "", "{\"id\":1,\"ts\":\"2024-01-02T03:04:05.678\"}\n"},
	{"json-timestamp-short-fraction", "(id INT, ts TIMESTAMP(3)) json", "", "{\"id\":1,\"ts\":\"2024-01-02 03:04:05.6\"}\n{\"id\":2,\"ts\":\"2024-01-02 03:04:05\"}\n"},
	{"json-null-values", "(id INT, s STRING, n INT, dt DATE) json", "", "{\"id\":1,\"s\":null,\"n\":null,\"dt\":null}\n"},
	{"json-bad-line", "(id INT) json", "", "{\"id\":1}\n{not json\n"},
	{"json-decimal-exponent", "(id INT, m DECIMAL(10, 4)) json", "", "{\"id\":1,\"m\":2.5E-3}\n{\"id\":2,\"m\":\"1e2\"}\n{\"id\":3,\"m\":12.34567}\n"},
	{"json-int-overflow", "(id INT, n INT) json", "", "{\"id\":1,\"n\":3000000000}\n"},
	{"json-unicode-escape", "(id INT, s STRING) json", "", "{\"id\":1,\"s\":\"caf\\u00e9 \\\"q\\\" \\\\ \\n\"}\n"},
	{"json-case-sensitive", "(id INT, Name STRING) json", "", "{\"id\":1,\"name\":\"lower\",\"Name\":\"upper\"}\n"},
	{"json-duplicate-key", "(id INT, s STRING) json", "", "{\"id\":1,\"s\":\"first\",\"s\":\"second\"}\n"},
	// debezium-json
	{"debezium-ops", "(id INT, v STRING) debezium-json key id", "", `{"before":null,"after":{"id":1,"v":"a"},"op":"c"}
{"before":null,"after":{"id":2,"v":"b"},"op":"r"}
{"before":{"id":1,"v":"a"},"after":{"id":1,"v":"a2"},"op":"u"}
{"before":{"id":2,"v":"b"},"after":null,"op":"d"}
`},
	{"debezium-agg", "(id INT, v STRING) debezium-json key id", "SELECT v, COUNT(*) FROM c GROUP BY v", `{"before":null,"after":{"id":1,"v":"a"},"op":"c"}
{"before":null,"after":{"id":2,"v":"a"},"op":"c"}
{"before":{"id":1,"v":"a"},"after":{"id":1,"v":"b"},"op":"u"}
{"before":{"id":2,"v":"a"},"after":null,"op":"d"}
`},
	{"debezium-schema-wrapped", "(id INT, v STRING) debezium-json key id", "", `{"schema":{"type":"struct"},"payload":{"before":null,"after":{"id":1,"v":"a"},"op":"c"}}
`},
	{"debezium-update-no-before", "(id INT, v STRING) debezium-json key id", "", `{"before":null,"after":{"id":1,"v":"a"},"op":"u"}
`},
	{"debezium-unknown-op", "(id INT, v STRING) debezium-json key id", "", `{"before":null,"after":{"id":1,"v":"a"},"op":"x"}
`},
	{"debezium-filter", "(id INT, v STRING) debezium-json key id", "SELECT id, v FROM c WHERE v <> 'a2'", `{"before":null,"after":{"id":1,"v":"a"},"op":"c"}
{"before":{"id":1,"v":"a"},"after":{"id":1,"v":"a2"},"op":"u"}
{"before":{"id":1,"v":"a2"},"after":{"id":1,"v":"a3"},"op":"u"}
`},
	{"debezium-types", "(id INT, d DOUBLE, m DECIMAL(8, 2), ts TIMESTAMP(3), bo BOOLEAN) debezium-json key id", "", `{"before":null,"after":{"id":1,"d":1.5,"m":3.25,"ts":"2024-01-02 03:04:05.123","bo":true},"op":"c"}
`},
	// canal-json
	{"canal-ops", "(id INT, v STRING) canal-json key id", "", `{"data":[{"id":1,"v":"a"},{"id":2,"v":"b"}],"type":"INSERT","database":"db","table":"t"}
{"data":[{"id":1,"v":"a2"}],"old":[{"v":"a"}],"type":"UPDATE","database":"db","table":"t"}
{"data":[{"id":2,"v":"b"}],"type":"DELETE","database":"db","table":"t"}
`},
	{"canal-create-skipped", "(id INT, v STRING) canal-json key id", "", `{"data":null,"type":"CREATE","database":"db","table":"t","sql":"CREATE TABLE t (id INT)"}
{"data":[{"id":1,"v":"a"}],"type":"INSERT","database":"db","table":"t"}
`},
	{"canal-unknown-type", "(id INT, v STRING) canal-json key id", "", `{"data":[{"id":1,"v":"a"}],"type":"ALTER","database":"db","table":"t"}
`},
	{"canal-agg", "(id INT, v STRING) canal-json key id", "SELECT v, COUNT(*) FROM c GROUP BY v", `{"data":[{"id":1,"v":"a"},{"id":2,"v":"a"}],"type":"INSERT"}
{"data":[{"id":1,"v":"b"}],"old":[{"v":"a"}],"type":"UPDATE"}
`},
	{"canal-old-null", "(id INT, v STRING) canal-json key id", "", `{"data":[{"id":1,"v":null}],"type":"INSERT"}
{"data":[{"id":1,"v":"x"}],"old":[{"v":null}],"type":"UPDATE"}
`},
	// maxwell-json
	{"maxwell-ops", "(id INT, v STRING) maxwell-json key id", "", `{"database":"db","table":"t","type":"insert","data":{"id":1,"v":"a"}}
{"database":"db","table":"t","type":"insert","data":{"id":2,"v":"b"}}
{"database":"db","table":"t","type":"update","data":{"id":1,"v":"a2"},"old":{"v":"a"}}
{"database":"db","table":"t","type":"delete","data":{"id":2,"v":"b"}}
`},
	{"maxwell-bootstrap", "(id INT, v STRING) maxwell-json key id", "", `{"database":"db","table":"t","type":"bootstrap-insert","data":{"id":1,"v":"a"}}
`},
	{"maxwell-agg", "(id INT, v STRING) maxwell-json key id", "SELECT v, COUNT(*) FROM c GROUP BY v", `{"type":"insert","data":{"id":1,"v":"a"}}
{"type":"insert","data":{"id":2,"v":"a"}}
{"type":"delete","data":{"id":1,"v":"a"}}
`},
	// ogg-json
	{"ogg-ops", "(id INT, v STRING) ogg-json key id", "", `{"table":"S.T","op_type":"I","op_ts":"2024-01-02 03:04:05.000000","after":{"id":1,"v":"a"}}
{"table":"S.T","op_type":"I","op_ts":"2024-01-02 03:04:05.000000","after":{"id":2,"v":"b"}}
{"table":"S.T","op_type":"U","op_ts":"2024-01-02 03:04:06.000000","before":{"id":1,"v":"a"},"after":{"id":1,"v":"a2"}}
{"table":"S.T","op_type":"D","op_ts":"2024-01-02 03:04:07.000000","before":{"id":2,"v":"b"}}
`},
	{"ogg-truncate", "(id INT, v STRING) ogg-json key id", "", `{"table":"S.T","op_type":"T","op_ts":"2024-01-02 03:04:05.000000"}
`},
	{"ogg-agg", "(id INT, v STRING) ogg-json key id", "SELECT v, COUNT(*) FROM c GROUP BY v", `{"table":"S.T","op_type":"I","after":{"id":1,"v":"a"}}
{"table":"S.T","op_type":"U","before":{"id":1,"v":"a"},"after":{"id":1,"v":"b"}}
`},
}

// formatOutputs: changelog formats and csv/json written by a file sink.
var formatOutputs = []struct {
	name, sink, query string
}{
	{"csv-out-escaping", "csv (id INT, s STRING)", "SELECT id, s FROM t"},
	{"json-out-escaping", "json (id INT, s STRING)", "SELECT id, s FROM t"},
	{"csv-out-all", "csv (id INT, i INT, b BIGINT, d DOUBLE, f FLOAT, m DECIMAL(10, 2), s STRING, dt DATE, ts TIMESTAMP(3), bo BOOLEAN)", "SELECT * FROM t"},
	{"json-out-all", "json (id INT, i INT, b BIGINT, d DOUBLE, f FLOAT, m DECIMAL(10, 2), s STRING, dt DATE, ts TIMESTAMP(3), bo BOOLEAN)", "SELECT * FROM t"},
	{"json-out-computed", "json (id INT, x DOUBLE, y STRING, z BIGINT)", "SELECT id, d * 2 AS x, UPPER(s) AS y, CAST(i AS BIGINT) + 1 AS z FROM t WHERE id < 4"},
	{"csv-out-computed", "csv (id INT, x DOUBLE, y STRING, z BIGINT)", "SELECT id, d * 2, UPPER(s), CAST(i AS BIGINT) + 1 FROM t WHERE id < 4"},
}

func formatCases() []genCase {
	var out []genCase
	for _, f := range formatInputs {
		name := "c"
		q := f.query
		if q == "" {
			q = "SELECT * FROM c"
		}
		out = append(out, genCase{name: "format-" + f.name, header: []string{"table: " + name + " " + f.table}, query: q, data: map[string]string{name: f.data}})
		if strings.Contains(f.table, "-json key") && f.query == "" {
			out = append(out, genCase{name: "format-" + f.name + "-batch", header: []string{"mode: batch", "table: " + name + " " + f.table}, query: q, data: map[string]string{name: f.data}})
		}
	}
	for _, f := range formatOutputs {
		out = append(out, genCase{name: "format-" + f.name, header: []string{"mode: batch", tableT, "sink: " + f.sink}, query: f.query, data: map[string]string{"t": dataT}})
	}
	return out
}

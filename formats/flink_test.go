package formats

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// flinkCase is one file read by Flink's filesystem connector with a
// format's options and by etld's decoder with the same options in etld's
// spelling: both must give the same rows, or both refuse the file.
type flinkCase struct {
	name   string
	format string // Flink's format identifier: csv or json
	schema string // column definitions, in both dialects
	data   string
	flink  string // Flink's WITH options after 'format', e.g. 'csv.null-literal'='N'
	etld   string // the etld format mapping, e.g. {type: csv, null_literal: N}
	// skipped is the number of records Flink's ignore-parse-errors drops
	// silently and etld hands to on_error instead.
	skipped int
}

var flinkCases = []flinkCase{
	// csv: Flink's empty-field rule and the options.
	{name: "csv empty fields", format: "csv", schema: "s STRING, i INT, c STRING",
		data: ",2,\n\"\",3,x\n", etld: "csv"},
	{name: "csv empty INT fails", format: "csv", schema: "s STRING, i INT, c STRING",
		data: "a,,1\n", etld: "csv"},
	{name: "csv empty INT with ignore-parse-errors", format: "csv", schema: "s STRING, i INT, c STRING",
		data: "a,,1\nb,x,2\n", flink: `'csv.ignore-parse-errors'='true'`, etld: "{type: csv, ignore_parse_errors: true}"},
	{name: "csv null-literal empty", format: "csv", schema: "s STRING, i INT, c STRING",
		data: ",,2\n", flink: `'csv.null-literal'=''`, etld: `{type: csv, null_literal: ""}`},
	{name: "csv null-literal N", format: "csv", schema: "s STRING, i INT, c STRING",
		data: "N,N,\n", flink: `'csv.null-literal'='N'`, etld: `{type: csv, null_literal: N}`},
	{name: "csv one column blank line", format: "csv", schema: "s STRING",
		data: "a\n\nb\n", etld: "csv"},
	// etld skips a blank line in a multi-column schema; Flink does so
	// with allow-comments, and without it reads a record of one empty
	// field, which fails the job (docs/pipeline-format.md says so).
	{name: "csv blank lines skipped", format: "csv", schema: "s STRING, i INT",
		data: "a,1\n\n\nb,2\n", flink: `'csv.allow-comments'='true'`, etld: "csv"},
	{name: "csv escape and comments", format: "csv", schema: "s STRING, i INT, c STRING",
		data:  "a\\,b,1,\"q\\\"x\\n\"\n#c,6,\"z\nnext,8,\\tt\n",
		flink: `'csv.escape-character'='\', 'csv.allow-comments'='true'`, etld: `{type: csv, escape_character: '\', allow_comments: true}`},
	{name: "csv short record", format: "csv", schema: "s STRING, i INT, c STRING",
		data: "short,4\n", etld: "csv"},
	{name: "csv short record with ignore-parse-errors", format: "csv", schema: "s STRING, i INT, c STRING",
		data: "short,4\n", flink: `'csv.ignore-parse-errors'='true'`, etld: "{type: csv, ignore_parse_errors: true}"},
	{name: "csv long record", format: "csv", schema: "s STRING, i INT, c STRING",
		data: "long,5,x,y\n", etld: "csv"},
	{name: "csv long record with ignore-parse-errors", format: "csv", schema: "s STRING, i INT, c STRING",
		data: "ok,1,a\nlong,5,x,y\n", flink: `'csv.ignore-parse-errors'='true'`, etld: "{type: csv, ignore_parse_errors: true}", skipped: 1},
	{name: "csv trailing comma", format: "csv", schema: "s STRING, i INT, c STRING",
		data: "trail,7,t,\n", etld: "csv"},
	{name: "csv delimiter and quote", format: "csv", schema: "s STRING, i INT, c STRING",
		data: "'a;b';1;\"\n", flink: `'csv.field-delimiter'=';', 'csv.quote-character'=''''`, etld: `{type: csv, field_delimiter: ';', quote_character: "'"}`},
	{name: "csv quoting disabled", format: "csv", schema: "s STRING, i INT, c STRING",
		data: "\"a,1,b\"\n", flink: `'csv.disable-quote-character'='true'`, etld: "{type: csv, disable_quote_character: true}"},
	{name: "csv timestamps", format: "csv", schema: "t TIMESTAMP(3), d DATE",
		data: "2024-01-02 10:00:00.5,2024-01-02\n", etld: "csv"},
	// json.
	{name: "json sql timestamps", format: "json", schema: "t TIMESTAMP(3), l TIMESTAMP_LTZ(3)",
		data: `{"t":"2024-01-02 10:00:00.5","l":"2024-01-02 10:00:00.25Z"}` + "\n", etld: "json"},
	{name: "json iso timestamp under sql", format: "json", schema: "t TIMESTAMP(3), l TIMESTAMP_LTZ(3)",
		data: `{"t":"2024-01-02T10:00:00"}` + "\n", etld: "json"},
	{name: "json LTZ without Z", format: "json", schema: "t TIMESTAMP(3), l TIMESTAMP_LTZ(3)",
		data: `{"l":"2024-01-02 10:00:00"}` + "\n", etld: "json"},
	{name: "json iso-8601 timestamps", format: "json", schema: "t TIMESTAMP(3), l TIMESTAMP_LTZ(3)",
		data:  `{"t":"2024-01-02T10:00","l":"2024-01-02T10:00:00.5Z"}` + "\n",
		flink: `'json.timestamp-format.standard'='ISO-8601'`, etld: "{type: json, timestamp_format: iso-8601}"},
	{name: "json ignore-parse-errors", format: "json", schema: "i INT, s STRING, t TIMESTAMP(3)",
		data:  `{"i":"x","s":"ok","t":"yesterday"}` + "\n" + `{"i":` + "\n" + `{"i":2}` + "\n",
		flink: `'json.ignore-parse-errors'='true'`, etld: "{type: json, ignore_parse_errors: true}", skipped: 1},
	{name: "json fail-on-missing-field", format: "json", schema: "i INT, s STRING",
		data: `{"s":"x"}` + "\n", flink: `'json.fail-on-missing-field'='true'`, etld: "{type: json, fail_on_missing_field: true}"},
	{name: "json missing field", format: "json", schema: "i INT, s STRING",
		data: `{"s":"x"}` + "\n", etld: "json"},
}

// TestFlink compares etld's csv and json formats with Flink 2.x's in
// local mode, all scripts in one JVM: every flinkCase read by both, and
// every flinkWrite written by each and read by the other.
func TestFlink(t *testing.T) {
	testenv.Flink(t)
	dir := t.TempDir()
	var scripts []string
	for i, c := range flinkCases {
		data := filepath.Join(dir, fmt.Sprintf("case%d.%s", i, c.format))
		if err := os.WriteFile(data, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		with := fmt.Sprintf("'connector'='filesystem', 'path'='file://%s', 'format'='%s'", data, c.format)
		if c.flink != "" {
			with += ", " + c.flink
		}
		script := filepath.Join(dir, fmt.Sprintf("case%d.sql", i))
		sql := fmt.Sprintf("SET 'execution.runtime-mode' = 'batch';\nCREATE TABLE t (%s) WITH (%s);\nSELECT * FROM t;\n", c.schema, with)
		if err := os.WriteFile(script, []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, script)
	}
	writes := flinkWrites()
	scripts = append(scripts, writeScripts(t, dir, writes)...)
	results := testenv.RunFlink(t, 120*time.Second, scripts...)
	for i, c := range flinkCases {
		t.Run("read/"+c.name, func(t *testing.T) {
			rows, errs := readWithEtld(t, c)
			res := results[i]
			switch {
			case res.Err != "" && len(errs) == 0:
				t.Fatalf("Flink refuses the data (%s), etld reads %q", lastLine(res.Err), rows)
			case res.Err != "":
				return // both refuse it
			case len(errs) != c.skipped:
				t.Fatalf("etld refuses %d records (%v), Flink %d; Flink read %q", len(errs), errs, c.skipped, res.Out)
			}
			if got, want := strings.Join(rows, ""), res.Out; got != want {
				t.Errorf("etld read\n%s\nFlink read\n%s", got, want)
			}
		})
	}
	checkWrites(t, dir, writes, results[len(flinkCases):])
}

// readWithEtld decodes c.data as the file source does, giving the rows in
// Flink's print form and the records' errors.
func readWithEtld(t *testing.T, c flinkCase) (rows []string, errs []error) {
	t.Helper()
	r := connector.NewRegistry()
	Register(r)
	schema := parseSchema(t, c.schema)
	dec, err := r.NewDecoder(formatSpec(t, "format: "+c.etld), schema)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(c.data))
	if sp, ok := dec.(connector.Splitter); ok {
		sc.Split(sp.SplitFunc(connector.DefaultMaxRecordBytes))
	}
	for sc.Scan() {
		b := row.NewBatch(1, schema.Len())
		if err := dec.Decode(sc.Bytes(), b); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, ch := range b.Changes {
			rows = append(rows, ch.String()+"\n")
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	return rows, errs
}

// lastLine is the innermost cause of Flink's exception chain.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// flinkWrite is rows that Flink writes with a format's options and etld
// reads back, and that etld writes and Flink reads back: each side must
// read what the other writes as the rows themselves.
type flinkWrite struct {
	name   string
	format string
	schema string
	values string    // the rows as a Flink VALUES list
	rows   []row.Row // the same rows for etld's encoder
	flink  string
	etld   string
}

func flinkWrites() []flinkWrite {
	const micros = 1704189600500000 // 2024-01-02 10:00:00.5
	s := row.StringValue
	return []flinkWrite{
		{name: "csv default", format: "csv", schema: "s STRING, i INT, b BOOLEAN, t TIMESTAMP(3), d DATE, x DOUBLE, m DECIMAL(10,2)",
			values: `('a b, "c"', 1, TRUE, TIMESTAMP '2024-01-02 10:00:00.5', DATE '2024-01-02', 1.5E7, CAST(12.5 AS DECIMAL(10, 2))), ('', -2, FALSE, TIMESTAMP '2024-01-02 10:00:00', DATE '1969-12-31', -0.25E0, CAST(0 AS DECIMAL(10, 2)))`,
			rows: []row.Row{
				{s(`a b, "c"`), row.IntValue(1), row.BoolValue(true), row.TimestampValue(micros), row.DateValue(19724), row.DoubleValue(1.5e7), row.DecimalValue(1250, 2)},
				{s(""), row.IntValue(-2), row.BoolValue(false), row.TimestampValue(micros - 500000), row.DateValue(-1), row.DoubleValue(-0.25), row.DecimalValue(0, 2)},
			},
			etld: "csv"},
		{name: "csv null-literal and escape", format: "csv", schema: "s STRING, i INT, e STRING",
			values: `('x', CAST(NULL AS INT), 'a\b"c'), (CAST(NULL AS STRING), 2, '')`,
			rows:   []row.Row{{s("x"), row.NullValue, s(`a\b"c`)}, {row.NullValue, row.IntValue(2), s("")}},
			flink:  `'csv.null-literal'='N', 'csv.escape-character'='\'`, etld: `{type: csv, null_literal: N, escape_character: '\'}`},
		{name: "csv TIMESTAMP_LTZ", format: "csv", schema: "l TIMESTAMP_LTZ(3)",
			values: `(TO_TIMESTAMP_LTZ(1704189600500, 3))`, rows: []row.Row{{row.TimestampLTZValue(micros)}}, etld: "csv"},
		{name: "json sql", format: "json", schema: "s STRING, t TIMESTAMP(3), l TIMESTAMP_LTZ(3), m DECIMAL(10,7)",
			values: `('x', TIMESTAMP '2024-01-02 10:00:00.5', TO_TIMESTAMP_LTZ(1704189600500, 3), CAST(0 AS DECIMAL(10, 7)))`,
			rows:   []row.Row{{s("x"), row.TimestampValue(micros), row.TimestampLTZValue(micros), row.DecimalValue(0, 7)}},
			etld:   "json"},
		{name: "json iso-8601 and plain decimals", format: "json", schema: "t TIMESTAMP(3), l TIMESTAMP_LTZ(3), m DECIMAL(10,7)",
			values: `(TIMESTAMP '2024-01-02 10:00:00', TO_TIMESTAMP_LTZ(1704189600500, 3), CAST(0 AS DECIMAL(10, 7)))`,
			rows:   []row.Row{{row.TimestampValue(micros - 500000), row.TimestampLTZValue(micros), row.DecimalValue(0, 7)}},
			flink:  `'json.timestamp-format.standard'='ISO-8601', 'json.encode.decimal-as-plain-number'='true'`,
			etld:   "{type: json, timestamp_format: iso-8601, encode_decimal_as_plain_number: true}"},
	}
}

// writeScripts writes, for every flinkWrite, etld's file of its rows and
// one script that prints the VALUES, writes them with Flink, then reads
// etld's file with Flink: its output is the rows twice when all agree.
func writeScripts(t *testing.T, dir string, cases []flinkWrite) []string {
	t.Helper()
	r := connector.NewRegistry()
	Register(r)
	var scripts []string
	for i, c := range cases {
		schema := parseSchema(t, c.schema)
		with := func(path string) string {
			w := fmt.Sprintf("'connector'='filesystem', 'path'='file://%s', 'format'='%s'", path, c.format)
			if c.flink != "" {
				w += ", " + c.flink
			}
			return w
		}
		enc, err := r.NewEncoder(formatSpec(t, "format: "+c.etld), schema)
		if err != nil {
			t.Fatal(err)
		}
		var buf []byte
		for _, rw := range c.rows {
			if buf, err = enc.Encode(buf, row.Insert, rw); err != nil {
				t.Fatal(err)
			}
		}
		etldFile := filepath.Join(dir, fmt.Sprintf("etld%d.%s", i, c.format))
		if err := os.WriteFile(etldFile, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		sql := fmt.Sprintf("SET 'execution.runtime-mode' = 'batch';\n"+
			"CREATE TABLE v (%[1]s) WITH ('connector'='print');\nINSERT INTO v VALUES %[2]s;\n"+
			"CREATE TABLE o (%[1]s) WITH (%[3]s);\nINSERT INTO o VALUES %[2]s;\n"+
			"CREATE TABLE e (%[1]s) WITH (%[4]s);\nSELECT * FROM e;\n",
			c.schema, c.values, with(filepath.Join(dir, fmt.Sprintf("flink%d", i))), with(etldFile))
		p := filepath.Join(dir, fmt.Sprintf("write%d.sql", i))
		if err := os.WriteFile(p, []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, p)
	}
	return scripts
}

// checkWrites compares, for every flinkWrite, its rows with the VALUES
// Flink printed, etld's reading of Flink's file with them, and Flink's
// reading of etld's file with them.
func checkWrites(t *testing.T, dir string, cases []flinkWrite, results []testenv.FlinkResult) {
	for i, c := range cases {
		t.Run("write/"+c.name, func(t *testing.T) {
			res := results[i]
			var own strings.Builder
			for _, rw := range c.rows {
				own.WriteString(row.Change{Kind: row.Insert, Row: rw}.String() + "\n")
			}
			want := own.String()
			if res.Err != "" || res.Out != want+want {
				etldFile, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("etld%d.%s", i, c.format)))
				t.Errorf("want the rows\n%stwice: printed from VALUES, then read by Flink from etld's\n%sFlink gave\n%s%s", want, etldFile, res.Out, lastLine(res.Err))
			}
			// etld reads Flink's file.
			parts, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("flink%d", i), "*"))
			var data []byte
			for _, p := range parts {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				data = append(data, b...)
			}
			rows, errs := readWithEtld(t, flinkCase{format: c.format, schema: c.schema, data: string(data), etld: c.etld})
			if got := strings.Join(rows, ""); len(errs) > 0 || got != want {
				t.Errorf("etld reads Flink's\n%s\nas\n%s%v", data, got, errs)
			}
		})
	}
}

func parseSchema(t *testing.T, cols string) row.Schema {
	t.Helper()
	return testenv.Schema(t, strings.Split(cols, ", ")...)
}

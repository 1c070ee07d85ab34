package formats

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// formatSpec reads `format:` as a pipeline file would give it.
func formatSpec(t *testing.T, src string) connector.FormatSpec {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	var f connector.FormatSpec
	if err := f.DecodeNode("p.yaml", doc.Content[0].Content[1], "sources[0].format"); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRegistry(t *testing.T) {
	r := connector.NewRegistry()
	Register(r)
	var names []string
	for _, e := range r.Formats() {
		names = append(names, e.Type)
	}
	if got := strings.Join(names, " "); got != "avro avro-confluent canal-json csv debezium-avro-confluent debezium-json json maxwell-json ogg-json parquet protobuf protobuf-confluent raw" {
		t.Fatalf("formats: %s", got)
	}
	sensor := row.NewSchema(row.Field{Name: "id", Type: row.Of(row.String)}, row.Field{Name: "ts", Type: row.Of(row.BigInt)})
	line := row.NewSchema(row.Field{Name: "line", Type: row.Of(row.String)})
	tests := []struct {
		src    string
		schema row.Schema
		err    string // for both the decoder and the encoder
	}{
		{"format: csv", sensor, ""},
		{"format: {type: csv, delimiter: ';', quote: \"'\", header: true, null_literal: '\\N'}", sensor, ""},
		{"format: {type: csv, quote: ''}", sensor, ""},
		{"format: json", sensor, ""},
		{"format: {type: json, timestamp_format: iso-8601, fail_on_missing_field: true}", sensor, ""},
		{"format: {type: debezium-json, timestamp_format: sql}", sensor, ""},
		{"format: raw", line, ""},
		{"format: {type: canal-json, database_include: inv, table_include: 'a|b', timestamp_format: iso-8601}", sensor, ""},
		{"format: maxwell-json", sensor, ""},
		{"format: {type: ogg-json, timestamp_format: sql}", sensor, ""},
		{"format: {type: debezium-json, schema_include: false}", sensor, ""},
		{"format: {type: canal-json,\n  table_include: '('}", sensor, "p.yaml:2:18: sources[0].format.table_include: bad regular expression \"(\": error parsing regexp: missing closing ): `^(?:()$`"},
		{"format: {type: maxwell-json, database_include: x}", sensor, "p.yaml:1:30: sources[0].format.database_include: unknown key; known keys: type, timestamp_format"},
		{"format: {type: csv,\n  delimitter: ';'}", sensor, `p.yaml:2:3: sources[0].format.delimitter: unknown key; did you mean "delimiter"?`},
		{"format: {type: csv,\n  delimiter: ';;'}", sensor, `p.yaml:2:14: sources[0].format.delimiter: want one ASCII character (or \t), got ";;"`},
		{"format: {type: json, timestamp_format: rfc}", sensor, `p.yaml:1:40: sources[0].format.timestamp_format: want sql or iso-8601, got "rfc"`},
		{"format: {type: raw, x: 1}", line, "p.yaml:1:21: sources[0].format.x: unknown key"},
		{"format: raw", sensor, "p.yaml:1:9: sources[0].format: the raw format needs a schema of exactly one STRING column, got (id STRING, ts BIGINT)"},
		{"format: avro", sensor, ""},
		{"format: {type: avro, schema: '\"int\"'}", sensor, "p.yaml:1:30: sources[0].format.schema: the schema is a int, not a record"},
		{"format: {type: avro, schema: '{'}", sensor, "p.yaml:1:30: sources[0].format.schema: not an Avro schema: avro: unknown type: {"},
		{"format: {type: avro-confluent, url: 'http://127.0.0.1:1'}", sensor, ""},
		{"format: {type: avro-confluent}", sensor, "p.yaml:1:9: sources[0].format.url: missing required key"},
		{"format: {type: orc}", sensor, `p.yaml:1:9: sources[0].format: unknown input format type "orc": available: avro, avro-confluent, canal-json, csv, debezium-avro-confluent, debezium-json, json, maxwell-json, ogg-json, protobuf, protobuf-confluent, raw`},
	}
	for _, tt := range tests {
		f := formatSpec(t, tt.src)
		_, errD := r.NewDecoder(f, tt.schema)
		_, errE := r.NewEncoder(f, tt.schema)
		for _, err := range []error{errD, errE} {
			if tt.err == "" && err != nil {
				t.Errorf("%s: %v", tt.src, err)
			}
			if tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), strings.Split(tt.err, ": unknown input")[0])) {
				t.Errorf("%s:\n got %v\nwant %s", tt.src, err, tt.err)
			}
		}
		if tt.err != "" && errD.Error() != tt.err {
			t.Errorf("%s: decoder:\n got %v\nwant %s", tt.src, errD, tt.err)
		}
	}
	bulkFormats(t, r, sensor)
	// Only the changelog formats carry row kinds: a source reading one is
	// updating, whatever the connector.
	for typ, want := range map[string]bool{"csv": false, "json": false, "raw": false, "debezium-json": true,
		"canal-json": true, "maxwell-json": true, "ogg-json": true, "avro": false, "avro-confluent": false, "debezium-avro-confluent": true} {
		if got := r.Changelog(connector.FormatSpec{Type: typ}); got != want {
			t.Errorf("Changelog(%s) = %v, want %v", typ, got, want)
		}
	}
	f := formatSpec(t, "format: {type: debezium-json,\n  schema_include: true}")
	if _, err := r.NewEncoder(f, sensor); err == nil || err.Error() != "p.yaml:2:19: sources[0].format.schema_include: is for reading only: debezium-json writes events without a schema envelope, as Flink does (it refuses schema-include for writing too); remove it from the sink's format" {
		t.Errorf("schema_include for writing: %v", err)
	}
	if _, err := r.NewDecoder(f, sensor); err != nil {
		t.Errorf("schema_include for reading: %v", err)
	}
}

// bulkFormats: parquet is a bulk format, built by NewBulkDecoder and
// NewBulkEncoder with its options checked; a connector of records that
// asks for it is told which ones take it.
func bulkFormats(t *testing.T, r *connector.Registry, schema row.Schema) {
	for _, tt := range []struct{ src, err string }{
		{"format: parquet", ""},
		{"format: {type: parquet, compression: zstd, row_group_size: 1000, timestamp_unit: micros}", ""},
		{"format: {type: parquet, compression: zstdd}", `p.yaml:1:38: sources[0].format.compression: unknown compression "zstdd"; did you mean "zstd"? (want snappy, zstd, gzip or none)`},
		{"format: {type: parquet, row_group_size: -1}", "p.yaml:1:41: sources[0].format.row_group_size: -1 rows: want 1 to 67108864"},
		{"format: csv", `p.yaml:1:9: sources[0].format: unknown bulk input format type "csv": available: avro, parquet`},
	} {
		f := formatSpec(t, tt.src)
		_, errD := r.NewBulkDecoder(f, schema)
		_, errE := r.NewBulkEncoder(f, schema)
		for _, err := range []error{errD, errE} {
			if tt.err == "" && err != nil {
				t.Errorf("%s: %v", tt.src, err)
			}
			if tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), strings.Split(tt.err, ": unknown bulk")[0])) {
				t.Errorf("%s:\n got %v\nwant %s", tt.src, err, tt.err)
			}
		}
		if tt.err != "" && errD.Error() != tt.err {
			t.Errorf("%s: decoder:\n got %v\nwant %s", tt.src, errD, tt.err)
		}
		if !r.Bulk(f) != (f.Type == "csv") {
			t.Errorf("%s: Bulk says %v", tt.src, r.Bulk(f))
		}
	}
	f := formatSpec(t, "format: parquet")
	want := "p.yaml:1:9: sources[0].format: format parquet writes and reads whole files (row groups and a footer), not records: only the file source and the file sink take it"
	if _, err := r.NewDecoder(f, schema); err == nil || err.Error() != want {
		t.Errorf("parquet as a record format: %v, want %s", err, want)
	}
}

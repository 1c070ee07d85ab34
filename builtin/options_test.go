package builtin_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/spec"
)

// TestOptionErrors plans pipelines with one invalid option of a built-in
// connector or format each, as `etld validate` does, and checks the whole
// error: position, option path and message.
func TestOptionErrors(t *testing.T) {
	const (
		datagen = "type: datagen\n    schema: [id BIGINT, n INT, name STRING]\n"
		print   = "type: print\n"
		kafka   = "type: kafka\n    brokers: [127.0.0.1:9092]\n"
	)
	tests := []struct {
		name       string
		src, sink  string // the entries' keys after name (and from)
		want       string
		wantInLine bool // want is part of the first line, not the whole error
	}{
		// datagen
		{name: "datagen rows", src: datagen + "    rows: -5", sink: print,
			want: "p.yaml:7:11: sources[0].rows: must be >= 0, got -5"},
		{name: "datagen rate", src: datagen + "    rate: -1", sink: print,
			want: "p.yaml:7:11: sources[0].rate: must be >= 0 rows per second (0: as fast as possible), got -1"},
		{name: "datagen start after end", src: datagen + "    fields: {id: {kind: sequence, start: 10, end: 1}}", sink: print,
			want: "p.yaml:7:51: sources[0].fields.id.end: end 1 is before start 10"},
		{name: "datagen min above max", src: datagen + "    fields: {n: {min: 10, max: 1}}", sink: print,
			want: "p.yaml:7:32: sources[0].fields.n.max: max 1 is below min 10"},
		{name: "datagen unknown column", src: datagen + "    fields: {nmae: {length: 3}}", sink: print,
			want: `p.yaml:7:20: sources[0].fields.nmae: no column "nmae" in the schema; did you mean "name"? (columns: id, n, name)`},
		{name: "datagen kind", src: datagen + "    fields: {id: {kind: sequense}}", sink: print,
			want: `p.yaml:7:25: sources[0].fields.id.kind: unknown kind "sequense"; did you mean "sequence"? (want random or sequence)`},
		{name: "datagen max_past in negative days", src: "type: datagen\n    schema: [t TIMESTAMP]\n    fields: {t: {max_past: -1d}}", sink: print,
			want: "p.yaml:7:28: sources[0].fields.t.max_past: duration \"-1d\" is negative"},
		// file source
		{name: "file source directory", src: "type: file\n    path: data/\n    schema: [id BIGINT]", sink: print,
			want: `p.yaml:6:11: sources[0].path: "data/" names a directory; name its files with a glob such as data/*.csv`},
		{name: "file source interval", src: "type: file\n    path: a.csv\n    monitor_interval: 1s\n    schema: [id BIGINT]", sink: print,
			want: "p.yaml:7:23: sources[0].monitor_interval: applies only with follow: true"},
		// kafka source
		{name: "kafka start", src: kafka + "    topic: t\n    format: json\n    start: latets\n    schema: [id BIGINT]", sink: print,
			want: `p.yaml:9:12: sources[0].start: unknown start "latets"; did you mean "latest"? (want earliest, latest, group-offsets or timestamp)`},
		{name: "kafka topic", src: kafka + "    topic: a/b\n    format: json\n    schema: [id BIGINT]", sink: print,
			want: `p.yaml:7:12: sources[0].topic: "a/b" is not a valid Kafka topic name (letters, digits, '.', '_' and '-', at most 249)`},
		// formats
		{name: "csv delimiter", src: "type: file\n    path: a.csv\n    format: {type: csv, delimiter: ab}\n    schema: [id BIGINT]", sink: print,
			want: `p.yaml:7:36: sources[0].format.delimiter: want one ASCII character (or \t), got "ab"`},
		{name: "csv quote and disabled quote", src: "type: file\n    path: a.csv\n    format: {type: csv, quote_character: \"'\", disable_quote_character: true}\n    schema: [id BIGINT]", sink: print,
			want: `p.yaml:7:72: sources[0].format.disable_quote_character: cannot be set together with a quote character`},
		{name: "csv escape", src: "type: file\n    path: a.csv\n    format: {type: csv, escape_character: ','}\n    schema: [id BIGINT]", sink: print,
			want: `p.yaml:7:43: sources[0].format.escape_character: "," is already the delimiter or the quote`},
		{name: "json map null key mode", src: "type: file\n    path: a.json\n    format: {type: json, map_null_key_mode: skip}\n    schema: [id BIGINT]", sink: print,
			want: `p.yaml:7:45: sources[0].format.map_null_key_mode: want fail, drop or literal, got "skip"`},
		{name: "json timestamp format", src: "type: file\n    path: a.json\n    format: {type: json, timestamp_format: iso}\n    schema: [id BIGINT]", sink: print,
			want: `p.yaml:7:44: sources[0].format.timestamp_format: want sql or iso-8601, got "iso"`},
		{name: "debezium timestamp format", src: kafka + "    topic: t\n    format: {type: debezium-json, timestamp_format: x}\n    key: [id]\n    schema: [id BIGINT]", sink: print,
			want: `p.yaml:8:53: sources[0].format.timestamp_format: want sql or iso-8601, got "x"`},
		{name: "raw schema", src: "type: file\n    path: a.log\n    format: raw\n    schema: [id BIGINT]", sink: print,
			want: "p.yaml:7:13: sources[0].format: the raw format needs a schema of exactly one STRING column, got (id BIGINT)"},
		// sinks
		{name: "print identifier", src: datagen, sink: print + "    print_identifier: \"a\\nb\"",
			want: "p.yaml:12:23: sinks[0].print_identifier: must fit on one line: it starts every printed line"},
		{name: "blackhole option", src: datagen, sink: "type: blackhole\n    rows: 1",
			want: "p.yaml:12:5: sinks[0].rows: unknown key", wantInLine: true},
		{name: "file sink path", src: datagen, sink: "type: file\n    path: \"\"",
			want: "p.yaml:12:11: sinks[0].path: must name the file to write"},
		{name: "file sink format", src: datagen, sink: "type: file\n    path: out.x\n    format: xml",
			want: `p.yaml:13:13: sinks[0].format: unknown output format type "xml"`, wantInLine: true},
		{name: "kafka sink acks", src: datagen, sink: kafka + "    topic: t\n    acks: lead",
			want: `p.yaml:14:11: sinks[0].acks: unknown acks "lead"; did you mean "leader"? (want all or leader)`},
		{name: "kafka sink batch size", src: datagen, sink: kafka + "    topic: t\n    batch_size: -1",
			want: "p.yaml:14:17: sinks[0].batch_size: must be >= 0 (0: the default, 10000), got -1"},
		{name: "elasticsearch actions", src: datagen, sink: "type: elasticsearch\n    hosts: [\"http://h:9200\"]\n    index: i\n    bulk_flush_max_actions: -1",
			want: "p.yaml:14:29: sinks[0].bulk_flush_max_actions: must be 0 (no limit) or more, got -1"},
		{name: "elasticsearch parallelism", src: datagen, sink: "type: elasticsearch\n    hosts: [\"http://h:9200\"]\n    index: i\n    parallelism: 1000",
			want: "p.yaml:14:18: sinks[0].parallelism: must be from 1 to 64, got 1000"},
		{name: "mysql batch size", src: datagen, sink: "type: mysql\n    dsn: \"u@tcp(h:3306)/d\"\n    table: t\n    batch_size: -1",
			want: "p.yaml:14:17: sinks[0].batch_size: must be >= 0 (0: the default, 1000), got -1"},
		{name: "mysql table", src: datagen, sink: "type: mysql\n    dsn: \"u@tcp(h:3306)/d\"\n    table: \" \"",
			want: "p.yaml:13:12: sinks[0].table: must name the table to write"},
		{name: "jdbc url", src: datagen, sink: "type: jdbc\n    table: t",
			want: "p.yaml:9:5: sinks[0].url: missing: type jdbc needs url: jdbc:mysql://host:port/database or jdbc:postgresql://host:port/database (or use type: mysql or type: postgres with dsn)"},
	}
	reg := builtin.Registry()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "version: 1\nname: p\nsources:\n  - name: src\n    " + tt.src + "\n" +
				"sinks:\n  - name: out\n    from: src\n    " + tt.sink + "\n"
			sp, err := spec.Parse("p.yaml", []byte(doc), func(string) (string, bool) { return "", false })
			if err == nil {
				_, err = plan.Build(sp, plan.Env{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
			}
			if err == nil {
				t.Fatalf("no error, want %q\n%s", tt.want, doc)
			}
			got := err.Error()
			if tt.wantInLine {
				got, _, _ = strings.Cut(got, "\n")
				if !strings.Contains(got, tt.want) {
					t.Fatalf("got:\n%s\nwant a first line containing:\n%s\n%s", err, tt.want, doc)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("got:\n%s\nwant:\n%s\n%s", got, tt.want, doc)
			}
		})
	}
}

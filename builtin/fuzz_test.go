package builtin_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/spec"
)

// opt is an option key and, for a key whose value may be a mapping, the
// keys that mapping takes.
type opt struct {
	name string
	sub  []opt
}

func keys(names ...string) []opt {
	out := make([]opt, len(names))
	for i, n := range names {
		out[i] = opt{name: n}
	}
	return out
}

var (
	formatOpts = append(keys("type", "delimiter", "quote", "header", "null_literal", "field_delimiter", "quote_character", "disable_quote_character", "escape_character", "allow_comments", "ignore_parse_errors", "array_element_delimiter", "timestamp_format", "fail_on_missing_field", "map_null_key_mode", "map_null_key_literal", "encode_decimal_as_plain_number", "database_include", "table_include", "schema_include"), opt{name: "nope"})
	fieldOpts  = keys("kind", "null_rate", "min", "max", "length", "max_past", "start", "end", "step", "nope")
	kafkaOpts  = []opt{
		{name: "brokers"}, {name: "client_id"}, {name: "dial_timeout"},
		{name: "tls", sub: keys("enabled", "ca_file", "cert_file", "key_file", "server_name", "insecure_skip_verify")},
		{name: "sasl", sub: keys("mechanism", "username", "password")},
	}
)

// sourceOpts and sinkOpts are every option of every built-in connector;
// TestFuzzCoversEveryConnector keeps them in step with the registry.
var sourceOpts = map[string][]opt{
	"datagen": {{name: "rows"}, {name: "rate"}, {name: "seed"}, {name: "fields", sub: []opt{
		{name: "id", sub: fieldOpts}, {name: "n", sub: fieldOpts}, {name: "name", sub: fieldOpts},
		{name: "ts", sub: fieldOpts}, {name: "d", sub: fieldOpts}, {name: "nope", sub: fieldOpts},
	}}},
	"file": {{name: "path"}, {name: "format", sub: formatOpts}, {name: "follow"}, {name: "monitor_interval"}},
	"kafka": append([]opt{{name: "topic"}, {name: "group_id"}, {name: "start"}, {name: "start_timestamp"},
		{name: "stop"}, {name: "format", sub: formatOpts}, {name: "key_format", sub: formatOpts},
		{name: "key_fields"}, {name: "value_fields_include"}, {name: "session_timeout"}}, kafkaOpts...),
	"mysql": mysqlSourceOpts,
	"jdbc":  mysqlSourceOpts,
	"postgres": keys("dsn", "url", "username", "password", "table", "tables", "slot", "publication",
		"create_slot", "create_publication", "startup", "stop", "fetch_size", "nope"),
	"nexmark": keys("events", "rate", "first_event_rate", "next_event_rate", "base_time", "seed",
		"person_proportion", "auction_proportion", "bid_proportion", "person_avg_size", "auction_avg_size",
		"bid_avg_size", "auction_hot_ratio_sellers", "bid_hot_ratio_auctions", "bid_hot_ratio_bidders", "nope"),
}

var mysqlSourceOpts = []opt{{name: "dsn"}, {name: "url"}, {name: "username"}, {name: "password"},
	{name: "table"}, {name: "query"},
	{name: "scan", sub: []opt{{name: "fetch_size"}, {name: "partition", sub: keys("column", "num", "lower_bound", "upper_bound")}}},
	{name: "lookup", sub: []opt{{name: "cache"}, {name: "max_retries"}, {name: "batch_size"},
		{name: "partial_cache", sub: keys("max_rows", "expire_after_write", "expire_after_access", "cache_missing_key")}}},
}

var esOpts = keys("hosts", "index", "key_delimiter", "key_null_literal", "bulk_flush_max_actions",
	"bulk_flush_max_size", "bulk_flush_interval", "bulk_flush_backoff_strategy", "bulk_flush_backoff_max_retries",
	"bulk_flush_backoff_delay", "username", "password", "api_key", "ca_file", "connection_timeout",
	"socket_timeout", "parallelism")

var mysqlOpts = keys("dsn", "url", "username", "password", "table", "batch_size", "flush_interval",
	"max_retries", "create_table", "replace_table", "parallelism")

var sinkOpts = map[string][]opt{
	"print":     keys("print_identifier", "standard_error"),
	"blackhole": keys("nope"),
	"file":      {{name: "path"}, {name: "format", sub: formatOpts}, {name: "append"}},
	"kafka": append([]opt{{name: "topic"}, {name: "format", sub: formatOpts}, {name: "key_fields"},
		{name: "key_format", sub: formatOpts}, {name: "partitioner"}, {name: "compression"},
		{name: "batch_size"}, {name: "batch_bytes"}, {name: "linger"}, {name: "acks"},
		{name: "write_timeout"}, {name: "create_topic"}, {name: "partitions"}, {name: "replication_factor"}},
		kafkaOpts...),
	"elasticsearch": esOpts,
	"mysql":         mysqlOpts,
	"postgres":      mysqlOpts, // the same keys
	"jdbc":          mysqlOpts,
}

// values are option values of every YAML kind, valid and not, in flow
// style so that they nest.
var values = []string{
	// numbers
	"0", "1", "-1", "-5", "10", "3", "65536", "2147483648", "9223372036854775807", "-9223372036854775808",
	"99999999999999999999", "0.5", "-0.5", "1e308", "-1e308", ".nan", ".inf", "-.inf", "0x10",
	// durations
	"0s", "-1s", "1ns", "1ms", "500ms", "30s", "1h", "30d", "-5m", "1.5s", "9999999h",
	// strings, with the enum values the connectors know and near misses
	`""`, `" "`, "x", "sequence", "sequense", "random", "csv", "json", "raw", "debezium-json", "canal-json", "maxwell-json", "ogg-json", "xml",
	"earliest", "latest", "group-offsets", "initial", "snapshot", "slot_1", "Bad-Slot", "timestamp", "none", "all", "except_key", "leader",
	"round-robin", "gzip", "zstd", "exponential", "constant", "sql", "iso-8601", "PLAIN", "SCRAM-SHA-512",
	"2024-01-02 03:04:05", "2024-01-02", "2024-05-06T07:08:09Z", `"\t"`, `";"`, `"\n"`, "2mb", "-1kb", "10gb",
	"127.0.0.1:9092", "host:0", "http://127.0.0.1:9200", "https://u:p@h:9200", "jdbc:mysql://127.0.0.1:3306/db",
	"jdbc:mysql://h", "u:p@tcp(127.0.0.1:3306)/db", "jdbc:postgresql://127.0.0.1:5432/db", "postgres://u:p@h/db", `"a"."b"`, "u:p@tcp(h)/", "out.csv", "data/*.csv", `"data/["`, "/",
	"idx-{ts|yyyy-MM-dd}", "idx-{nope}", `"{"`, "id", "name", "t", "a/b", "${NOPE}", "$$",
	// other kinds
	"true", "false", "null", "~", "[]", "{}", "[1, 2]", "[id]", "[id, name]", "[id, id]", `["a;b", c]`,
	"{type: csv}", "{type: json}", "{type: raw}", "{type: debezium-json}", "{type: canal-json, table_include: 'a|b'}", "{type: ogg-json}", "{type: csv, delimiter: ';', header: true}",
	"{kind: sequence, start: 1, end: 10}", "{kind: random, min: 10, max: 1}", "{a: {b: [c]}}", "&a x", "*a", "!!binary aGk=",
}

var columns = []string{
	"id BIGINT", "id BIGINT NOT NULL", "n INT", "name STRING", "name VARCHAR(3)", "d DOUBLE", "f FLOAT",
	"dec DECIMAL(10, 2)", "dec DECIMAL(38, 38)", "b BOOLEAN", "ts TIMESTAMP(3)", "lt TIMESTAMP_LTZ(3)",
	"day DATE", "bin BYTES", "line STRING", "op STRING", "part INT METADATA FROM 'partition'",
	"off BIGINT METADATA FROM 'offset' VIRTUAL", "k BYTES METADATA FROM 'key'", "topic STRING METADATA",
	"et AS TO_TIMESTAMP_LTZ(id, 3)", "nope AS missing + 1", "x NOPE",
}

// gen draws choices from the fuzzer's bytes; past their end every choice
// is the first.
type gen struct {
	b []byte
	i int
}

func (g *gen) pick(n int) int {
	if g.i >= len(g.b) || n <= 0 {
		return 0
	}
	c := g.b[g.i]
	g.i++
	return int(c) % n
}

// value is a value for o: a mapping of its sub-options, one of the
// values, or the fuzzer's own text.
func (g *gen) value(o opt, free string, depth int) string {
	switch c := g.pick(8); {
	case c < 3 && len(o.sub) > 0 && depth < 3:
		n := g.pick(4)
		parts := make([]string, 0, n)
		for range n {
			sub := o.sub[g.pick(len(o.sub))]
			parts = append(parts, sub.name+": "+g.value(sub, free, depth+1))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case c == 3 && free != "":
		return strconv.Quote(free)
	default:
		return values[g.pick(len(values))]
	}
}

// options writes n option lines for a connector, at indent.
func (g *gen) options(b *strings.Builder, opts []opt, free string) {
	for range g.pick(6) {
		o := opts[g.pick(len(opts))]
		fmt.Fprintf(b, "    %s: %s\n", o.name, g.value(o, free, 0))
	}
}

// indentLines indents the fuzzer's raw text as more lines of an entry.
func indentLines(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

// pipelineYAML builds a pipeline file: one source of type src and one sink
// of type sink, reading the source or a GROUP BY over it, with options and
// a schema drawn from choices, plus the fuzzer's raw lines in each entry.
func pipelineYAML(src, sink string, choices []byte, srcExtra, sinkExtra string) string {
	g := &gen{b: choices}
	var b strings.Builder
	b.WriteString("version: 1\nname: fz\n")
	if g.pick(4) == 1 {
		b.WriteString("execution: batch\n")
	}
	b.WriteString("sources:\n  - name: src\n    type: " + src + "\n")
	g.options(&b, sourceOpts[src], srcExtra)
	b.WriteString(indentLines(srcExtra))
	// Drawn choices of 0 (and the end of the bytes) give a schema of
	// one BIGINT column id, which every connector can carry.
	switch n := g.pick(5); n {
	case 4:
		// no schema
	default:
		b.WriteString("    schema:\n")
		for range n + 1 {
			b.WriteString("      - " + columns[g.pick(len(columns))] + "\n")
		}
	}
	switch g.pick(6) {
	case 1:
		b.WriteString("    key: [id]\n")
	case 2:
		b.WriteString("    on_error: skip\n")
	case 3:
		b.WriteString("    watermark: et - INTERVAL '1' SECOND\n")
	}
	from := "src"
	if g.pick(3) == 1 {
		from = "agg"
		b.WriteString("transforms:\n  - name: agg\n    sql: SELECT id, COUNT(*) AS c FROM src GROUP BY id\n")
	}
	b.WriteString("sinks:\n  - name: out\n    from: " + from + "\n    type: " + sink + "\n")
	if m := []string{"", "append", "upsert", "retract"}[g.pick(4)]; m != "" {
		b.WriteString("    mode: " + m + "\n")
	}
	if g.pick(4) == 1 {
		b.WriteString("    key: [id]\n")
	}
	g.options(&b, sinkOpts[sink], sinkExtra)
	b.WriteString(indentLines(sinkExtra))
	return b.String()
}

// sourceSeeds and sinkSeeds hold options that build, per connector type,
// so that the fuzzer starts from pipelines that get past the constructors.
var sourceSeeds = map[string]string{
	"datagen":  "rows: 10\nfields: {id: {kind: sequence, start: 1, end: 10}}",
	"file":     "path: in.csv\nformat: {type: csv, header: true}",
	"kafka":    "brokers: [127.0.0.1:9092]\ntopic: t\nformat: json\nstop: latest",
	"mysql":    "dsn: \"u:p@tcp(127.0.0.1:3306)/db\"\ntable: t\nscan: {partition: {column: id, num: 2, lower_bound: 1, upper_bound: 10}}",
	"jdbc":     "url: jdbc:mysql://127.0.0.1:3306/db\ntable: t\nlookup: {cache: partial, partial_cache: {max_rows: 10}}",
	"postgres": "dsn: \"postgres://u:p@127.0.0.1:5432/db\"\ntable: public.t\nslot: s1\ncreate_slot: true",
	"nexmark":  "events: 10\nseed: 1\nbase_time: '2024-01-01 00:00:00'",
}

var sinkSeeds = map[string]string{
	"file":          "path: out.csv\nformat: {type: csv, header: true}",
	"kafka":         "brokers: [127.0.0.1:9092]\ntopic: t\nformat: json",
	"print":         "print_identifier: p",
	"blackhole":     "",
	"elasticsearch": "hosts: [\"http://127.0.0.1:9200\"]\nindex: i",
	"mysql":         "dsn: \"u:p@tcp(127.0.0.1:3306)/db\"\ntable: t",
	"postgres":      "dsn: \"postgres://u:p@127.0.0.1:5432/db\"\ntable: public.t",
	"jdbc":          "url: jdbc:mysql://127.0.0.1:3306/db\ntable: t",
}

// FuzzLoadPlan drives the whole path `etld validate` takes, spec parse and
// plan.Build, with random option keys and values for every registered
// source and sink type: nothing panics, and every error names
// file:line:col.
func FuzzLoadPlan(f *testing.F) {
	reg := builtin.Registry()
	srcs, sinks := typeNames(reg.Sources()), typeNames(reg.Sinks())
	for i, src := range srcs {
		for j, sink := range sinks {
			f.Add(uint8(i), uint8(j), []byte{}, sourceSeeds[src], sinkSeeds[sink])
			f.Add(uint8(i), uint8(j), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, sourceSeeds[src], sinkSeeds[sink])
		}
	}
	f.Add(uint8(0), uint8(0), []byte{5, 0, 1, 0, 3, 7}, "rows: -5\nrate: -1\nfields: {id: {kind: sequense}, nope: {}}", "")
	f.Fuzz(func(t *testing.T, srcIdx, sinkIdx uint8, choices []byte, srcExtra, sinkExtra string) {
		src, sink := srcs[int(srcIdx)%len(srcs)], sinks[int(sinkIdx)%len(sinks)]
		doc := pipelineYAML(src, sink, choices, srcExtra, sinkExtra)
		const file = "fz.yaml"
		sp, err := spec.Parse(file, []byte(doc), func(name string) (string, bool) { return "", false })
		if err != nil {
			checkPositioned(t, file, doc, err)
			return
		}
		p, err := plan.Build(sp, plan.Env{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			checkPositioned(t, file, doc, err)
			return
		}
		defer p.Close()
		if p.Explain() == "" {
			t.Fatalf("a plan that builds explains as nothing:\n%s", doc)
		}
	})
}

func typeNames(entries []connector.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Type
	}
	return out
}

// checkPositioned fails unless err is a list of errors that each name a
// line and column of file.
func checkPositioned(t *testing.T, file, doc string, err error) {
	t.Helper()
	var list spec.List
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("error %T is not a list of positioned errors: %v\n%s", err, err, doc)
	}
	for _, e := range list {
		if e.Pos.File != file || !e.Pos.IsValid() || e.Pos.Col < 1 {
			t.Fatalf("error without file:line:col: %q\n%s", e.Error(), doc)
		}
	}
}

// TestFuzzCoversEveryConnector fails when a connector is registered that
// FuzzLoadPlan knows no options of, or one it knows is gone.
func TestFuzzCoversEveryConnector(t *testing.T) {
	reg := builtin.Registry()
	check := func(kind string, registered []connector.Entry, known map[string][]opt, seeds map[string]string) {
		seen := map[string]bool{}
		for _, e := range registered {
			seen[e.Type] = true
			if _, ok := known[e.Type]; !ok {
				t.Errorf("%s type %q has no options in FuzzLoadPlan: add them to %sOpts", kind, e.Type, kind)
			}
			if _, ok := seeds[e.Type]; !ok {
				t.Errorf("%s type %q has no seed in FuzzLoadPlan", kind, e.Type)
			}
		}
		for typ := range known {
			if !seen[typ] {
				t.Errorf("FuzzLoadPlan lists %s type %q, which is not registered", kind, typ)
			}
		}
	}
	check("source", reg.Sources(), sourceOpts, sourceSeeds)
	check("sink", reg.Sinks(), sinkOpts, sinkSeeds)
}

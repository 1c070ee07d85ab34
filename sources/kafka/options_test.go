package kafka

import (
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// build decodes a source's YAML options through the registry, as a
// pipeline file does, and returns the source or the error.
func build(t *testing.T, opts string, schema row.Schema, meta []string) (*Source, error) {
	t.Helper()
	r := testRegistry()
	Register(r)
	yaml := "version: 1\nname: p\nsources:\n  - name: src\n    type: kafka\n    schema: [x INT]\n" + indent(opts) +
		"sinks:\n  - {name: out, from: src, type: print}\n"
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Load(path)
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	src, err := r.NewSource(path, sp.Sources[0], connector.SourceEnv{
		Name: "src", Pipeline: "p", Schema: schema, Metadata: meta, Logger: slog.New(slog.DiscardHandler), Formats: r,
	})
	if err != nil {
		return nil, err
	}
	return src.(*Source), nil
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

func TestOptions(t *testing.T) {
	schema := row.NewSchema(row.Field{Name: "id", Type: row.Of(row.BigInt)}, row.Field{Name: "name", Type: row.Of(row.String)})
	tests := []struct {
		name string
		opts string
		want options // checked fields: topics, groupID, start, startTS, bounded, updating, session, instanceID
		err  string  // substring of the error, with its line
	}{
		{name: "defaults", opts: "brokers: 127.0.0.1:9092\ntopic: a\nformat: json",
			want: options{topics: []string{"a"}, start: startEarliest}},
		{name: "group defaults to group-offsets", opts: "brokers: [h:1]\ntopic: [a, b]\ngroup_id: g\nformat: csv",
			want: options{topics: []string{"a", "b"}, groupID: "g", start: startGroupOffsets, instanceID: defaultInstanceID("p", "src")}},
		{name: "group instance id", opts: "brokers: [h:1]\ntopic: a\ngroup_id: g\ngroup_instance_id: worker-2\nformat: csv",
			want: options{topics: []string{"a"}, groupID: "g", start: startGroupOffsets, instanceID: "worker-2"}},
		{name: "dynamic member", opts: "brokers: [h:1]\ntopic: a\ngroup_id: g\ngroup_instance_id: none\nformat: csv",
			want: options{topics: []string{"a"}, groupID: "g", start: startGroupOffsets}},
		{name: "flink topic list and names", opts: "brokers: h:1\ntopic: a;b\nstart: latest-offset\nstop: latest-offset\nformat: json",
			want: options{topics: []string{"a", "b"}, start: startLatest, bounded: true}},
		{name: "timestamp ms", opts: "brokers: h:1\ntopic: a\nstart: timestamp\nstart_timestamp: 1700000000123\nformat: json",
			want: options{topics: []string{"a"}, start: startTimestamp, startTS: time.UnixMilli(1700000000123)}},
		{name: "timestamp rfc3339", opts: "brokers: h:1\ntopic: a\nstart: timestamp\nstart_timestamp: 2024-05-06T07:08:09Z\nformat: json",
			want: options{topics: []string{"a"}, start: startTimestamp, startTS: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}},
		{name: "session timeout", opts: "brokers: h:1\ntopic: a\ngroup_id: g\nsession_timeout: 10s\nformat: json",
			want: options{topics: []string{"a"}, groupID: "g", start: startGroupOffsets, session: 10 * time.Second, instanceID: defaultInstanceID("p", "src")}},
		{name: "debezium is updating", opts: "brokers: h:1\ntopic: a\nformat: debezium-json",
			want: options{topics: []string{"a"}, start: startEarliest, updating: true}},
		{name: "canal is updating", opts: "brokers: h:1\ntopic: a\nformat: {type: canal-json, table_include: t}",
			want: options{topics: []string{"a"}, start: startEarliest, updating: true}},
		{name: "maxwell is updating", opts: "brokers: h:1\ntopic: a\nformat: maxwell-json",
			want: options{topics: []string{"a"}, start: startEarliest, updating: true}},
		{name: "ogg is updating", opts: "brokers: h:1\ntopic: a\nformat: ogg-json",
			want: options{topics: []string{"a"}, start: startEarliest, updating: true}},
		{name: "json is not", opts: "brokers: h:1\ntopic: a\nformat: json",
			want: options{topics: []string{"a"}, start: startEarliest}},

		{name: "no brokers", opts: "topic: a\nformat: json", err: "brokers: missing required key"},
		{name: "no format", opts: "brokers: h:1\ntopic: a", err: "format: missing required key"},
		{name: "unknown key", opts: "brokers: h:1\ntopic: a\nformat: json\ngroupid: g", err: `did you mean "group_id"`},
		{name: "group-offsets without group", opts: "brokers: h:1\ntopic: a\nstart: group-offsets\nformat: json", err: "p.yaml:9:12: sources[0].start: group-offsets needs a group_id"},
		{name: "bad start", opts: "brokers: h:1\ntopic: a\nstart: beginning\nformat: json", err: `p.yaml:9:12: sources[0].start: unknown start "beginning" (want earliest, latest, group-offsets or timestamp)`},
		{name: "misspelt start", opts: "brokers: h:1\ntopic: a\nstart: latets\nformat: json", err: `p.yaml:9:12: sources[0].start: unknown start "latets"; did you mean "latest"? (want earliest, latest, group-offsets or timestamp)`},
		{name: "timestamp without time", opts: "brokers: h:1\ntopic: a\nstart: timestamp\nformat: json", err: "start: timestamp needs start_timestamp"},
		{name: "time without timestamp", opts: "brokers: h:1\ntopic: a\nstart_timestamp: 5\nformat: json", err: "only read with start: timestamp"},
		{name: "bad time", opts: "brokers: h:1\ntopic: a\nstart: timestamp\nstart_timestamp: yesterday\nformat: json", err: "RFC 3339"},
		{name: "bad stop", opts: "brokers: h:1\ntopic: a\nstop: forever\nformat: json", err: `p.yaml:9:11: sources[0].stop: unknown stop "forever" (want none or latest)`},
		{name: "bad topic name", opts: "brokers: h:1\ntopic: [a, \"b c\", ..]\nformat: json", err: `p.yaml:8:12: sources[0].topic: "b c" is not a valid Kafka topic name (letters, digits, '.', '_' and '-', at most 249)` + "\n" +
			`p.yaml:8:12: sources[0].topic: ".." is not a valid Kafka topic name`},
		{name: "several at once", opts: "brokers: h:1\ntopic: a\nstart: nope\nstop: forever\nformat: json\nkey_fields: id", err: `p.yaml:9:12: sources[0].start: unknown start "nope"` + " (want earliest, latest, group-offsets or timestamp)\n" +
			`p.yaml:10:11: sources[0].stop: unknown stop "forever" (want none or latest)` + "\n" +
			`p.yaml:12:17: sources[0].key_fields: key_fields needs key_format to decode the key with`},
		{name: "topic twice", opts: "brokers: h:1\ntopic: [a, a]\nformat: json", err: "listed twice"},
		{name: "unknown format", opts: "brokers: h:1\ntopic: a\nformat: xml", err: "unknown input format"},
		{name: "key fields without format", opts: "brokers: h:1\ntopic: a\nformat: json\nkey_fields: id", err: "key_fields needs key_format"},
		{name: "changelog key format", opts: "brokers: h:1\ntopic: a\nformat: canal-json\nkey_format: debezium-json\nkey_fields: id", err: "key_format: debezium-json is a changelog format, which a message key cannot be"},
		{name: "key format without fields", opts: "brokers: h:1\ntopic: a\nformat: json\nkey_format: raw", err: "key_format needs key_fields"},
		{name: "key field not a column", opts: "brokers: h:1\ntopic: a\nformat: json\nkey_format: json\nkey_fields: nope", err: `column "nope" is not in the schema`},
		{name: "misspelt value_fields_include", opts: "brokers: h:1\ntopic: a\nformat: json\nvalue_fields_include: except_kye", err: `p.yaml:10:27: sources[0].value_fields_include: unknown value_fields_include "except_kye"; did you mean "except_key"? (want all or except_key)`},
		{name: "except_key without key", opts: "brokers: h:1\ntopic: a\nformat: json\nvalue_fields_include: except_key", err: "except_key needs key_fields"},
		{name: "session timeout without group", opts: "brokers: h:1\ntopic: a\nsession_timeout: 10s\nformat: json", err: "session_timeout: is only read with a group_id"},
		{name: "session timeout too short", opts: "brokers: h:1\ntopic: a\ngroup_id: g\nsession_timeout: 100ms\nformat: json", err: "want between 1s and 30m"},
		{name: "instance id without group", opts: "brokers: h:1\ntopic: a\ngroup_instance_id: w\nformat: json", err: "p.yaml:9:24: sources[0].group_instance_id: is only read with a group_id"},
		{name: "shared without group", opts: "brokers: h:1\ntopic: a\ngroup_shared: true\nformat: json", err: "p.yaml:9:19: sources[0].group_shared: is only read with a group_id"},
		{name: "shared and bounded", opts: "brokers: h:1\ntopic: a\ngroup_id: g\nstop: latest\ngroup_shared: true\nformat: json", err: "sources[0].group_shared: a bounded source (stop: latest) reads every partition itself"},
		{name: "bad broker", opts: "brokers: localhost\ntopic: a\nformat: json", err: "want host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := build(t, tt.opts, schema, nil)
			if tt.err != "" {
				// Each line of tt.err is one of the errors, in order.
				if err == nil {
					t.Fatalf("no error, want %q", tt.err)
				}
				got, want := strings.Split(err.Error(), "\n"), strings.Split(tt.err, "\n")
				if len(got) < len(want) {
					t.Fatalf("error %v, want lines containing %q", err, want)
				}
				for i, w := range want {
					if !strings.Contains(got[i], w) {
						t.Errorf("error line %d %q, want one containing %q", i+1, got[i], w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			got := options{topics: s.opts.topics, groupID: s.opts.groupID, start: s.opts.start, startTS: s.opts.startTS, bounded: s.opts.bounded, updating: s.opts.updating, session: s.opts.session, instanceID: s.opts.instanceFor(connector.RunInfo{})}
			if !reflect.DeepEqual(got, tt.want) || s.Bounded() != tt.want.bounded || s.Updating() != tt.want.updating {
				t.Errorf("options %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The default static member id is the same for the same pipeline and
// source on one host, and a valid member id whatever the names hold.
func TestDefaultInstanceID(t *testing.T) {
	host, _ := os.Hostname()
	if got := defaultInstanceID("orders", "in"); got != defaultInstanceID("orders", "in") || !strings.HasPrefix(got, "etld-orders-in-") || !strings.Contains(got, strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, host)) {
		t.Errorf("defaultInstanceID = %q", got)
	}
	if got := defaultInstanceID("a b/c", "ü"); strings.ContainsAny(got, " /ü") {
		t.Errorf("defaultInstanceID keeps characters a member id should not have: %q", got)
	}
	if defaultInstanceID("p", "a") == defaultInstanceID("p", "b") {
		t.Error("two sources of one pipeline share a member id")
	}
}

// The default static member id names the state directory's instance, so
// that two processes on one host with their own state directories are
// two members, and a restart with the same directory takes its place;
// without a state directory a shared group's member is dynamic.
func TestInstanceFor(t *testing.T) {
	withState := connector.RunInfo{Resumable: true, Instance: "0123abcd"}
	tests := []struct {
		name string
		opts options
		run  connector.RunInfo
		want string
	}{
		{"explicit", options{instanceID: "w-2"}, withState, "w-2"},
		{"none is dynamic", options{}, withState, ""},
		{"state instance", options{defaultInstance: true, pipeline: "p", source: "in"}, withState, "etld-p-in-0123abcd"},
		{"state instance, shared", options{defaultInstance: true, shared: true, pipeline: "p", source: "in"}, withState, "etld-p-in-0123abcd"},
		{"no state: the host", options{defaultInstance: true, pipeline: "p", source: "in"}, connector.RunInfo{}, defaultInstanceID("p", "in")},
		{"no state, shared: dynamic", options{defaultInstance: true, shared: true, pipeline: "p", source: "in"}, connector.RunInfo{}, ""},
	}
	for _, tt := range tests {
		if got := tt.opts.instanceFor(tt.run); got != tt.want {
			t.Errorf("%s: instanceFor = %q, want %q", tt.name, got, tt.want)
		}
	}
	o := options{defaultInstance: true, pipeline: "p", source: "in"}
	if o.instanceFor(connector.RunInfo{Instance: "a1"}) == o.instanceFor(connector.RunInfo{Instance: "b2"}) {
		t.Error("two state directories give one member id")
	}
}

// kafka-go v0.4.51 reads a Heartbeat or LeaveGroup response's error code
// into the low 16 bits of the throttle; responseError finds it there.
func TestResponseError(t *testing.T) {
	for _, tc := range []struct {
		err      error
		throttle time.Duration
		want     error
	}{
		{nil, 0, nil},
		{nil, time.Duration(kafka.RebalanceInProgress) * time.Millisecond, kafka.RebalanceInProgress},
		{nil, time.Duration(3<<16|int(kafka.FencedInstanceID)) * time.Millisecond, kafka.FencedInstanceID},
		{nil, 5 << 16 * time.Millisecond, nil}, // a throttle of 5 ms, no error
		{kafka.UnknownMemberId, 0, kafka.UnknownMemberId},
	} {
		if got := responseError(tc.err, tc.throttle); got != tc.want {
			t.Errorf("responseError(%v, %v) = %v, want %v", tc.err, tc.throttle, got, tc.want)
		}
	}
}

func TestDecodePosition(t *testing.T) {
	tests := []struct {
		in   string
		want map[topicPartition]int64
		err  string
	}{
		{in: `{"v":1,"offsets":{"a/0":5,"b.c-d/12":0}}`, want: map[topicPartition]int64{{"a", 0}: 5, {"b.c-d", 12}: 0}},
		{in: `{"v":1,"offsets":{}}`, want: map[topicPartition]int64{}},
		{in: `{"v":2,"offsets":{}}`, err: "version 2"},
		{in: `{"v":1,"offsets":{"a":5}}`, err: "not topic/partition"},
		{in: `{"v":1,"offsets":{"/0":5}}`, err: "not topic/partition"},
		{in: `{"v":1,"offsets":{"a/x":5}}`, err: "not topic/partition"},
		{in: `{"v":1,"offsets":{"a/-1":5}}`, err: "not topic/partition"},
		{in: `{"v":1,"offsets":{"a/0":-3}}`, err: "negative offset"},
		{in: `{"v":1,"file":"x","offset":3,"line":1}`, err: "not a kafka source position"},
		{in: `{"v":1,"offsets":{}} {}`, err: "data after"},
	}
	for _, tt := range tests {
		got, err := decodePosition([]byte(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("decodePosition(%s) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("decodePosition(%s) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestPositionBeforeOpenIsTheRestoredOne: a checkpoint taken before the
// source has placed its partitions keeps the restored offsets.
func TestPositionBeforeOpenIsTheRestoredOne(t *testing.T) {
	s, err := build(t, "brokers: h:1\ntopic: a\nformat: json", row.NewSchema(row.Field{Name: "id", Type: row.Of(row.BigInt)}), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := `{"v":1,"offsets":{"a/0":7,"a/1":9}}`
	if err := s.Restore([]byte(in)); err != nil {
		t.Fatal(err)
	}
	out, err := s.Position()
	if err != nil || string(out) != in {
		t.Errorf("Position = %s, %v; want %s", out, err, in)
	}
	if s.Lag() != -1 {
		t.Errorf("Lag before Open = %d, want -1", s.Lag())
	}
	if err := s.Close(t.Context()); err != nil {
		t.Errorf("Close without Open: %v", err)
	}
}

// TestRowBuilder places value, key and metadata columns without a broker.
func TestRowBuilder(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	m := &kafka.Message{Topic: "t", Partition: 3, Offset: 41, Key: []byte("k1"), Value: []byte(`{"v":"x","id":9}`), Time: at}
	tests := []struct {
		name   string
		cfg    Config
		schema row.Schema
		meta   []string
		want   string
	}{
		{"value only", Config{Format: connector.FormatSpec{Type: "json"}}, testenv.Schema(t, "id BIGINT", "v STRING"), nil, "+I[9, x]"},
		{"metadata last", Config{Format: connector.FormatSpec{Type: "json"}}, testenv.Schema(t, "id BIGINT", "p INT", "o BIGINT"), []string{"", "partition", "offset"}, "+I[9, 3, 41]"},
		{"metadata first", Config{Format: connector.FormatSpec{Type: "json"}}, testenv.Schema(t, "tp STRING", "ts TIMESTAMP_LTZ(3)", "v STRING"), []string{"topic", "timestamp", ""}, "+I[t, 2024-01-02T03:04:05.678Z, x]"},
		{"raw key except_key", Config{Format: connector.FormatSpec{Type: "json"}, KeyFormat: connector.FormatSpec{Type: "raw"}, KeyFields: []string{"k"}, ValueFieldsInclude: "except_key"},
			testenv.Schema(t, "k STRING", "v STRING", "key BYTES"), []string{"", "", "key"}, "+I[k1, x, [107, 49]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rb, err := newRowBuilder(tt.cfg, connector.SourceEnv{Schema: tt.schema, Metadata: tt.meta, Formats: testRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			b := row.NewBatch(1, tt.schema.Len())
			if err := rb.build(m, b); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(b.String()); got != tt.want {
				t.Errorf("built %s, want %s", got, tt.want)
			}
		})
	}
}

package kafka

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/kafkaconf"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/spec"
)

// TestOptions decodes sink mappings as the registry does and checks the
// constructor's verdict, without a broker.
func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string
		check   func(t *testing.T, s *Sink)
	}{
		{
			name: "defaults",
			yaml: "brokers: 127.0.0.1:9092\ntopic: t",
			check: func(t *testing.T, s *Sink) {
				if s.format.Type != "json" || s.keyFormat.Type != "json" || s.linger != DefaultLinger || s.batchSize != DefaultBatchSize ||
					s.batchBytes != DefaultBatchBytes || s.acks != -1 || s.compression != 0 || s.partitioner != byHash {
					t.Errorf("defaults: %+v", s)
				}
			},
		},
		{
			name: "everything",
			yaml: "brokers: [a:1, b:2]\ntopic: t.x-1\nformat: csv\nkey_fields: [id]\nkey_format: csv\npartitioner: round-robin\ncompression: zstd\n" +
				"batch_size: 500\nbatch_bytes: 65536\nlinger: 0\nacks: leader\nwrite_timeout: 3s\ncreate_topic: true\npartitions: 3\nreplication_factor: 1\n" +
				"sasl: {mechanism: PLAIN, username: u, password: p}",
			check: func(t *testing.T, s *Sink) {
				if s.format.Type != "csv" || s.keyFormat.Type != "csv" || s.linger != 0 || s.batchSize != 500 || s.batchBytes != 65536 ||
					s.acks != 1 || s.timeout != 3*time.Second || !s.create || s.partitions != 3 || s.replicas != 1 ||
					s.partitioner != roundRobin || s.kafka.SASL == nil || len(s.kafka.Addrs()) != 2 {
					t.Errorf("options: %+v", s)
				}
			},
		},
		{name: "no topic", yaml: "brokers: a:1", wantErr: "sinks[0].topic: missing required key"},
		{name: "no brokers", yaml: "topic: t", wantErr: "sinks[0].brokers: missing required key"},
		{name: "bad topic", yaml: "brokers: a:1\ntopic: 'a b'", wantErr: "p.yaml:2:8: sinks[0].topic: \"a b\" is not a valid Kafka topic name"},
		{name: "acks 0", yaml: "brokers: a:1\ntopic: t\nacks: 0", wantErr: "sinks[0].acks: acks \"0\" gets no acknowledgement"},
		{name: "compression", yaml: "brokers: a:1\ntopic: t\ncompression: brotli", wantErr: "want none, gzip, snappy, lz4 or zstd"},
		{name: "partitioner", yaml: "brokers: a:1\ntopic: t\npartitioner: random", wantErr: "sinks[0].partitioner: unknown partitioner"},
		{name: "partitions without create", yaml: "brokers: a:1\ntopic: t\npartitions: 3", wantErr: "sinks[0].partitions: only applies with create_topic: true"},
		{name: "typo", yaml: "brokers: a:1\ntopic: t\nlingr: 1ms", wantErr: `sinks[0].lingr: unknown key; did you mean "linger"?`},
		{name: "kafka typo", yaml: "broker: a:1\ntopic: t", wantErr: `did you mean "brokers"?`},
		{name: "bad broker", yaml: "brokers: kafka\ntopic: t", wantErr: "p.yaml:1:10: sinks[0].brokers: broker \"kafka\": want host:port"},
		{name: "misspelt compression", yaml: "brokers: a:1\ntopic: t\ncompression: gzp", wantErr: `p.yaml:3:14: sinks[0].compression: unknown compression "gzp"; did you mean "gzip"? (want none, gzip, snappy, lz4 or zstd)`},
		{name: "misspelt acks", yaml: "brokers: a:1\ntopic: t\nacks: lead", wantErr: `p.yaml:3:7: sinks[0].acks: unknown acks "lead"; did you mean "leader"? (want all or leader)`},
		{name: "topic ..", yaml: "brokers: a:1\ntopic: ..", wantErr: `p.yaml:2:8: sinks[0].topic: ".." is not a valid Kafka topic name`},
		{name: "negative batch_size", yaml: "brokers: a:1\ntopic: t\nbatch_size: -1", wantErr: "p.yaml:3:13: sinks[0].batch_size: must be >= 0 (0: the default, 10000), got -1"},
		{name: "negative batch_bytes", yaml: "brokers: a:1\ntopic: t\nbatch_bytes: -1", wantErr: "p.yaml:3:14: sinks[0].batch_bytes: must be >= 0 (0: the default, 1000000), got -1"},
		{name: "too many partitions", yaml: "brokers: a:1\ntopic: t\ncreate_topic: true\npartitions: 2147483648", wantErr: "p.yaml:4:13: sinks[0].partitions: must be from 0 (the default, 1) to 2147483647, got 2147483648"},
		{name: "replication factor beyond int16", yaml: "brokers: a:1\ntopic: t\ncreate_topic: true\nreplication_factor: 40000", wantErr: "p.yaml:4:21: sinks[0].replication_factor: must be from 0 (the broker's default) to 32767, got 40000"},
		{name: "sasl mechanism", yaml: "brokers: a:1\ntopic: t\nsasl: {mechanism: GSSAPI, username: u, password: p}", wantErr: "sinks[0].sasl.mechanism: unknown SASL mechanism"},
	}
	r := connector.NewRegistry()
	Register(r)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte("name: out\ntype: kafka\nfrom: x\n"+tt.yaml), &doc); err != nil {
				t.Fatal(err)
			}
			// The header lines shift positions by 3.
			for _, n := range doc.Content[0].Content {
				n.Line -= 3
			}
			sink, err := r.NewSink("p.yaml", &spec.Sink{Name: "out", Type: "kafka", Options: doc.Content[0], Path: "sinks[0]"},
				connector.SinkEnv{Name: "out", Formats: testRegistry()})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, sink.(*Sink))
		})
	}
}

// TestBind checks which modes and formats go together, and that each
// refusal says what to do instead.
func TestBind(t *testing.T) {
	schema := testenv.Schema(t, "id BIGINT", "name STRING")
	tests := []struct {
		name      string
		format    string
		keyFields []string
		in        connector.SinkInput
		wantErr   string
	}{
		{name: "append json", format: "json", in: connector.SinkInput{Mode: connector.Append}},
		{name: "append keyed", format: "csv", keyFields: []string{"name"}, in: connector.SinkInput{Mode: connector.Append}},
		{name: "upsert json", format: "json", in: connector.SinkInput{Mode: connector.Upsert, Key: []int{0}}},
		{name: "upsert csv", format: "csv", in: connector.SinkInput{Mode: connector.Upsert, Key: []int{0}}},
		{name: "upsert same key_fields", format: "json", keyFields: []string{"id"}, in: connector.SinkInput{Mode: connector.Upsert, Key: []int{0}}},
		{name: "retract debezium", format: "debezium-json", keyFields: []string{"id"}, in: connector.SinkInput{Mode: connector.Retract}},
		{name: "retract json", format: "json", in: connector.SinkInput{Mode: connector.Retract}, wantErr: "format json cannot carry; use a changelog format (debezium-json, canal-json, maxwell-json, ogg-json), or give the input an upsert key"},
		{name: "retract canal", format: "canal-json", in: connector.SinkInput{Mode: connector.Retract}},
		{name: "retract maxwell", format: "maxwell-json", in: connector.SinkInput{Mode: connector.Retract}},
		{name: "retract ogg", format: "ogg-json", in: connector.SinkInput{Mode: connector.Retract}},
		{name: "upsert canal", format: "canal-json", in: connector.SinkInput{Mode: connector.Upsert, Key: []int{0}}, wantErr: "use mode: retract with canal-json"},
		{name: "upsert debezium", format: "debezium-json", in: connector.SinkInput{Mode: connector.Upsert, Key: []int{0}}, wantErr: "use mode: retract with debezium-json"},
		{name: "key_fields other than upsert key", format: "json", keyFields: []string{"name"}, in: connector.SinkInput{Mode: connector.Upsert, Key: []int{0}}, wantErr: "key_fields name differs from the upsert key (id)"},
		{name: "unknown key field", format: "json", keyFields: []string{"nope"}, in: connector.SinkInput{Mode: connector.Append}, wantErr: `key_fields: "nope" is not a column of the input (its columns: id, name)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(Config{Kafka: kafkaconf.Config{Brokers: []string{"127.0.0.1:9092"}}, Topic: "t", Format: connector.FormatSpec{Type: tt.format}, KeyFields: tt.keyFields},
				connector.SinkEnv{Name: "out", Formats: testRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			tt.in.Schema = schema
			err = s.Bind(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			// An error about one option is a FieldError, which the planner
			// places at that option; the others name the sink.
			var fe *connector.FieldError
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &fe) && !strings.Contains(err.Error(), `sink "out" (kafka, topic t)`) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	caps := func(format string) connector.Capabilities {
		s, err := New(Config{Kafka: kafkaconf.Config{Brokers: []string{"a:1"}}, Topic: "t", Format: connector.FormatSpec{Type: format}}, connector.SinkEnv{Formats: testRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		return s.Capabilities()
	}
	if c := caps("debezium-json"); !c.Retract || !c.AutoRetract || c.Upsert {
		t.Errorf("debezium-json capabilities %+v", c)
	}
	if c := caps("json"); !c.Upsert || !c.UpsertNeedsKey || c.AutoRetract {
		t.Errorf("json capabilities %+v", c)
	}
}

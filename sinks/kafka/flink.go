package kafka

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// FlinkSink implements connector.FlinkSink: Flink's upsert-kafka
// connector in upsert mode (message key = the upsert key, a -D is a
// tombstone, as etld writes them), its kafka connector otherwise.
func (s *Sink) FlinkSink(in connector.SinkInput) (connector.FlinkTable, error) {
	var t connector.FlinkTable
	cfg := s.cfg
	if s.mode == connector.Upsert {
		if len(s.key) == 0 {
			return t, fmt.Errorf("an upsert into Kafka of the one-row global aggregate (an empty key) has no Flink counterpart: upsert-kafka needs a PRIMARY KEY")
		}
		t.Set("connector", "upsert-kafka", "")
	} else {
		t.Set("connector", "kafka", "")
	}
	t.Set("topic", s.topic, "topic")
	s.kafka.Flink(&t)
	if s.keyEnc != nil {
		t.AddFormat("key.", s.keyEnc, "key_format", orDefault(s.keyFormat.Type, "json"))
		if s.mode != connector.Upsert {
			names := make([]string, len(s.key))
			for i, k := range s.key {
				names[i] = in.Schema.Fields[k].Name
			}
			t.Set("key.fields", strings.Join(names, ";"), "key_fields")
		}
		t.AddFormat("value.", s.enc, "format", orDefault(s.format.Type, "json"))
	} else {
		t.AddFormat("", s.enc, "format", orDefault(s.format.Type, "json"))
	}
	if cfg.Compression != "" && !strings.EqualFold(cfg.Compression, "none") {
		t.Set("properties.compression.type", strings.ToLower(cfg.Compression), "compression")
	}
	if cfg.Acks != "" {
		acks := strings.ToLower(cfg.Acks)
		switch acks {
		case "all", "-1":
			acks = "all"
		case "one":
			acks = "1"
		case "none":
			acks = "0"
		}
		t.Set("properties.acks", acks, "acks")
	}
	if cfg.BatchBytes > 0 {
		t.Set("properties.batch.size", fmt.Sprint(cfg.BatchBytes), "batch_bytes")
	}
	if cfg.Linger != nil {
		t.Set("properties.linger.ms", fmt.Sprint(cfg.Linger.Milliseconds()), "linger")
	}
	switch strings.ToLower(cfg.Partitioner) {
	case "", "hash", "default":
	case "round-robin", "round_robin":
		if s.mode != connector.Upsert {
			t.Set("sink.partitioner", "round-robin", "partitioner")
		}
	default:
		t.Differ("partitioner", "Flink's partitioners are default (by the key's hash, as Kafka's client does), fixed and round-robin; %q is left to the default", cfg.Partitioner)
	}
	if cfg.CreateTopic {
		parts := cfg.Partitions
		if parts == 0 {
			parts = 1
		}
		t.Differ("create_topic", "Flink does not create topics: create %s (%d partitions) before the job starts, or let the brokers create it with their defaults (auto.create.topics.enable)", s.topic, parts)
	}
	return t, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

var _ connector.FlinkSink = (*Sink)(nil)

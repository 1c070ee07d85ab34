package kafka

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// FlinkSource implements connector.FlinkSource: Flink's kafka connector.
func (s *Source) FlinkSource() (connector.FlinkTable, error) {
	o := s.opts
	var t connector.FlinkTable
	t.Set("connector", "kafka", "")
	t.Set("topic", strings.Join(o.topics, ";"), "topic")
	o.kafka.Flink(&t)
	if o.groupID != "" {
		t.Set("properties.group.id", o.groupID, "group_id")
		t.Differ("group_id", "Flink assigns partitions itself and commits offsets only for monitoring: it joins no consumer group (no static member id, no rebalance), and resumes from its own checkpoints")
		if o.shared {
			t.Differ("group_shared", "Flink scales by its own parallelism, not by processes in one group: the option has no counterpart and is dropped")
		}
	}
	switch o.start {
	case startEarliest:
		t.Set("scan.startup.mode", "earliest-offset", "start")
	case startLatest:
		t.Set("scan.startup.mode", "latest-offset", "start")
	case startGroupOffsets:
		t.Set("scan.startup.mode", "group-offsets", "start")
		// etld starts a partition without a committed offset at its
		// earliest; Flink asks the client's auto.offset.reset.
		t.Set("properties.auto.offset.reset", "earliest", "start")
	case startTimestamp:
		t.Set("scan.startup.mode", "timestamp", "start")
		t.Set("scan.startup.timestamp-millis", fmt.Sprint(o.startTS.UnixMilli()), "start_timestamp")
	}
	if o.bounded {
		t.Set("scan.bounded.mode", "latest-offset", "stop")
	}
	if o.session != 0 {
		t.Set("properties.session.timeout.ms", fmt.Sprint(o.session.Milliseconds()), "session_timeout")
	}
	prefix := ""
	if s.rows.key != nil {
		prefix = "value."
		t.AddFormat("key.", s.rows.key, "key_format", "")
		t.Set("key.fields", strings.Join(s.flink.keyFields, ";"), "key_fields")
		if s.flink.exceptKey {
			t.Set("value.fields-include", "EXCEPT_KEY", "value_fields_include")
		}
	}
	t.AddFormat(prefix, s.rows.value, "format", s.flink.format)
	return t, nil
}

// flinkConfig is what the Flink export reads of the source's options
// beyond options.
type flinkConfig struct {
	format    string
	keyFields []string
	exceptKey bool
}

var _ connector.FlinkSource = (*Source)(nil)

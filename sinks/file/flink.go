package file

import (
	"fmt"

	"github.com/etld/etld/pipeline/connector"
)

// FlinkSink implements connector.FlinkSink: Flink's filesystem
// connector, which writes a directory of part files, not one file.
func (s *Sink) FlinkSink(in connector.SinkInput) (connector.FlinkTable, error) {
	var t connector.FlinkTable
	if s.mode == connector.Retract && !s.changelog {
		return t, fmt.Errorf("retract mode writes the change kind into an %q column, which no Flink format does: use a changelog format (debezium-json) for the file", opColumn)
	}
	t.Set("connector", "filesystem", "")
	t.Set("path", s.path, "path")
	t.AddFormat("", s.enc, "format", s.format.Type)
	t.Differ("path", "Flink's filesystem sink writes a directory %s of part files (part-<uuid>-<n>), committed at checkpoints and at the end of a bounded job, instead of the one file", s.path)
	if s.append {
		t.Differ("append", "Flink adds new part files to the directory; it never appends to a file")
	}
	return t, nil
}

var _ connector.FlinkSink = (*Sink)(nil)

// FlinkSink implements connector.FlinkSink for a directory of part
// files: Flink's filesystem connector with its rolling policy and, for
// partitioned output, PARTITIONED BY and the partition commit.
func (s *DirSink) FlinkSink(in connector.SinkInput) (connector.FlinkTable, error) {
	var t connector.FlinkTable
	t.Set("connector", "filesystem", "")
	t.Set("path", s.path, "path")
	var codec any = s.enc
	if rf, ok := s.enc.(recordFiles); ok {
		codec = rf.enc // the record format's Flink options
	}
	t.AddFormat("", codec, "format", s.format.Type)
	t.Set("sink.rolling-policy.file-size", fmt.Sprintf("%d b", s.rollBytes), "rolling.file_size")
	if s.rollEvery > 0 {
		t.Set("sink.rolling-policy.rollover-interval", connector.FlinkDuration(s.rollEvery), "rolling.rollover_interval")
		t.Set("sink.rolling-policy.check-interval", connector.FlinkDuration(s.rollEvery), "rolling.rollover_interval")
	}
	t.Differ("path", "Flink names its parts part-<uuid>-<subtask>-<n>; etld part-<n>, numbered across the directory")
	if s.bulk {
		t.Differ("rolling", "Flink also ends every %s part at each checkpoint, so its parts depend on when checkpoints came; etld's only on the rows", s.format.Type)
	}
	if s.append {
		t.Differ("append", "Flink always adds new parts to the directory")
	}
	if s.part == nil {
		return t, nil
	}
	t.PartitionKeys = s.part.names
	p := s.part
	if p.trigger == triggerNone {
		return t, nil
	}
	t.Set("sink.partition-commit.trigger", p.trigger, "partition_commit.trigger")
	t.Set("sink.partition-commit.delay", connector.FlinkDuration(p.delay), "partition_commit.delay")
	t.Set("sink.partition-commit.policy.kind", "success-file", "")
	t.Set("sink.partition-commit.success-file.name", p.success, "partition_commit.success_file")
	if p.patternText != "" {
		t.Set("partition.time-extractor.timestamp-pattern", p.patternText, "partition_commit.timestamp_pattern")
	}
	if p.formatText != "" {
		t.Set("partition.time-extractor.timestamp-formatter", p.formatText, "partition_commit.timestamp_formatter")
	}
	return t, nil
}

var _ connector.FlinkSink = (*DirSink)(nil)

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

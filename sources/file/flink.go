package file

import (
	"path/filepath"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// FlinkSource implements connector.FlinkSource: Flink's filesystem
// connector reading the file (or the glob's directory).
func (s *Source) FlinkSource() (connector.FlinkTable, error) {
	var t connector.FlinkTable
	t.Set("connector", "filesystem", "")
	path := s.pattern
	if strings.ContainsAny(path, "*?[") {
		dir := filepath.Dir(path)
		t.Set("path", dir, "path")
		t.Differ("path", "Flink reads a file or a whole directory, not a glob: the script reads every file in %s, not only those %s matches, in no promised order", dir, path)
	} else {
		t.Set("path", path, "path")
	}
	var codec any = s.dec
	if s.bulk != nil {
		codec = s.bulk
	}
	t.AddFormat("", codec, "format", s.formatName)
	if s.fl != nil {
		t.Set("source.monitor-interval", connector.FlinkDuration(s.fl.interval), "follow")
		t.Differ("follow", "Flink's filesystem source watches the path for new files (source.monitor-interval) but never reads lines appended to a file it has read, nor follows a rotation: as tail -F, etld does both")
	}
	if s.maxRecordSet {
		t.Differ("max_record_bytes", "Flink has no bound on a record spanning lines; the option is dropped")
	}
	return t, nil
}

var _ connector.FlinkSource = (*Source)(nil)

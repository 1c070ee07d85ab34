package mysql

import (
	"context"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// Reset says what a run of binlog capture starts from without its
// checkpoint (connector.Resetter). The server keeps nothing of the
// source's: its binlog position lives only in the checkpoint, so removing
// the checkpoint is the whole reset, and the next run starts as a first
// run does. Saying so is the point: a reset of a pipeline that reads
// MySQL must retake the snapshot, which a Kafka source, for one, would
// not do on its own.
func (s *CDC) Reset(context.Context) (string, error) {
	switch s.startup {
	case startInitial:
		return "binlog capture keeps its position only in the checkpoint: the next run takes a new snapshot of " + strings.Join(s.tableList(), ", ") + ", then reads the binlog from it", nil
	case startSnapshot:
		return "", nil
	case startLatest:
		return "binlog capture keeps its position only in the checkpoint: the next run reads the binlog from its end (scan.startup.mode latest-offset), with no snapshot", nil
	case startEarliest:
		return "binlog capture keeps its position only in the checkpoint: the next run reads the binlog from the oldest on the server (earliest-offset)", nil
	}
	return "binlog capture keeps its position only in the checkpoint: the next run reads the binlog from scan.startup.specific_offset", nil
}

var _ connector.Resetter = (*CDC)(nil)

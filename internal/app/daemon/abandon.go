package daemon

import (
	"log/slog"

	"github.com/etld/etld/pipeline"
)

// LogAbandoned logs, at error level, that a pipeline's graceful stop was
// cut short (why: the shutdown_timeout passed, or a second signal) and
// what it leaves: per sink, the rows taken in after the last completed
// checkpoint, written or buffered but not covered by a checkpoint. Nothing
// is lost: the checkpoint is the truth, and the next start resumes from
// it and reads those rows again. s is the run's latest summary; resumable
// says whether checkpoints are kept (a state dir), without which the next
// start reads the input from its beginning.
func LogAbandoned(log *slog.Logger, s pipeline.Summary, resumable bool, why string) {
	var total int64
	sinks := make([]any, 0, len(s.Sinks))
	for _, c := range s.Sinks {
		total += c.Pending
		sinks = append(sinks, slog.Int64(c.Name, c.Pending))
	}
	args := []any{"pipeline", s.Pipeline, "reason", why, "pending_rows", total, slog.Group("pending_rows_by_sink", sinks...)}
	if !resumable {
		log.Error("pipeline did not stop in time: abandoned; without a state dir nothing is kept, so the next run reads its input from the beginning", args...)
		return
	}
	// The newest checkpoint: this run's last, else the one it resumed
	// from; 0 means none yet, so the next start begins afresh.
	n := s.Checkpoints.LastID
	if n == 0 {
		n = s.Checkpoints.Restored
	}
	args = append(args, "resume_from_checkpoint", n)
	if n == 0 {
		log.Error("pipeline did not stop in time: abandoned before its first checkpoint; nothing is lost, the next start reads its input from the beginning", args...)
		return
	}
	log.Error("pipeline did not stop in time: abandoned; nothing is lost, the next start resumes from its last checkpoint and reads the pending rows again", args...)
}

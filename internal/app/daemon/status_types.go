package daemon

import (
	"time"

	"github.com/etld/etld/pipeline"
)

// State is a pipeline's lifecycle state.
type State string

// The states, in /pipelines and in the etld_pipeline_state metric.
const (
	Starting State = "starting" // loaded, run about to begin
	Running  State = "running"
	Finished State = "finished" // a bounded pipeline reached the end of its input
	Failed   State = "failed"   // does not load, or failed permanently
	Retrying State = "retrying" // failed; restarts after a backoff
	Stopped  State = "stopped"  // stopped by a signal or a reload
	// Backfilling: running, while an edit of its file is backfilled
	// beside it (backfill.go); Status.Backfill says how far.
	Backfilling State = "backfilling"
)

// States lists every state.
var States = []State{Starting, Running, Finished, Failed, Retrying, Stopped, Backfilling}

// Status is one pipeline file's state and counters.
type Status struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	State State  `json:"state"`
	// Error is why the pipeline failed, is retrying or did not load.
	Error string `json:"error,omitempty"`
	// ReloadError is why the file's newer content was refused; the
	// version shown keeps running.
	ReloadError string `json:"reload_error,omitempty"`
	// Backfill is the backfill of an edit of the file that runs beside
	// the version shown (state backfilling, or that version's state
	// while it is not running).
	Backfill *BackfillStatus `json:"backfill,omitempty"`
	// Replacing: the version shown is stopping, or stopped, for the
	// file's next version, which starts right after (a reload, a
	// backfill's take-over): a planned hand-over, ready meanwhile.
	Replacing bool       `json:"replacing,omitempty"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	// Restarts counts runs begun again after a failure.
	Restarts int `json:"restarts"`
	// Errors counts the errors this version of the file met: runs that
	// failed (retried or not) and a file that did not load.
	Errors int `json:"errors"`
	// RowsInPerSecond and RowsOutPerSecond are the rates of rows read by
	// the sources and written by the sinks over the last 10 seconds of
	// the history (absent until two samples exist).
	RowsInPerSecond  *float64 `json:"rows_in_per_second,omitempty"`
	RowsOutPerSecond *float64 `json:"rows_out_per_second,omitempty"`
	// Counters add up every run of this version of the file.
	Sources []Counter `json:"sources"`
	Sinks   []Counter `json:"sinks"`
	// Dropped counts rows operators discarded (late rows of windows).
	Dropped     []Counter   `json:"dropped,omitempty"`
	Checkpoints Checkpoints `json:"checkpoints"`
	// Operators lists the plan's operators with their counters, each
	// named by its short id.
	Operators []OperatorStatus `json:"operators,omitempty"`
	// State lists the stateful operators with the size of their state,
	// from the current run (the last run's when none runs).
	OperatorState []StateSize `json:"operator_state,omitempty"`
}

// StateSize is one stateful operator's state: the entries it holds
// (groups, window groups, distinct rows) and the bytes of its newest
// snapshot (0 before the first checkpoint).
type StateSize struct {
	// Operator is the operator's short id, Plan its plan text.
	Operator  string `json:"operator"`
	Plan      string `json:"plan"`
	Transform string `json:"transform,omitempty"`
	// StateID is the operator's state_id in the plan (/pipelines/{name}/plan).
	StateID string `json:"state_id"`
	Entries int64  `json:"entries"`
	Bytes   int64  `json:"bytes"`
	// StateTTL is the operator's state_ttl ("3s", "1h0m0s"), absent
	// when its state does not expire.
	StateTTL string `json:"state_ttl,omitempty"`
}

// Checkpoints are a pipeline's checkpoint counters, over every run of
// this version of the file; the Last fields are the newest checkpoint's.
type Checkpoints struct {
	Count    int64 `json:"count"`
	Failures int64 `json:"failures"`
	LastID   int64 `json:"last_id,omitempty"`
	// LastDuration is from the checkpoint's trigger until it was stored.
	LastDuration time.Duration `json:"-"`
	LastSeconds  float64       `json:"last_duration_seconds,omitempty"`
	LastSize     int64         `json:"last_size_bytes,omitempty"`
	// LastAt is when the newest checkpoint completed.
	LastAt *time.Time `json:"last_at,omitempty"`
	// Restored is the checkpoint the newest run resumed from (0: none).
	Restored int64 `json:"restored,omitempty"`
	// Recent are the last checkpoints, oldest first.
	Recent []CheckpointEntry `json:"recent,omitempty"`
}

func (c *Checkpoints) add(s pipeline.Checkpoints) {
	c.Count += s.Count
	c.Failures += s.Failures
	if s.LastID != 0 {
		c.LastID, c.LastDuration, c.LastSize = s.LastID, s.LastDuration, s.LastSize
		c.LastSeconds = s.LastDuration.Seconds()
		if !s.LastAt.IsZero() {
			t := s.LastAt.UTC()
			c.LastAt = &t
		}
	}
	if s.Restored != 0 {
		c.Restored = s.Restored
	}
	c.Recent = recentCheckpoints(c.Recent, s.Recent)
}

// Counter is one component's counters. Bytes and Lag are present when the
// connector reports them (connector.Meter, connector.Lagger).
type Counter struct {
	Name    string `json:"name"`
	In      int64  `json:"rows_in"`
	Out     int64  `json:"rows_out"`
	Skipped int64  `json:"skipped"`
	// DeadLettered is the part of Skipped that on_error: dead-letter
	// wrote to the dead letter (all of it under that policy, else 0).
	DeadLettered int64  `json:"dead_lettered"`
	Bytes        *int64 `json:"bytes,omitempty"`
	Lag          *int64 `json:"lag,omitempty"`
	// Reason, for an operator's dropped rows, says why: "late" for rows
	// behind the watermark.
	Reason string `json:"reason,omitempty"`
	// TimeStatus is a source's watermark, and a source's or sink's time.
	TimeStatus
	// Writes and Flushes time a sink's calls of its connector's Write
	// and Flush; PendingCallSeconds is how long the one under way has
	// run (0 between calls: a target that hangs shows here).
	Writes             *LatencyStatus `json:"write_latency,omitempty"`
	Flushes            *LatencyStatus `json:"flush_latency,omitempty"`
	PendingCallSeconds *float64       `json:"pending_call_seconds,omitempty"`
	// Partitions is a Kafka source's lag per partition it reads now.
	Partitions []PartitionStatus `json:"partitions,omitempty"`
}

// A one-shot run's summary, and the counters the progress line shows.

package pipeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/etld/etld/internal/human"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Summary is a run's counters.
type Summary struct {
	Pipeline string
	Elapsed  time.Duration
	Sources  []Count
	Sinks    []Count
	// Operators lists the plan's operators, each transform's in
	// data-flow order, with their counters (summary_ops.go).
	Operators []Operator
	// Dropped counts the rows each operator that may drop rows (late
	// rows of windows) discarded, 0 included, named by its operator's ID.
	Dropped []Count
	// Checkpoints are the run's checkpoint counters.
	Checkpoints Checkpoints
	// State lists the stateful operators (group and window aggregates,
	// DISTINCT) with the size of their state, in plan order.
	State []StateSize
}

// StateSize is one stateful operator's state: Entries it holds now
// (groups, window groups, distinct rows) and the Bytes of its newest
// snapshot (0 before the first checkpoint).
type StateSize struct {
	// Operator is the operator's short name (Operator.ID), Plan its
	// plan, e.g. GroupAggregate(...); Transform the pipeline file's
	// transform it belongs to.
	Operator, Plan, Transform string
	// ID is the operator's state id (runtime.Node.ID), the StateID of
	// its node in plan.Describe.
	ID             string
	Entries, Bytes int64
	// TTL is the operator's state_ttl retention, 0 for none.
	TTL time.Duration
}

// Checkpoints are a run's checkpoint counters.
type Checkpoints struct {
	// Count is the number of completed checkpoints, the final one
	// included; Failures the number that could not be stored.
	Count, Failures int64
	// LastID is the id of the last completed checkpoint; LastDuration
	// the time from its trigger until it was stored; LastSize the bytes
	// of its file (0 without a state dir).
	LastID       int64
	LastDuration time.Duration
	LastSize     int64
	// LastAt is when the last checkpoint completed (zero if none).
	LastAt time.Time
	// Restored is the id of the checkpoint the run resumed from, 0 if
	// it started afresh.
	Restored int64
	// Recent are the last checkpoints, oldest first (at most
	// runtime.CheckpointHistory).
	Recent []runtime.CheckpointRecord
}

// Count is one component's counters. A source's In counts the records
// it decoded, Out the rows it passed on; a sink's In the changes it
// received, Out those its target acknowledged (an upsert sink drops -U;
// a refused row or one a failed flush left unwritten is not); Skipped the
// records or rows the on_error policy set aside.
type Count struct {
	Name             string
	In, Out, Skipped int64
	// Mode is a sink's changelog mode (append, upsert, retract); "" for
	// a source.
	Mode string
	// Read and Size are a bounded source's progress through its input
	// in bytes, of its size (connector.Sizer); both 0 for a source that
	// cannot tell (datagen, Kafka, a followed file).
	Read, Size int64
	// Reason, for an operator's count of dropped rows (Skipped), says
	// why it dropped them: "late" for rows behind the watermark.
	Reason string
	// Pending, for a sink, counts the rows it took in after the last
	// completed checkpoint: written or buffered, but not yet covered by
	// a checkpoint, so a run cut short reads them again on its next start.
	Pending int64
	// Time is a source's watermark and where a source's or a sink's time
	// went (summary_ops.go).
	Time
	// Writes and Flushes are a sink's calls of Write and Flush, timed;
	// PendingCall how long the one under way has run (0 between calls).
	Writes, Flushes operator.LatencySnapshot
	PendingCall     time.Duration
}

// RowsPerSecond is the sources' output rate.
func (s Summary) RowsPerSecond() float64 {
	var n int64
	for _, c := range s.Sources {
		n += c.Out
	}
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(n) / s.Elapsed.Seconds()
}

// String is the end-of-run summary: a title line, then one table row
// per source and sink whose columns line up (names left, counts right),
// then the rows operators dropped:
//
//	pipeline p: 1.2s, 812345 rows/s, 1 checkpoint
//	  KIND    NAME    MODE         IN      OUT  SKIPPED      READ
//	  source  sensor  -       1000000  1000000        0  30.2 MiB
//	  sink    stats   upsert  1000000    52000        0
//
// READ is there when a source knows its size; it shows "done/size" for
// a run that stopped before the end.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pipeline %s: %s, %.0f rows/s", s.Pipeline, s.Elapsed.Round(time.Millisecond), s.RowsPerSecond())
	switch n := s.Checkpoints.Count; n {
	case 0:
	case 1:
		b.WriteString(", 1 checkpoint")
	default:
		fmt.Fprintf(&b, ", %d checkpoints", n)
	}
	if c := s.Checkpoints; c.LastSize > 0 {
		fmt.Fprintf(&b, " (the last %s, in %s)", human.Bytes(c.LastSize), c.LastDuration.Round(time.Millisecond))
	}
	b.WriteString("\n")
	sized := false
	for _, c := range s.Sources {
		sized = sized || c.Size > 0
	}
	header := []string{"KIND", "NAME", "MODE", "IN", "OUT", "SKIPPED"}
	if sized {
		header = append(header, "READ")
	}
	rows := [][]string{header}
	add := func(kind string, c Count) {
		mode := c.Mode
		if mode == "" {
			mode = "-"
		}
		r := []string{kind, c.Name, mode, strconv.FormatInt(c.In, 10), strconv.FormatInt(c.Out, 10), strconv.FormatInt(c.Skipped, 10)}
		if sized {
			switch {
			case c.Size == 0:
				r = append(r, "")
			case c.Read < c.Size:
				r = append(r, human.Bytes(c.Read)+"/"+human.Bytes(c.Size))
			default:
				r = append(r, human.Bytes(c.Size))
			}
		}
		rows = append(rows, r)
	}
	for _, c := range s.Sources {
		add("source", c)
	}
	for _, c := range s.Sinks {
		add("sink", c)
	}
	writeTable(&b, rows, 3)
	s.writeTimes(&b)
	for _, c := range s.Dropped {
		if c.Skipped == 0 {
			continue
		}
		what := "rows"
		if c.Reason != "" {
			what = c.Reason + " rows"
		}
		fmt.Fprintf(&b, "  dropped %d %s in %s\n", c.Skipped, what, c.Name)
	}
	for _, st := range s.State {
		fmt.Fprintf(&b, "  state of %s: %d entries", st.Operator, st.Entries)
		if st.Bytes > 0 {
			fmt.Fprintf(&b, ", %s checkpointed", human.Bytes(st.Bytes))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// writeTable writes rows indented by two spaces, columns two spaces
// apart, the columns from right on aligned right (numbers), the others
// left; no row ends in spaces.
func writeTable(b *strings.Builder, rows [][]string, right int) {
	var widths []int
	for _, r := range rows {
		for i, cell := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len(cell))
		}
	}
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, cell := range r {
			pad := strings.Repeat(" ", widths[i]-len(cell))
			if i >= right {
				cells[i] = pad + cell
			} else {
				cells[i] = cell + pad
			}
		}
		b.WriteString(strings.TrimRight("  "+strings.Join(cells, "  "), " ") + "\n")
	}
}

package windowop

import (
	"fmt"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// WindowTable is a window TVF read as a table (Flink's
// WindowTableFunction): each insert-only row is emitted once per window
// that holds it, with window_start, window_end and window_time appended
// (see WindowColumns). Rows whose time is NULL belong to no window and
// are dropped, as in Flink. It has no state.
type WindowTable struct {
	Spec WindowSpec
	// LTZ: the time attribute is a TIMESTAMP_LTZ, and so is window_time.
	LTZ bool
	// Zone (with LTZ; nil is UTC) is the session time zone: windows align
	// to its wall clock, window_start and window_end are that wall clock,
	// and window_time the instant of its last millisecond on that clock,
	// as WindowOptions.Zone in a window aggregate.
	Zone *time.Location
	// Keys (the PARTITION BY columns) and Batch are SESSION's, which
	// runs as a SessionTable.
	Keys    []int
	Batch   bool
	dropped int64
}

// Dropped counts rows without a time.
func (w *WindowTable) Dropped() (int64, string) { return w.dropped, "no event time" }

func (w *WindowTable) Process(in *row.Batch, out operator.Emitter) error {
	if err := w.Spec.Validate(); err != nil {
		return err
	}
	return operator.EachChange("window table", in, out, func(_ int, c *row.Change) error {
		if c.Kind != row.Insert {
			return fmt.Errorf("input planned as insert-only carries a %s change", c.Kind)
		}
		tv := c.Row[w.Spec.TimeCol]
		if tv.IsNull() {
			w.dropped++
			return nil
		}
		ts := tv.Micros()
		zoned := w.LTZ && w.Zone != nil
		if zoned {
			ts = row.WallMicros(w.Zone, ts)
		}
		windowsOf(w.Spec, ts, func(start, end int64) {
			r := make(row.Row, len(c.Row), len(c.Row)+3)
			copy(r, c.Row)
			wt := row.TimestampValue(end - 1000)
			switch {
			case zoned:
				wt = row.TimestampLTZValue(windowTimeLTZ(w.Zone, end, 0))
			case w.LTZ:
				wt = row.TimestampLTZValue(end - 1000)
			}
			out.Emit(row.Insert, append(r, row.TimestampValue(start), row.TimestampValue(end), wt))
		})
		return nil
	})
}

// windowsOf calls f with each window [start, end) that holds ts, in
// ascending order of start (TUMBLE: one; HOP: size/slide; CUMULATE: the
// steps of its cycle that end after ts).
func windowsOf(s WindowSpec, ts int64, f func(start, end int64)) {
	switch s.Kind {
	case Tumble:
		start := windowStart(ts, s.Offset, s.Size)
		f(start, start+s.Size)
	case Hop:
		last := windowStart(ts, s.Offset, s.Slide)
		first := last
		for first-s.Slide > ts-s.Size {
			first -= s.Slide
		}
		for start := first; start <= last; start += s.Slide {
			f(start, start+s.Size)
		}
	case Cumulate:
		start := windowStart(ts, s.Offset, s.Size)
		for end := start + s.Step; end <= start+s.Size; end += s.Step {
			if end > ts {
				f(start, end)
			}
		}
	}
}

func (w *WindowTable) Watermark(int64, operator.Emitter) error { return nil }
func (w *WindowTable) Finish(operator.Emitter) error           { return nil }

var (
	_ operator.Operator = (*WindowTable)(nil)
	_ operator.Counters = (*WindowTable)(nil)
)

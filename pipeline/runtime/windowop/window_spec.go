package windowop

import (
	"fmt"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// WindowKind is a window table function.
type WindowKind uint8

const (
	Tumble   WindowKind = iota // TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset])
	Hop                        // HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset])
	Cumulate                   // CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset])
	Session                    // SESSION(TABLE t [PARTITION BY k], DESCRIPTOR(ts), gap): SessionAgg
)

func (k WindowKind) String() string {
	switch k {
	case Tumble:
		return "TUMBLE"
	case Hop:
		return "HOP"
	case Cumulate:
		return "CUMULATE"
	case Session:
		return "SESSION"
	}
	return fmt.Sprintf("WindowKind(%d)", k)
}

// WindowSpec is a window aggregate's window. Durations are microseconds.
type WindowSpec struct {
	Kind    WindowKind
	TimeCol int // index of the event-time column: a TIMESTAMP or TIMESTAMP_LTZ value
	Size    int64
	Slide   int64 // HOP
	Step    int64 // CUMULATE
	Offset  int64 // shifts window starts; no effect on watermarks
	Gap     int64 // SESSION
	// ProcTime: TimeCol is a processing-time attribute; the planner builds
	// a ProcWindowAgg, which assigns rows by the clock.
	ProcTime bool
}

// lastMilli is the last millisecond of a window ending at end (its
// maxTimestamp): the window fires once the watermark reaches it, and a
// row for it is late after that, as Flink's timers (milliseconds, at
// windowEnd - 1) have it.
func lastMilli(end int64) int64 { return end - 1000 }

// SessionSortedWatermark is a SESSION's watermark once every row before
// time next was seen (sortop.TimeSorted): it fires the sessions that
// end before next, which no later row can touch (a row at next would
// extend a session ending there).
func SessionSortedWatermark(next int64) int64 { return lastMilli(next) - 1 }

// OverSortedWatermark is an OVER's watermark once every row before time
// next was seen: it emits the rows before next.
func OverSortedWatermark(next int64) int64 { return next - 1 }

// Sortable reports whether an OVER over event time can run over input
// sorted by time (sortop.TimeSorted) in a batch run: LEAD reads rows
// after a row, and NTILE, PERCENT_RANK and CUME_DIST count the whole
// partition, so they need each partition whole.
func (s OverSpec) Sortable() bool {
	if s.ProcTime {
		return false
	}
	for _, f := range s.Funcs {
		switch f.Kind {
		case Lead, NTile, PercentRank, CumeDist:
			return false
		}
	}
	return true
}

// maxEventTime bounds event times and durations so that window arithmetic
// cannot overflow: ±2^62 µs is ±146,000 years.
const maxEventTime = 1 << 62

// Validate reports a spec Flink refuses, with Flink's rules: TUMBLE needs
// size > 0 and |offset| < size; HOP slide > 0, size > 0 and size a
// multiple of slide; CUMULATE step > 0, size > 0 and size a multiple of
// step; SESSION gap > 0.
func (w WindowSpec) Validate() error {
	if w.TimeCol < 0 {
		return fmt.Errorf("%s: time column %d is negative", w.Kind, w.TimeCol)
	}
	for _, d := range []int64{w.Size, w.Slide, w.Step, w.Offset, w.Gap} {
		if d >= maxEventTime/4 || d <= -maxEventTime/4 {
			return fmt.Errorf("%s: duration %dµs is out of range", w.Kind, d)
		}
	}
	switch w.Kind {
	case Tumble:
		if w.Size <= 0 {
			return fmt.Errorf("TUMBLE window size must be positive, got %s", micros(w.Size))
		}
		if w.Offset <= -w.Size || w.Offset >= w.Size {
			return fmt.Errorf("TUMBLE window offset %s must be smaller than its size %s", micros(w.Offset), micros(w.Size))
		}
	case Hop:
		if w.Size <= 0 || w.Slide <= 0 {
			return fmt.Errorf("HOP window slide and size must be positive, got slide %s and size %s", micros(w.Slide), micros(w.Size))
		}
		if w.Size%w.Slide != 0 {
			return fmt.Errorf("HOP window size %s must be an integral multiple of its slide %s", micros(w.Size), micros(w.Slide))
		}
	case Cumulate:
		if w.Size <= 0 || w.Step <= 0 {
			return fmt.Errorf("CUMULATE window step and size must be positive, got step %s and size %s", micros(w.Step), micros(w.Size))
		}
		if w.Size%w.Step != 0 {
			return fmt.Errorf("CUMULATE window size %s must be an integral multiple of its step %s", micros(w.Size), micros(w.Step))
		}
	case Session:
		if w.Gap <= 0 {
			return fmt.Errorf("SESSION window gap must be positive, got %s", micros(w.Gap))
		}
	default:
		return fmt.Errorf("unknown window kind %d", w.Kind)
	}
	return nil
}

func micros(d int64) time.Duration { return time.Duration(d) * time.Microsecond }

// WindowColumns are the columns a window aggregate puts after its keys:
// window_start and window_end TIMESTAMP(3), and window_time, the time
// attribute of the result (window_end - 1 ms) with the type of the input's
// time attribute, as Flink's window TVFs.
func WindowColumns(timeType row.Type) []row.Field {
	wt := row.Type{ID: row.Timestamp, Precision: 3, NotNull: true}
	if timeType.ID == row.TimestampLTZ {
		wt.ID = row.TimestampLTZ
	}
	return []row.Field{
		{Name: "window_start", Type: row.Type{ID: row.Timestamp, Precision: 3, NotNull: true}},
		{Name: "window_end", Type: row.Type{ID: row.Timestamp, Precision: 3, NotNull: true}},
		{Name: "window_time", Type: wt},
	}
}

// WindowOptions tunes a WindowAgg.
type WindowOptions struct {
	// Batch: a bounded input with final results (execution: batch). No
	// row is late: watermarks before the final one are ignored and every
	// window fires at the end.
	Batch bool
	// Sorted (with Batch, OVER and SESSION only): the input comes in time
	// order from a sortop.TimeSorted, whose watermarks before the final
	// one say no earlier row follows: they fire as in streaming, and
	// still no row is late.
	Sorted bool
	// Zone aligns windows over a TIMESTAMP_LTZ time attribute to the wall
	// clock of this zone (Flink's table.local-time-zone): a one-day window
	// starts at local midnight, window_start and window_end are local
	// TIMESTAMPs, and a window fires when the watermark passes the instant
	// its local end stands for. nil is UTC. TIMESTAMP attributes are wall
	// clocks already and ignore it.
	Zone *time.Location
	// Attached: the rows were assigned to their windows upstream, by a
	// window join, aggregate or Top-N (Flink's
	// WindowAttachedWindowingStrategy): each row counts in the window it
	// carries, not in the windows of its time. The spec's TimeCol is then
	// the rows' window_end column and the last key column their
	// window_start, and an output row is [keys..., window_start,
	// window_end, window_time, results...] with window_start from the key.
	Attached bool
	// AttachedLTZ: with Attached, the upstream windows were over a
	// TIMESTAMP_LTZ, so window_time is one too.
	AttachedLTZ bool
	// Updating (TUMBLE, HOP, CUMULATE over event time, in streaming): the
	// input is a changelog. -U and -D retract their row from the windows
	// of its time (late ones are dropped as late rows are), and a group
	// whose rows all went is not emitted, as Flink's window aggregate
	// over a changelog (its WindowIsEmptySupplier) skips an empty one.
	Updating bool
}

// windowStart is Flink's TimeWindow.getWindowStartWithOffset.
func windowStart(ts, offset, size int64) int64 {
	r := (ts - offset) % size
	if r < 0 {
		return ts - (r + size)
	}
	return ts - r
}

// windowTimeLTZ is the window_time of a window over a TIMESTAMP_LTZ that
// ends at end (its wall clock in zone, nil for UTC) and fires at the
// instant fire: the instant of the wall clock's last millisecond, as
// Flink's toUtcTimestampMills(windowEnd - 1) (in a repeated hour the
// earlier one, so it can come before fire).
func windowTimeLTZ(zone *time.Location, end, fire int64) int64 {
	if zone == nil {
		return fire - 1000
	}
	return row.AtZone(zone, end-1000)
}

// eventTime reads an insert-only window input row's event time, checking
// its kind, width and type; timeID is the type seen first, which every
// later row must have. A NULL time is errNullTime: the row is dropped.
func eventTime(k row.Kind, r row.Row, width, col int, timeID *row.TypeID) (int64, error) {
	if k != row.Insert {
		return 0, fmt.Errorf("input planned as insert-only carries a %s change", k)
	}
	if len(r) < width {
		return 0, fmt.Errorf("row has %d columns, want at least %d", len(r), width)
	}
	tv := r[col]
	switch id := tv.Type(); {
	case id == row.Null:
		return 0, errNullTime
	case id != row.Timestamp && id != row.TimestampLTZ:
		return 0, fmt.Errorf("event time column %d has type %s, want TIMESTAMP or TIMESTAMP_LTZ", col, id)
	case *timeID == row.Null:
		*timeID = id
	case id != *timeID:
		return 0, fmt.Errorf("event time column %d has type %s after %s", col, id, *timeID)
	}
	ts := tv.Micros()
	if ts >= maxEventTime || ts <= -maxEventTime {
		return 0, fmt.Errorf("event time %s is out of range", tv)
	}
	return ts, nil
}

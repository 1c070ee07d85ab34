package windowop

import (
	"errors"
	"fmt"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// ProcTick is how often a processing-time window aggregate looks at the
// clock while its input is quiet: a window fires at most this long after
// its end.
const ProcTick = 100 * time.Millisecond

// procClock is the processing-time clock of a ProcWindowAgg: arrival is
// the time the rows of the batch being processed are assigned by.
type procClock struct {
	now     func() time.Time
	arrival int64
}

// ProcWindowAgg is a TUMBLE, HOP or CUMULATE window aggregate over a
// processing-time attribute (a PROCTIME() column), as Flink's slicing
// WindowAggOperator runs it on processing time: a row counts in the
// windows of the wall clock when it arrives (its column's value is not
// read), and a window fires once the clock reaches its end - 1 ms (the
// timer Flink sets), on the next batch or on the node's tick (Flush,
// every ProcTick). Watermarks are ignored and no row is late. At the end
// of a bounded input the windows still open are dropped without firing,
// as Flink drops the processing-time timers not yet due when a finite
// stream finishes. The state is WindowAgg's (Snapshot, Restore): a
// restored window fires when the clock passes its end, at once if it
// already has.
type ProcWindowAgg struct {
	*WindowAgg
}

// NewProcWindowAgg builds the operator; now is the clock (nil is
// time.Now). The spec's TimeCol is the processing-time column, whose
// values are not read. SESSION, batch mode and attached windows are
// event-time only and refused.
func NewProcWindowAgg(w WindowSpec, keys []int, aggs []aggop.AggCall, opt WindowOptions, now func() time.Time) (*ProcWindowAgg, error) {
	if w.Kind == Session || opt.Batch || opt.Attached {
		return nil, errProcWindow
	}
	g, err := NewWindowAgg(w, keys, aggs, opt)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	g.proc = &procClock{now: now}
	// The clock's type: windows align in the zone as an LTZ attribute's.
	g.timeID = row.TimestampLTZ
	return &ProcWindowAgg{WindowAgg: g}, nil
}

var errProcWindow = errors.New("processing-time window aggregate: only TUMBLE, HOP and CUMULATE in streaming mode")

// clock reads the clock in whole milliseconds, Flink's timer resolution.
func (g *ProcWindowAgg) clock() int64 {
	return g.proc.now().UnixMilli() * 1000
}

// advance fires the windows whose timer (end - 1 ms) is at or before t.
func (g *ProcWindowAgg) advance(t int64, out operator.Emitter) error {
	if t <= g.wm {
		return nil
	}
	g.wm = t
	return g.fire(out)
}

// Process fires the windows due before now, counts the batch's rows in
// the windows of now, then fires those due at now: a row arriving in a
// window's last millisecond counts in it, as Flink adds it before its
// timer runs.
func (g *ProcWindowAgg) Process(in *row.Batch, out operator.Emitter) error {
	now := g.clock()
	if err := g.advance(now-1000, out); err != nil {
		return err
	}
	g.proc.arrival = now
	if err := g.WindowAgg.Process(in, out); err != nil {
		return err
	}
	return g.advance(now, out)
}

// Watermark is ignored: processing-time windows fire by the clock.
func (g *ProcWindowAgg) Watermark(int64, operator.Emitter) error { return nil }

// Finish drops the windows still open: their timers are not due.
func (g *ProcWindowAgg) Finish(operator.Emitter) error { return nil }

// Flush implements operator.Flusher: the node's tick fires the windows
// the clock has passed while the input is quiet, and before a snapshot.
func (g *ProcWindowAgg) Flush(out operator.Emitter) error { return g.advance(g.clock(), out) }

// FlushEvery implements operator.Flusher.
func (g *ProcWindowAgg) FlushEvery() time.Duration { return ProcTick }

var _ operator.Flusher = (*ProcWindowAgg)(nil)

// rowTime is the time r counts at: its event time, or on processing
// time the batch's arrival (the column is not read).
func (g *WindowAgg) rowTime(k row.Kind, r row.Row) (int64, error) {
	if g.proc == nil {
		return eventTime(k, r, g.width, g.spec.TimeCol, &g.timeID)
	}
	if k != row.Insert {
		return 0, fmt.Errorf("input planned as insert-only carries a %s change", k)
	}
	if len(r) < g.width {
		return 0, fmt.Errorf("row has %d columns, want at least %d", len(r), g.width)
	}
	return g.proc.arrival, nil
}

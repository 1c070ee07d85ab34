package runtime

import (
	"math"

	"github.com/etld/etld/pipeline/row"
)

// MaxWatermark is the watermark a bounded source sends after its last row:
// every window ends before it.
const MaxWatermark int64 = math.MaxInt64

// NoWatermark means no watermark has been seen yet.
const NoWatermark int64 = math.MinInt64

// Emitter collects an operator's output changes. Operators add changes
// with Emit; the node batches and sends them.
type Emitter interface {
	Emit(k row.Kind, r row.Row)
}

// Operator is one step of a transform. The node calls Process for every
// input batch, Watermark when the event-time clock advances, and Finish
// once when the input has ended. All calls come from one goroutine.
// An operator may keep rows of its input batches (they are immutable) but
// must not modify them, unless it is an InputReleaser that said it keeps
// none (doc.go, Retention).
type Operator interface {
	Process(in *row.Batch, out Emitter) error
	// Watermark tells the operator that no row with an event time below wm
	// (microseconds) will arrive any more. Operators that hold rows until
	// then (windows) emit them here. The node forwards the watermark
	// downstream after the call.
	Watermark(wm int64, out Emitter) error
	// Finish is called at the end of a bounded input, after the final
	// watermark. Batch-mode aggregates emit their results here.
	Finish(out Emitter) error
}

// Counters is what an operator reports for `etld run`'s summary and the
// metrics endpoint; operators that drop rows (late rows of a window)
// implement it.
type Counters interface {
	// Dropped returns the number of input rows the operator discarded and
	// why (e.g. "late").
	Dropped() (n int64, reason string)
}

// StateSizer is an operator whose state grows with what it has seen
// (group and window aggregates, DISTINCT). StateEntries is called from
// the operator's goroutine after each message; the node publishes it in
// Stats.StateEntries for the metrics endpoint and the console.
type StateSizer interface {
	StateEntries() int64
}

var (
	_ StateSizer = (*GroupAgg)(nil)
	_ StateSizer = (*WindowAgg)(nil)
	_ StateSizer = (*Distinct)(nil)
)

// batchEmitter gathers emitted changes into batches of up to size rows and
// hands full ones to send. It carries positions (see origin.go): between
// begin and take, every batch it makes comes from the one input batch
// begin was given.
type batchEmitter struct {
	size  int
	batch *row.Batch
	full  []*row.Batch
	// src is the origin of the input batch being processed, nil when it
	// has none (and for a watermark or the end of input); cur is the
	// input change the next emitted ones come from, -1 for none; from
	// parallels batch.Changes while src is set.
	src  row.Origin
	cur  int32
	from []int32
	// last is the length of the last batch taken: a new batch starts
	// with room for as many changes, so that one emitting as many changes
	// as it reads (a Calc) does not grow its slices from 256 each time.
	last int
}

func newBatchEmitter(size int) *batchEmitter { return &batchEmitter{size: size, cur: -1} }

// begin starts the emissions caused by in, or by no input batch when in
// is nil. Every batch of the previous input must have been taken.
func (e *batchEmitter) begin(in *row.Batch) {
	e.src, e.cur = nil, -1
	if in != nil {
		e.src = in.Origin
	}
}

// at implements tracker.
func (e *batchEmitter) at(i int) { e.cur = int32(i) }

func (e *batchEmitter) Emit(k row.Kind, r row.Row) {
	if e.batch == nil {
		e.batch = &row.Batch{Changes: make([]row.Change, 0, min(e.size, max(e.last, 256)))}
		if e.src != nil {
			e.from = make([]int32, 0, cap(e.batch.Changes))
		}
	}
	e.batch.Append(k, r)
	if e.src != nil {
		e.from = append(e.from, e.cur)
	}
	if e.batch.Len() >= e.size {
		e.seal()
		e.full = append(e.full, e.batch)
		e.batch = nil
	}
}

// seal gives the current batch its origin.
func (e *batchEmitter) seal() {
	e.last = e.batch.Len()
	if e.src != nil {
		e.batch.Origin = &derivedOrigin{parent: e.src, from: e.from}
		e.from = nil
	}
}

// take returns the batches gathered so far, the partial one included.
func (e *batchEmitter) take() []*row.Batch {
	out := e.full
	if e.batch != nil && e.batch.Len() > 0 {
		e.seal()
		out = append(out, e.batch)
	}
	e.full, e.batch, e.from = nil, nil, nil
	return out
}

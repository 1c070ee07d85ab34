package operator

import (
	"context"
	"math"
	"time"

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

// RowCarver is an Emitter that lends the memory of the next row an
// operator emits (CarveRow: a row of w values, their old contents to be
// overwritten), cut from slabs that its batch's reader gives back once
// it is done with the batch, for the batches after: a row emitted costs
// no allocation, nor the zeroing and the collections of one. The row
// must be the next one emitted, before any other, and kept by nothing
// but the emitted change.
type RowCarver interface {
	CarveRow(w int) row.Row
}

// CarverOf is out as a RowCarver, nil when it lends no rows: asked once
// per call of an operator, not once per row.
func CarverOf(out Emitter) RowCarver {
	c, _ := out.(RowCarver)
	return c
}

// Carving is an operator that builds rows in the memory of a RowCarver
// when its emitter is one: the node then gives its emitter slabs that
// come back (when one node alone reads its output).
type Carving interface {
	CarvesRows() bool
}

// Lifecycle is what every operator has besides its input: the
// event-time clock and the end of the input. The node calls Watermark
// when the clock advances and Finish once when the input has ended. All
// calls to an operator come from one goroutine.
type Lifecycle interface {
	// Watermark tells the operator that no row with an event time below wm
	// (microseconds) will arrive any more. Operators that hold rows until
	// then (windows) emit them here. The node forwards the watermark
	// downstream after the call.
	Watermark(wm int64, out Emitter) error
	// Finish is called at the end of a bounded input, after the final
	// watermark. Batch-mode aggregates emit their results here.
	Finish(out Emitter) error
}

// Operator is one step of a transform with one input: the node calls
// Process for every input batch. An operator may keep rows of its input
// batches (they are immutable) but must not modify them, unless it is an
// InputReleaser that said it keeps none (the engine's doc, Retention).
type Operator interface {
	Lifecycle
	Process(in *row.Batch, out Emitter) error
}

// TwoInput is an operator of two inputs (a join): a union in front of it
// tags each batch with the input it came from, and the node gives it the
// batch with that number (0 left, 1 right).
type TwoInput interface {
	Lifecycle
	ProcessInput(input int, in *row.Batch, out Emitter) error
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

// StateMemory is a StateSizer that knows the memory its state holds:
// every operator whose state grows with what it sees (aggregates,
// DISTINCT, deduplication, joins, windows, OVER, Top-N). StateBytes is called after
// each message, so it must cost nothing (capacities of the state's
// arrays, on the Go heap or off it); it may be a floor (values that
// live outside the arrays, such as strings, need not be counted). The
// engine fails the pipeline when it passes the pipeline's
// max_state_bytes, before the process runs out of memory.
type StateMemory interface {
	StateSizer
	StateBytes() int64
}

// Snapshotter is an operator with state that checkpoints keep: Snapshot
// encodes it at a barrier, Restore replaces it before the run starts.
// Both are called from the operator's goroutine (or before it starts).
type Snapshotter interface {
	Snapshot() ([]byte, error)
	Restore(state []byte) error
}

// Widener is an operator that can restore state saved under narrower
// column types whose values carry another type tag: INT (TINYINT,
// SMALLINT) to BIGINT, FLOAT to DOUBLE. The runtime calls WidenRestore
// before Restore (or RestoreFrom) when the restore migrates such a
// change; the operator then reads the snapshot through a decoder told to
// retag those values and keys (row.Decoder.SetWiden, WidenKey), so that
// the restored state equals one built from the wider values. A retagged
// key hashes elsewhere: an operator that places keys by their hash
// (runtime.Keyed's workers) places them anew.
type Widener interface {
	// CanWiden reports whether WidenRestore works (a wrapper asks the
	// operator it wraps).
	CanWiden() bool
	WidenRestore(w map[row.TypeID]row.TypeID)
}

// ColumnWidener is a Widener that can retag the saved values of the
// widened input columns alone, by their place in its keys and
// accumulators: another input column of the same narrow type may then
// stay (a GROUP BY over INT a, INT b where only a becomes BIGINT), whose
// saved values a retag by type would widen too. The runtime calls
// WidenColumns, with WidenRestore, before the restore; the operator's
// restore then retags by column, not by type.
type ColumnWidener interface {
	Widener
	// CanWidenColumns reports whether WidenColumns works (a wrapper asks
	// the operator it wraps).
	CanWidenColumns() bool
	// WidenColumns gives, per input column, the type its saved values
	// are retagged to (row.BigInt, row.Double), row.Null for a column
	// read as saved; for an operator of two inputs (a join), the left
	// input's columns, then the right's.
	WidenColumns(in []row.TypeID)
}

// Widening implements Widener for the operator that embeds it: its
// restore reads the snapshot through Decoder (or Widen), whose values
// come retagged, and its saved keys with KeyStr or KeyBytes; keys it
// rebuilds from restored rows (row.KeyOf) are retagged already. The
// mapping stays for every later restore: a restore that fails is
// retried from the same checkpoint.
type Widening struct{ retag map[row.TypeID]row.TypeID }

// CanWiden implements Widener.
func (w *Widening) CanWiden() bool { return true }

// WidenRestore implements Widener.
func (w *Widening) WidenRestore(m map[row.TypeID]row.TypeID) { w.retag = m }

// Decoder is row.NewDecoder(b), set to retag as WidenRestore asked.
func (w *Widening) Decoder(b []byte) *row.Decoder { return w.Widen(row.NewDecoder(b)) }

// Widen sets d to retag as WidenRestore asked, and returns it.
func (w *Widening) Widen(d *row.Decoder) *row.Decoder {
	if w.retag != nil {
		d.SetWiden(w.retag)
	}
	return d
}

// ColumnWidening implements ColumnWidener for the operator that embeds
// it instead of Widening, when every value its snapshot holds of its
// input's columns is in a row of its input (read with Row: each value at
// its column's place, and columns of its own only after them) or in a
// key of the input columns Key lists (read with KeyStr, KeyBytes or
// WidenKey): Decoder and Widen then retag by column when WidenColumns
// gave columns, else by type as Widening does. A value of an input
// column read on its own (Value) is not retagged by column: an operator
// that saves one must not embed it.
type ColumnWidening struct {
	Widening
	cols []row.TypeID
	// Key lists the input columns of the keys the operator saves, in
	// their order; nil: a key holds every input column in order.
	Key []int
}

// CanWidenColumns implements ColumnWidener.
func (w *ColumnWidening) CanWidenColumns() bool { return true }

// WidenColumns implements ColumnWidener.
func (w *ColumnWidening) WidenColumns(in []row.TypeID) { w.cols = in }

// Columns is the retag per input column WidenColumns gave (an operator
// of two inputs: the left's columns, then the right's), nil for none.
func (w *ColumnWidening) Columns() []row.TypeID { return w.cols }

// Decoder is row.NewDecoder(b), set to retag as asked.
func (w *ColumnWidening) Decoder(b []byte) *row.Decoder { return w.Widen(row.NewDecoder(b)) }

// Widen sets d to retag as asked (by column, else by type), and
// returns it.
func (w *ColumnWidening) Widen(d *row.Decoder) *row.Decoder {
	if w.cols == nil {
		return w.Widening.Widen(d)
	}
	keyTo := w.cols
	if w.Key != nil {
		keyTo = make([]row.TypeID, len(w.Key))
		for i, c := range w.Key {
			if c < len(w.cols) {
				keyTo[i] = w.cols[c]
			}
		}
	}
	d.SetWidenCols(w.cols, keyTo)
	return d
}

var _ ColumnWidener = (*ColumnWidening)(nil)

// Flusher is an operator that holds output back (a mini-batch). The node
// calls Flush before every snapshot (checkpoint barrier, end of input,
// stop), so a snapshot never holds state whose changes were not emitted,
// and every FlushEvery while its input is quiet.
type Flusher interface {
	Flush(out Emitter) error
	FlushEvery() time.Duration
}

// WatermarkHolder is an operator that forwards a watermark behind the one
// it received (an interval join emits rows older than its watermark).
type WatermarkHolder interface {
	HoldWatermark(wm int64) int64
}

// Opener is an operator that holds a connection of its own (a lookup
// join's client): the node opens it with the run's context before the
// first message and closes it when it ends.
type Opener interface {
	Open(ctx context.Context) error
	Close(ctx context.Context) error
}

// InputReleaser is an operator that may keep nothing of an input
// batch's rows once Process returned (it folds them into state of its
// own, or copies what it keeps): the node then gives the rows' memory
// back to the decoders that made them (slabPool). ReleasesInput is
// asked after each Process that returned nil, and must be false when
// the operator keeps a row slice, or a change's row, of that batch.
type InputReleaser interface {
	ReleasesInput() bool
}

// TextPasser is an operator whose output rows may hold its input's
// values (a projection, a function's arguments passed on) but which
// keeps none of them past Process: every row it made of an input batch
// was emitted before Process returned, and none went to its Reject
// policy (which may keep it). PassesText is asked after each Process
// that returned nil, about that batch. The engine may then reuse the
// memory an input's STRING values point into (a file source's read
// buffers) once each batch made of it was written by a sink that
// copies text (connector.TextCopier; runtime's fuse_hold.go).
type TextPasser interface {
	PassesText() bool
}

// SlabRows is the origin of a batch whose rows' memory is slabs of
// values alone, which giving the batch back reuses (an operator's carved
// rows, a fusion's mapped ones): an InputReleaser that copies the values
// it keeps may give it back, since no text its values point into goes
// back with it. A batch a source decoded may hold its read buffers too.
type SlabRows interface {
	SlabRowsOnly() bool
}

// SlabRowsOnly reports whether b's origin says its rows are slabs of
// values alone (SlabRows).
func SlabRowsOnly(b *row.Batch) bool {
	sr, ok := b.Origin.(SlabRows)
	return ok && sr.SlabRowsOnly()
}

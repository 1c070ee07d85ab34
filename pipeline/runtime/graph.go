package runtime

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Graph is a pipeline ready to run: its nodes and their wiring. The
// planner builds it; Run executes it once.
type Graph struct {
	Name    string
	Sources []*SourceNode
	Ops     []*OpNode
	Unions  []*UnionNode
	Sinks   []*SinkNode
	// DeadLetters are where on_error: dead-letter policies put records:
	// files, and the dead letters sinks read (the Input of a SinkNode).
	DeadLetters []*DeadLetterNode
	// BatchSize caps the changes per batch (default 1024).
	BatchSize int
	// ChannelSize is the number of batches a channel holds before its
	// sender waits (default 4).
	ChannelSize int
	// Checkpoints counts the run's checkpoints; CheckpointLog keeps the
	// last ones (history.go).
	Checkpoints   CheckpointStats
	CheckpointLog CheckpointLog
}

// Node is what every node kind shares: a name for errors and counters.
type Node struct {
	Name string
	// Kind is "source", "transform" or "sink", for messages.
	Kind string
	// Transform, for an operator, is the name of the transform in the
	// pipeline file it belongs to (Name is the operator's plan): errors
	// say `transform "q" (Calc(...))`.
	Transform string
	// Short is an operator's short name, "<transform>/<kind>#<n>", for
	// metrics and the console (the planner's operator id): Name, the
	// plan, changes with every edit of the SQL. Empty for sources and
	// sinks, whose Name is short already.
	Short string
	// Pos, for an operator, is where its transform is in the pipeline
	// file ("file:line:col"), for messages; empty when unknown.
	Pos string
	// ID names the node in checkpoints, stable across runs of the same
	// pipeline file; the runtime derives one from Kind and Name if empty.
	ID string
	// Aliases are the other IDs a checkpoint may hold the node's state
	// under: a renamed transform's former ID, and, prefixed "legacy:",
	// the ID checkpoints of format 3 and before gave it (compat.go).
	Aliases []string
	// Fingerprint is the node's state schema: what its state is made for
	// (an operator's plan with its input and output columns; a source's
	// type and schema; a sink's type, mode, key and input). compat.go
	// compares it with a checkpoint's to keep, migrate or refuse it.
	Fingerprint string
	// StateTTL is the state retention (`state_ttl`) an operator runs
	// with, 0 for none; the admin API shows it beside the state's size.
	StateTTL time.Duration
	// Feed, for a node that hands bad records to an on_error policy (a
	// source, a sink, an operator evaluating expressions over a source's
	// rows), is its way into the policy; the node tells it the barriers
	// it passes.
	Feed *Feed
	// Late, for an operator that drops late rows, is its way into the
	// pipeline's late_rows policy (late.go); nil: they are only counted.
	Late  *Feed
	Stats Stats
	outs  []chan message
	// outTo are the nodes that read outs, in the same order.
	outTo   []*Node
	cp      *participant
	cpIndex int
}

// nodes lists every node of g but its dead letters.
func (g *Graph) nodes() []*Node {
	var out []*Node
	for _, s := range g.Sources {
		out = append(out, &s.Node)
	}
	for _, o := range g.Ops {
		out = append(out, &o.Node)
	}
	for _, u := range g.Unions {
		out = append(out, &u.Node)
	}
	for _, s := range g.Sinks {
		out = append(out, &s.Node)
	}
	return out
}

// label names the node in errors: `source "rt"`, or for an operator the
// transform it belongs to and its plan, `transform "q" (Calc(...))`.
func (n *Node) label() string {
	if n.Transform != "" {
		return fmt.Sprintf("%s %q (%s)", n.Kind, n.Transform, n.Name)
	}
	return fmt.Sprintf("%s %q", n.Kind, n.Name)
}

// Stats are a node's counters, safe to read while the pipeline runs.
type Stats struct {
	// RowsIn counts the changes a node received (a source: the records
	// it read); RowsOut those it sent on, or for a sink those its target
	// acknowledged (counted when a Flush returned: refused rows and rows
	// a failed Flush left unwritten are not).
	RowsIn  atomic.Int64
	RowsOut atomic.Int64
	// Skipped counts the rows an operator dropped (late rows of a
	// window). Records set aside by on_error are counted by the policy.
	Skipped atomic.Int64
	// Checkpointed, for a sink, is RowsIn as of the last completed
	// checkpoint: RowsIn minus it is what a stop cut short would leave
	// to be read again from that checkpoint.
	Checkpointed atomic.Int64
	// Watermark is the node's current watermark, NoWatermark if none
	// (set with setWatermark, which also keeps the data's: see
	// DataWatermark).
	Watermark atomic.Int64
	dataWM    atomic.Int64
	hasDataWM atomic.Bool
	// Busy is the time, in nanoseconds, the node spent working on its
	// messages (reading, for a bounded source; writing, for a sink), and
	// Backpressure the time it waited for a full output channel: timed
	// per batch, not per row (metrics.go).
	Busy, Backpressure atomic.Int64
	// Retries counts the retries of the connector's or operator's calls
	// that internal/retry made, through the context the node gives them.
	Retries atomic.Int64
	// StateEntries, for an operator with state (a StateSizer), is the
	// number of entries it holds (groups, window slices by key, distinct
	// rows), updated after every message; StateBytes is the size of its
	// newest snapshot (0 before the first checkpoint, and always in a run
	// without a checkpoint store, which takes no snapshots).
	StateEntries atomic.Int64
	StateBytes   atomic.Int64
}

// SourceNode reads a connector source.
type SourceNode struct {
	Node
	Source connector.Source
	// Calc, if set, turns each physical row into the table's row (computed
	// columns). It runs in the source's goroutine.
	Calc *Calc
	// Compute, if set, makes functions that do what Calc does, each with
	// a scratch row of its own that its result is, valid until its next
	// call: one per goroutine, for a Calc fused into the source's
	// decoders (fuse.go).
	Compute func() func(row.Row) (row.Row, error)
	// EventTime, if set, gives a row's watermark candidate in
	// microseconds (the watermark expression's value); the source's
	// watermark is the largest seen. An error (a NULL event time) makes
	// the row a bad record.
	EventTime func(r row.Row) (int64, bool, error)
	// RowTime, if set, gives a row's event time in microseconds (its
	// time attribute), for the rows EventTime gives a candidate of: a
	// batch is cut for a watermark only before a row at or below it
	// (source_cut.go). Without it every rise of the watermark cuts.
	RowTime func(r row.Row) int64
	// everyRise: an operator reads the watermark row by row
	// (Calc.OnWatermark), so the source sends a watermark wherever its
	// watermark rises, not only before a row it would make late
	// (source_cut.go).
	everyRise bool
	// TimeReads lists the columns EventTime and RowTime read, nil when
	// not known: the source may then decode a fused Calc's columns and
	// these only (fuse_pick.go).
	TimeReads []int
	// TimeShift, if set, says that EventTime is a TIMESTAMP column less
	// a constant and RowTime that column: the decoders of picked columns
	// read them so (timedBatch), and leave the rest, a NULL or an
	// overflow, to EventTime on the serial way.
	TimeShift *TimeShift
	// Columns are the source's physical columns, for the rows its
	// computed columns or EventTime fail on (handed to Node.Feed).
	Columns row.Schema
	// Gap, if not 0, is how many columns a decoded row has at GapAt that
	// Columns does not name: the room a connector that decodes nested
	// paths leaves for the computed columns, which Compute and Calc
	// write in place (connector.NestedSource).
	GapAt, Gap int
	// IdleTimeout is how long a split of a connector.SplitSource may go
	// without a record before its watermark stops holding the source's
	// back (source_split.go); 0 never.
	IdleTimeout time.Duration
	// splits are the per-split watermarks of a SplitSource with a
	// watermark, nil otherwise.
	splits *splitWatermarks
	// picked, when the source decodes some columns only and has a
	// watermark, says where EventTime and RowTime find theirs in a
	// decoded row; timeScratch is the source goroutine's whole row for
	// them (pickedTimes).
	picked      *pickedTimes
	timeScratch row.Row
}

// TimeShift is a watermark that is the event-time column Column plus
// Micros.
type TimeShift struct {
	Column int
	Micros int64
}

// OpNode runs an Operator over one input.
type OpNode struct {
	Node
	Input *Node
	// Op is an operator.Operator, or an operator.TwoInput behind a
	// union that numbers its inputs.
	Op operator.Lifecycle
	// LateColumns name the input's columns, for the late rows handed to
	// Node.Late.
	LateColumns row.Schema
	// LateInputs, for an operator of two inputs, name each input's
	// columns instead: a late row is a row of the input it came from.
	LateInputs []row.Schema
	// slabs, for a Calc read by slabsBy alone, is the pool its rows are
	// carved from (poolCalcs).
	slabs   *slabPool
	slabsBy *Node
	// textBy, when set, is the one reader of the node, which gets a
	// share of the text holds of the batches it is sent (fuse_hold.go).
	textBy *Node
}

// SinkNode writes into a connector sink.
type SinkNode struct {
	Node
	Input *Node
	Sink  connector.Sink
	Mode  connector.Mode
	// FlushInterval is how often buffered rows are flushed while data
	// flows (default 1 s); the end of input always flushes.
	FlushInterval time.Duration
	// Key is the upsert key (Upsert mode). With Compact, only the last
	// change of each key within a batch reaches the sink: an upsert sink
	// keeps the last state of a key, so the ones before it are wasted
	// writes (Flink's mini-batch).
	Key     []int
	Compact bool
	// Tap, if set, sees every batch of changes the sink is about to be
	// given (after its mode's filtering), on the sink's goroutine. It
	// must return quickly and must not keep or modify the batch: the
	// daemon's live sample view copies a few rows out of it.
	Tap func(*row.Batch)
	// Writes and Flushes time the sink's calls (metrics.go).
	Writes, Flushes operator.Latency
	// recycle, if set, gives each batch back to the source that made it
	// once the sink copied its rows (recycleDirect).
	recycle func(*row.Batch)
	// callStart is when the Write or Flush under way began (Unix
	// nanoseconds), 0 between calls: a call that hangs shows.
	callStart atomic.Int64
	// unacked counts the rows given to Write since the last Flush, and
	// refused the policy's count at that Flush.
	unacked, refused int64
}

// message is what travels on a channel: a batch, a watermark, a
// checkpoint barrier, or the end of the stream (sent just before the
// channel closes, saying how it ended).
type message struct {
	kind      msgKind
	batch     *row.Batch
	watermark int64
	barrier   int64
	// input is the number of the union input a batch came from, for
	// an operator of two inputs (TwoInput) behind it.
	input int
	// stop: the stream ended by a graceful stop of a resumable run, not at
	// the end of its input: operators keep their state, they do not
	// Finish.
	stop bool
}

type msgKind uint8

const (
	msgBatch msgKind = iota
	msgWatermark
	msgBarrier
	msgEnd
)

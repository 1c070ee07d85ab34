// Package connector is the contract between etld's runtime and its
// connectors and formats, and the registry that names them.
//
// Every connector goes through the same phases (Caddy's lifecycle):
//
//  1. construct: the registry decodes the connector's YAML options into its
//     typed config and calls its constructor. No I/O happens here, so that
//     `etld validate` can build every connector and start none.
//  2. bind (sinks): the planner tells the sink its input schema, the
//     changelog mode it runs in and its upsert key. Still no I/O.
//  3. Open: connect, create, seek. Retries are the connector's or the
//     runtime's; an error here stops the pipeline with the connector's name.
//  4. Read / Write and Flush, from one goroutine at a time.
//  5. Close, which must be safe after a partial Open and after an error.
package connector

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// Source produces changes. The runtime calls Open once, then Read from one
// goroutine until it returns io.EOF (a bounded source's end) or an error or
// the context ends, then Close.
type Source interface {
	// Bounded reports whether the source ends by itself.
	Bounded() bool
	Open(ctx context.Context) error
	// Read returns the next batch of at most max changes. It blocks until it
	// has at least one change, the source ends (io.EOF, possibly together
	// with a final non-empty batch) or ctx is done. A source that waits for
	// data (Kafka, a followed file) returns what it has after a short linger
	// rather than waiting for a full batch.
	//
	// The runtime cancels ctx of an unbounded source's Read to take a
	// checkpoint or run a Commit without waiting for data, then calls Read
	// again: a Read whose ctx ends returns what it has (or nothing, with
	// ctx's error) and loses nothing, leaving no sticky error behind.
	Read(ctx context.Context, max int) (*row.Batch, error)
	Close(ctx context.Context) error
}

// Positioner is a source that can say where it is and resume there: the
// position after the last batch Read returned, as opaque bytes that
// checkpoints store.
type Positioner interface {
	Position() ([]byte, error)
	// Restore is called before Open with a position Position returned.
	Restore(pos []byte) error
}

// Committer is a source or sink that finishes its part of a checkpoint
// once the checkpoint is complete: every sink has made everything before
// the barrier durable and the checkpoint is stored. A Kafka source commits
// its offsets to the consumer group here; a two-phase sink (the file sink)
// publishes the files it prepared. state is what Position (sources) or
// Snapshot (sinks) returned at that checkpoint's barrier. Commit must be
// idempotent: after a crash the runtime calls it again with the state of
// the checkpoint it restored. The runtime calls Commit from the goroutine
// that runs the connector, between Reads or Writes.
//
// Without a state directory there are no stored checkpoints, but the
// runtime still runs barriers every checkpoint interval and at the end of
// a run, and calls Commit once the sinks have flushed: a Kafka source
// never commits an offset whose rows are not yet delivered.
type Committer interface {
	Commit(ctx context.Context, state []byte) error
}

// Resetter is a source whose position lives partly outside the
// pipeline's state directory, where a run without a checkpoint would
// pick it up: a Kafka source's consumer group offsets (a committed
// offset wins over start), a PostgreSQL source's replication slot (its
// confirmed position is where startup: latest streams from). `etld
// state reset` calls Reset, on a source built from the pipeline file
// and never opened, before it removes the pipeline's checkpoints, so
// that the next run starts as the pipeline's first run did instead of
// resuming mid-input with empty operators.
//
// Reset puts that outside position back where a first run starts (or
// says that there is none) and returns what it did, for people ("" when
// there was nothing to reset). It fails, changing nothing it can avoid,
// when a running reader holds the position (a group member, an active
// slot): a reset under a running pipeline would be undone by its next
// commit.
type Resetter interface {
	Reset(ctx context.Context) (string, error)
}

// SinkSnapshotter is a sink with state of its own in checkpoints (the
// file sink's prepared files). Snapshot is called at a barrier, right
// after Flush; Restore is called before Open with what Snapshot returned
// in the checkpoint being restored.
type SinkSnapshotter interface {
	Snapshot(ctx context.Context) ([]byte, error)
	Restore(state []byte) error
}

// RunInfo is what the runtime tells a RunAware sink about its run.
type RunInfo struct {
	// Resumable: the run keeps its checkpoints in a state directory (the
	// daemon, or `etld run --state-dir`), and the next run resumes from
	// the newest one.
	Resumable bool
	// Restored: the run restored a checkpoint that covers this sink, and
	// SinkSnapshotter.Restore was called with the sink's state in it.
	Restored bool
	// Pipeline is the name of the run's pipeline.
	Pipeline string
	// Instance names the pipeline's state directory: the same in every
	// run that resumes from it, even before its first checkpoint, and new
	// when the state is removed; "" when the run is not Resumable. Two
	// processes with their own state directories have their own
	// instances. Since is when the instance was made: nothing the
	// pipeline wrote under it is older.
	Instance string
	Since    time.Time
	// Fence, in a Resumable run, returns a number larger than any it
	// returned before for the pipeline's state directory, in this run
	// or an earlier one, durably stored before it returns. A sink calls
	// it before its first write (in Open) and marks what it writes with
	// it, so that its target can refuse a write of an earlier life that
	// arrives late: a request a killed process had sent, held up in the
	// network. The numbers follow the clock (Unix seconds, or the last
	// one plus one when the clock is behind), so that a state directory
	// made anew numbers above the removed one. Nil when the run is not
	// Resumable.
	Fence func() (uint64, error)
}

// RunAware is a sink or source that needs to know, before Open, how its
// run keeps state: a sink whose target may hold data it did not write (a
// file that already exists) must tell what its own checkpoint covers,
// which it may cut back to that checkpoint, from data it was never asked
// to destroy; a Kafka source names its static group member after the
// state directory's Instance, which a restart of the same process keeps
// and another process on the same host does not share. The runtime calls
// SetRun once, after any Restore and before Open. A connector that is
// never told (a test, a tool that drives it by hand) behaves as in a run
// without a state directory.
type RunAware interface {
	SetRun(RunInfo)
}

// CheckpointAsker is a source that sometimes needs a checkpoint before
// the interval is up: a Kafka source told of a rebalance commits what the
// sinks have before it gives its partitions up, so that their next owner
// does not read those rows again. The runtime calls AskCheckpoints once,
// before Open, with ask, which any goroutine may call and which never
// blocks: it asks for a checkpoint at once, or right after the one in
// flight. The source learns the outcome through Commit.
type CheckpointAsker interface {
	AskCheckpoints(ask func())
}

// SharedSource is a source whose input several etld processes can split
// among them: a Kafka source in a consumer group reads only the
// partitions the group assigns it. Each process then sees a share of the
// rows, which is right for operators that look at one row at a time
// (projection, filter) and wrong for those that keep state across rows
// (an aggregate, a window, DISTINCT): each process would aggregate its
// share alone.
type SharedSource interface {
	// SharedOption is the option that declares the input split among
	// processes (a Kafka source's group_shared), or "" when the file
	// does not declare it. The planner refuses such a source read by an
	// operator that keeps state.
	SharedOption() string
	// KeepsState is called by the planner, before Open, when an operator
	// reading the source keeps state; why names it. A source that finds
	// at run time that other processes read a share of its input (other
	// members hold partitions of its topics) then fails instead of
	// reading its share.
	KeepsState(why string)
}

// Meter is a connector that counts the bytes it read or wrote, for
// /metrics. Bytes is called from other goroutines: keep it atomic.
type Meter interface {
	Bytes() int64
}

// Sizer is a bounded source that knows how large its input is, for the
// progress bar of a one-shot run (the file source: the sum of its files'
// sizes). Size returns how far into its input the source has read, in
// bytes, the part a restored position skipped included, and the bytes
// the input holds; total is 0 while unknown (before Open). It is called
// from other goroutines: keep it atomic.
type Sizer interface {
	Size() (done, total int64)
}

// Lagger is a source that knows how far behind the end of its input it
// is (Kafka consumer lag: messages, summed over partitions), for /metrics.
// Lag returns -1 while unknown and is called from other goroutines.
type Lagger interface {
	Lag() int64
}

// PartitionLagger is a source that knows its lag per partition (Kafka),
// for /metrics: PartitionLags lists the partitions it reads now, and is
// called from other goroutines.
type PartitionLagger interface {
	PartitionLags() []PartitionLag
}

// PartitionLag is how far a source is behind the end of one partition.
type PartitionLag struct {
	// Partition names it, "topic/0".
	Partition string
	// Messages is the count between the source's position and the
	// partition's end (high watermark).
	Messages int64
	// Seconds is the same distance in the messages' own times: the
	// newest message's timestamp less the last one read's. SecondsKnown
	// is false while the source has not seen the newest message.
	Seconds      float64
	SecondsKnown bool
}

// MetadataSource is a source that can fill columns declared
// `name TYPE METADATA [FROM 'key'] [VIRTUAL]` (Flink's metadata columns,
// e.g. a Kafka record's topic, partition, offset or timestamp).
// MetadataKeys lists the keys it offers with the type each one has; the
// planner refuses a metadata column whose key is not offered or whose
// declared type differs.
type MetadataSource interface {
	MetadataKeys() map[string]row.Type
}

// UpdatingSource is a source whose changes may be updates and deletes,
// not only inserts: one whose format is a changelog format
// (Registry.Changelog), whatever the connector. The planner asks it for
// the source's changelog mode; a source that is not one is insert-only.
// A source that builds a decoder from a format option must either be one
// or refuse a changelog format with a FieldError naming the option, so
// that no -U reaches a plan that expects inserts only.
type UpdatingSource interface {
	Updating() bool
}

// UpsertSource is an updating source whose changelog is an upsert
// changelog by the source's declared key: +I and +U carry a row's new
// image and no -U comes before them; -D carries at least the key columns
// (the others may be NULL). Such a source reads, for an update, no old
// row that a filter, an aggregate or a join could retract (a PostgreSQL
// table of the default replica identity logs only the key of the old
// row). The planner then puts a changelog normalization after its scan,
// as Flink does after an upsert source (ChangelogNormalize): it keeps the
// last row of each key, in checkpoints, and turns +U into -U[kept]
// +U[new] and -D into -D[kept].
type UpsertSource interface {
	// Upsert reports whether the source's changelog is an upsert one.
	Upsert() bool
	// UpsertKey is called by the planner, before Open, with the names of
	// the declared key's columns. The source checks at Open that they
	// identify its rows as its -D carry them (the table's primary key),
	// and refuses to start otherwise.
	UpsertKey(names []string)
}

// FileReader is a source that reads local files. The planner refuses a
// pipeline that reads a file it writes (FileWriter, a dead-letter file):
// a sink would truncate its own input, or a followed source read back
// what the pipeline wrote, without end.
type FileReader interface {
	// ReadFiles returns the paths or globs of the files the source reads,
	// as the pipeline file wrote them (relative to the working directory),
	// and whether it follows them (reads what is appended, without end).
	ReadFiles() (patterns []string, follow bool)
}

// FileWriter is a sink that writes local files (see FileReader).
type FileWriter interface {
	// WriteFiles returns the files the sink writes, as the pipeline file
	// wrote them: its output first, then one name of each kind of file
	// it writes beside it (an in-progress part).
	WriteFiles() []string
}

// Mode is the changelog mode a sink runs in.
type Mode uint8

const (
	// Append: the sink receives only +I.
	Append Mode = iota + 1
	// Upsert: the sink receives +I, +U and -D keyed by the upsert key;
	// -U never reaches it.
	Upsert
	// Retract: the sink receives every kind, -U included, and writes the
	// kind along with the row.
	Retract
)

func (m Mode) String() string {
	switch m {
	case Append:
		return "append"
	case Upsert:
		return "upsert"
	case Retract:
		return "retract"
	}
	return "auto"
}

// Capabilities says which modes a sink can run in.
type Capabilities struct {
	Append, Upsert, Retract bool
	// AutoRetract lets `mode: auto` pick retract for an updating input
	// without an upsert key (print does; a CSV file needs it asked for).
	AutoRetract bool
	// UpsertNeedsKey: upsert mode writes by key, so it needs one.
	UpsertNeedsKey bool
}

// SinkInput is what the planner tells a sink at bind time.
type SinkInput struct {
	Schema row.Schema
	Mode   Mode
	// Key holds the column indices of the upsert key (Upsert mode), in
	// schema order of declaration; empty for the one-row global aggregate.
	Key []int
	// Replay says what a run restored from a checkpoint sends the sink
	// again.
	Replay Replay
}

// Replay is what the planner knows of a restored run's input to a sink.
type Replay struct {
	// ByRecord: every change the sink receives names the source record
	// it came from (Batch.Origin is a row.RecordOrigin), and a run
	// restored from a checkpoint gives, for each record after it, the
	// same changes in the same order, and the records of each input in
	// their order (inputs may interleave differently). The pipeline is
	// deterministic: no function reads the clock, no operator's result
	// depends on how inputs interleave. A sink that finds in its target
	// the last record a crashed run wrote can skip what it would repeat.
	ByRecord bool
	// Why says why not, when ByRecord is false.
	Why string
}

// ExactlyOnceSink is a sink that can write a resumed run's output exactly
// once when its input replays by record (the Kafka sink). ExactlyOnce,
// after Bind, says whether it will, in a run with a state directory, and
// why not when it will not; `etld explain` shows it.
type ExactlyOnceSink interface {
	ExactlyOnce() (bool, string)
}

// KeyNames returns the names of the key columns.
func (in SinkInput) KeyNames() []string {
	names := make([]string, len(in.Key))
	for i, k := range in.Key {
		names[i] = in.Schema.Fields[k].Name
	}
	return names
}

// Sink consumes changes. The runtime calls Bind (at validate time too),
// then Open, then Write and Flush from one goroutine, then Close.
type Sink interface {
	Capabilities() Capabilities
	// Bind fixes the sink's input; it does no I/O and may refuse the input
	// with an error that says why (a column type the target cannot hold).
	Bind(in SinkInput) error
	Open(ctx context.Context) error
	// Write takes ownership of b. It may buffer; whatever it buffers is
	// written by the next Flush at the latest.
	Write(ctx context.Context, b *row.Batch) error
	// Flush returns once everything written before it is durable in the
	// target, retrying transient failures until ctx ends. It never drops
	// data to make progress. When it returns nil, every row given to
	// Write before it was either acknowledged by the target or handed to
	// SinkEnv.Reject (a partial failure: the rows the target refused for
	// good, each on its own): the runtime counts the others as written.
	Flush(ctx context.Context) error
	Close(ctx context.Context) error
}

// RowCopier is a sink whose Write keeps nothing of a batch's rows once it
// returned nil: it encodes them, or copies the values it keeps. The
// runtime may then give the rows' memory back to the source that made
// them (BatchRecycler).
type RowCopier interface {
	CopiesRows() bool
}

// TextCopier is a RowCopier whose Write also keeps no byte of its rows'
// STRING and BYTES values once it returned (it encodes them; nothing it
// hands them to keeps them): the runtime may then give the memory they
// point into back to the source too (TextRecycler). A writer that keeps
// values until later (a bulk format's row group) copies rows but not
// their text.
type TextCopier interface {
	RowCopier
	CopiesText() bool
}

// BadRecord describes an input record that could not become a row, a
// row a transform's expression failed on, or a row a sink's target
// refused. It is the error type of every data error: a policy that fails
// returns an error wrapping it, so errors.As finds it (by value:
// errors.As(err, new(BadRecord))), and errors.Is finds Err. An error
// with a BadRecord in its chain is a data error: running the pipeline
// again reads the same record and fails again, so the daemon marks the
// pipeline failed instead of restarting it.
type BadRecord struct {
	// Position names the source record: file:line, or
	// topic/partition/offset; "" when no one record made the row (a
	// window's result).
	Position string
	// Location, when the source read the record from a file, is where
	// in which file it starts (byte offset, the file's identity), which
	// names it also after the file was rotated; nil otherwise.
	Location *row.Location
	// Transform is the name of the transform whose expression failed on
	// the row; "" for a record a source or a sink refused.
	Transform string
	// Raw is the record as it was read (a line, a Kafka message's value),
	// or a row as a sink's target would have received it.
	Raw []byte
	// Row, with the names and types of its Columns, is the row an
	// expression failed on (a transform's, a source's computed columns'
	// or watermark's), given in place of Raw: dead letters show it as an
	// object of named columns.
	Row     row.Row
	Columns row.Schema
	Err     error
}

func (b BadRecord) Error() string {
	if b.Position == "" {
		return b.Err.Error()
	}
	return fmt.Sprintf("%s: %v", b.Position, b.Err)
}

// Unwrap returns the reason the record is bad.
func (b BadRecord) Unwrap() error { return b.Err }

// SourceEnv is what a source constructor gets besides its own config.
type SourceEnv struct {
	Name string
	// Pipeline is the name of the pipeline the source belongs to: with
	// Name, what identifies the source across restarts (a Kafka source's
	// static group member id).
	Pipeline string
	// Schema holds the physical columns the source produces, in order:
	// the columns it decodes from its records and its metadata columns.
	Schema row.Schema
	// Metadata parallels Schema.Fields: the metadata key a column is
	// filled from, or "" for a column decoded from the record (the format
	// sees only those). Nil when the source declares no metadata column.
	Metadata []string
	Logger   *slog.Logger
	// Reject hands a bad record to the source's on_error policy. A nil
	// return means the record was dealt with (skipped, dead-lettered) and
	// reading goes on; an error (policy fail) is returned from Read as is.
	// Call it from Read, in the order of the records, for a record
	// before the position the batch Read returns ends at: a dead letter
	// belongs to the first checkpoint whose position is past its record,
	// so that a run restored from a checkpoint makes none of them again.
	Reject func(BadRecord) error
	// Formats builds decoders for the source's format option.
	Formats *Registry
}

// SinkEnv is what a sink constructor gets besides its own config.
type SinkEnv struct {
	Name    string
	Logger  *slog.Logger
	Formats *Registry
	// Reject hands a row the target refused for good (a MySQL "data too
	// long", an Elasticsearch mapping error) to the sink's on_error
	// policy: nil means it was skipped or dead-lettered and writing goes
	// on; an error (policy fail) stops the pipeline and is returned from
	// Write or Flush as is. Transient failures are never rejected: the
	// sink retries them. Position names the row, e.g. "sink es, change 17
	// of the batch"; Raw is the row as the target would have received it.
	Reject func(BadRecord) error
}

// FieldError is a constructor's complaint about one option; the registry
// turns Field into the option's position in the pipeline file.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Errorf makes a FieldError for the option field.
func Errorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// UnknownValue makes the FieldError for an option that takes one of a
// set of words and got another: `unknown kind "sequense"; did you mean
// "sequence"? (want random or sequence)`. what names the option in the
// message (kind, partitioner); want lists the accepted words.
func UnknownValue(field, what, got string, want ...string) error {
	hint := ""
	if c := spec.Closest(got, want); c != "" {
		hint = fmt.Sprintf("; did you mean %q?", c)
	}
	return Errorf(field, "unknown %s %q%s (want %s)", what, got, hint, orList(want))
}

// orList renders a, b or c.
func orList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// ModeFromString parses a sink's mode option; "auto" and "" give 0.
func ModeFromString(s string) Mode {
	switch strings.ToLower(s) {
	case "append":
		return Append
	case "upsert":
		return Upsert
	case "retract":
		return Retract
	}
	return 0
}

// Package runtime executes a planned pipeline: a DAG of nodes, each a
// goroutine, linked by bounded channels of messages. It is the engine;
// what runs inside an operator node lives below it:
//
//   - operator: the contract every operator is written against (Operator,
//     TwoInput, the optional interfaces the engine looks for, EachChange,
//     Expiry), and all this package knows of operators;
//   - state: the structures operators keep their state in (key table,
//     off-heap words, row store, TTL lists, heap);
//   - aggop, windowop, rankop, joinop: one package per family of operators
//     (group aggregates and DISTINCT; windows, OVER and sessions; Top-N
//     and dedup; joins), built on operator and state;
//   - optest: what the families' tests share.
//
// The planner builds the operators; this package only runs them, so it
// imports no family (internal/archtest holds each package to its imports).
//
// Node kinds:
//
//   - A source node calls connector.Source.Read in a loop, evaluates the
//     source's computed columns, tracks its watermark record by record
//     (cutting a batch before a row the watermark could make late,
//     source_cut.go; one watermark per split of a SplitSource,
//     source_split.go), and sends batches.
//     Records the source cannot decode, or whose computed columns fail, go
//     to the source's on_error policy (fail, skip, dead-letter).
//   - An operator node runs an Operator: projection and filter, group and
//     window aggregates. Operators are plain structs driven by the node's
//     loop, so they are tested without goroutines: changes in, changes out.
//   - A union node merges several inputs (UNION ALL): batches pass
//     unchanged as they arrive; its watermark is the minimum of its open
//     inputs'; barriers are aligned (an input that delivered barrier N
//     waits until every open input did); it ends when all inputs ended.
//     Operators have one input: several meet only here. A join's union may
//     read its build input to its end before it passes on the other's
//     (UnionNode.BuildFirst, union_build.go); then its state is the few
//     held batches it read to align a barrier; otherwise it has none.
//   - A sink node passes each change the sink's mode lets through to
//     connector.Sink.Write (upsert mode drops -U), flushes on a timer and
//     at the end, then closes the sink. It counts as written what its
//     target acknowledged: the rows of a Flush that returned, less those
//     the sink handed to its on_error.
//   - A dead-letter node takes the records on_error: dead-letter sets
//     aside (through each rejecting node's Feed) and writes them to a
//     file, or sends them to the sink node that reads it, cut at each
//     checkpoint once every node feeding it passed the barrier
//     (deadletter.go).
//
// Keyed operators: a GROUP BY runs as a Keyed (keyed.go), several
// instances of the operator behind one node, each owning the keys of its
// key groups (operator.KeyGroupOf). Every call the node makes is cut by
// key and run by all of them at once; it returns when all are done, with
// their output in worker order. To the node it is one operator: a
// barrier needs no alignment among the workers, each key's changes keep
// their order, and its snapshot holds the state by key group, which a
// run with another number of workers restores (keyed_state.go). The
// split encodes and hashes each key once and hands both to the worker
// (operator.PreKeyed). State of no key that every worker needs (a
// watermark) is written beside the key groups and restored to all
// (operator.SharedState); one that the rows and timers of every key move
// (an interval join's expiration times) is kept what one instance's
// would be: each worker sees every batch whole before its share, and
// after a watermark the workers' copies are joined (operator.SyncedState,
// keyed_sync.go). An operator that emits nothing before Finish (a
// batch-mode GROUP BY) is fed behind Process instead: the workers fold
// shares of some thousand rows on goroutines of their own while the
// node splits on, every other call waits for them first, and the worker
// done last with a batch releases it (keyed_async.go).
//
// Messages: a message carries a batch of changes or a watermark. A batch is
// immutable once sent and may go to several receivers (a table read by two
// sinks). The end of a stream is the closing of its channel: a bounded
// source closes its output after its last batch and a final watermark at
// +infinity (so every open window fires, as in Flink), each node closes
// its outputs when its inputs are closed and it has emitted what Finish
// gives, and a sink flushes and closes when its input closes. A full
// channel is backpressure: the sender waits. Just before closing, a node
// sends an end message saying whether its input ended or was stopped.
//
// Retention: a batch's rows are carved from slabs the whole batch shares,
// and their strings may point into the source's read blocks, which
// thousands of rows share. What an operator keeps past the batch that
// carried it (a group's MIN or LISTAGG values, a DISTINCT set, a Top-N's
// or OVER's rows, a versioned table's versions, a join side's rows, a
// session's rows) is its own copy: row.Detach, row.DetachValue, or an
// encoding (rowStore, AppendRow). Otherwise a million groups each holding
// one short string hold a million read blocks. The one exception is a
// batch join's held left rows: they are the whole input, released at its
// end, and copying each would cost more than the blocks they share.
// An operator that keeps nothing of a batch at all says so
// (InputReleaser), and so does a sink that copies what it writes
// (connector.RowCopier): the rows a fused Calc mapped (fuse.go), or a
// Calc carved from its output batch's slabs (calc.go, poolCalcs), are
// then written again into the same memory once Process (or Write)
// returned, when that node is the Calc's only reader. A row a Calc
// holds past its batch (a -U waiting for its +U) is never carved.
//
// Checkpoints: barriers travel on the same channels, between batches; at a
// barrier an operator snapshots its state and a sink flushes. The
// coordinator, the protocol and the end-of-run checkpoint are described in
// checkpoint.go.
//
// Positions: a source batch's row.Origin names each change's record
// (file:line, topic/partition/offset); operators carry it to their output
// batches (derivedOrigin), so that a run-time error in any transform, and its
// dead-letter entry, names the source record and the transform. A sink
// receives its batches with their origins, also when its mode drops
// changes (upsert's -U); a row.RecordOrigin gives each change's record
// as values (input, number), which the Kafka sink writes beside each
// message for exactly-once output. Before any sink opens, a run with a
// state directory tells RunAware sinks and sources the directory's
// instance id (checkpoint.Store.Instance), stable across the runs that
// resume it.
//
// Errors: the first error of any node cancels the pipeline's context and
// is returned by Run, wrapped with the node's name (an operator's with its
// transform's name from the file and its plan: transform "q" (Calc(...))).
// Data errors wrap a connector.BadRecord, which carries the position. Every send and receive
// selects on the context, so no node blocks forever after an error.
package runtime

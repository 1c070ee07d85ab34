// Package operator is the contract between the engine (pipeline/runtime)
// and the operators it runs: an operator implements Operator (one input)
// or TwoInput (two inputs, behind a union that numbers them), and may
// implement the optional interfaces the engine looks for: Snapshotter
// (state kept by checkpoints; StreamSnapshotter writes and reads it in
// pieces), StateDumper (its state listed as rows by `etld state dump`),
// Flusher (a mini-batch), Sweeper and
// TTLSetter (state TTL), WatermarkHolder (emits rows older than its
// watermark), Opener (holds a connection), InputReleaser (keeps nothing
// of its input), Counters and StateSizer (metrics), and StateMemory (the
// memory its state holds, which the engine holds to the pipeline's state
// budget).
//
// It also gives every operator the bookkeeping they would otherwise each
// write: EachChange walks a batch with the positions of its records and
// names them in errors; Expiry, embedded, is an operator's state TTL.
//
// The engine calls an operator from one goroutine: no method needs a lock.
package operator

package runtime

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/etld/etld/pipeline/row"
)

// Dead letters: the records on_error: dead-letter sets aside go to a
// DeadLetterNode, one per target (a file, or a sink of the pipeline),
// whichever policies share it.
//
// The nodes that reject records (a source node, an operator, a sink node:
// the policy's Feeds) hand each entry to the node with the last barrier
// they passed, and tell it when they pass a barrier and when they end.
// Checkpoint N covers an entry its node made before passing barrier N:
// the record was read before the source's position of checkpoint N, so a
// run restored from N does not read it again. The node writes an entry
// at once when the checkpoints its node passed are complete here, and
// holds it back otherwise (its node is past barrier N, another is not
// yet): once every feeding node passed barrier N (or ended), everything
// before the barrier is in, and the node cuts there:
//
//   - into a file, it flushes and syncs the file and reports its length
//     as its state in checkpoint N. A run restored from N first cuts the
//     file back to that length (the entries after it will be made again),
//     so that each entry is in the file once, as the file sink's output
//     is. Entries are in the file as soon as they are written; a crash
//     takes back those after the last checkpoint.
//   - into a sink, it sends barrier N to the sink node after the
//     entries, as a source does, and the sink's own guarantee holds:
//     upserts keyed by the entry's id hold each once.
//
// The node ends when every feeding node has ended.

// deadLettersID starts the checkpoint ID of every DeadLetterNode.
const deadLettersID = "dead-letters/"

// feedEnded is the mark of a feed whose node ended.
const feedEnded = -1

// DeadLetterNode is where dead letters go: a JSON-lines file, or the sink
// node whose Input it is.
type DeadLetterNode struct {
	Node
	// File is the dead-letter file; "" when a sink reads the node.
	File string

	in chan dlMessage
	// run: the node is running, with ctx the run's context.
	run bool
	ctx context.Context
}

type dlMessage struct {
	feed *Feed
	e    *entry
	// mark, when e is nil: the barrier the feed's node passed, or ended.
	mark int64
}

// NewDeadLetterFile returns the dead letters of a file.
func NewDeadLetterFile(path string) *DeadLetterNode {
	return &DeadLetterNode{Node: Node{Name: path, Kind: "dead letters", ID: deadLettersID + "file/" + path}, File: path}
}

// NewDeadLetterSink returns the dead letters a sink of the pipeline
// reads: the sink node's Input is the node's Node.
func NewDeadLetterSink(sink string) *DeadLetterNode {
	return &DeadLetterNode{Node: Node{Name: "of sink " + sink, Kind: "dead letters", ID: deadLettersID + "sink/" + sink}}
}

// put hands the node an entry of f. A policy used outside a run has
// nowhere to put it.
func (d *DeadLetterNode) put(f *Feed, e *entry) error {
	if !d.run {
		return fmt.Errorf("dead letters %s: not running", d.Name)
	}
	select {
	case d.in <- dlMessage{feed: f, e: e}:
		return nil
	case <-d.ctx.Done():
		return context.Cause(d.ctx)
	}
}

func (d *DeadLetterNode) mark(ctx context.Context, f *Feed, id int64) error {
	select {
	case d.in <- dlMessage{feed: f, mark: id}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// dlRun is one run of a DeadLetterNode.
type dlRun struct {
	d        *DeadLetterNode
	co       *coordinator
	pipeline string
	// passed holds the last barrier each live feed's node passed; done
	// is the last barrier cut.
	passed map[*Feed]int64
	live   int
	done   int64
	held   []*entry
	// file and w write the file; size is its length with w flushed.
	file *os.File
	w    *bufio.Writer
	size int64
	// batch gathers the rows for a sink.
	batch *row.Batch
}

// startDeadLetters readies the graph's dead letters for a run: each
// learns the feeds of its nodes. It runs before any node starts.
func startDeadLetters(ctx context.Context, g *Graph) {
	for _, d := range g.DeadLetters {
		d.in = make(chan dlMessage, 64)
		d.ctx, d.run = ctx, true
	}
	for _, n := range g.nodes() {
		for _, f := range []*Feed{n.Feed, n.Late} {
			if f != nil {
				f.node = true
			}
		}
	}
}

// feeds lists the feeds of g's nodes that go to d.
func (d *DeadLetterNode) feeds(g *Graph) []*Feed {
	var out []*Feed
	for _, n := range g.nodes() {
		for _, f := range []*Feed{n.Feed, n.Late} {
			if f != nil && f.policy.target == d {
				out = append(out, f)
			}
		}
	}
	return out
}

func runDeadLetters(ctx context.Context, d *DeadLetterNode, g *Graph, co *coordinator) (err error) {
	defer d.closeOutputs()
	r := &dlRun{d: d, co: co, pipeline: g.Name, passed: map[*Feed]int64{}}
	for _, f := range d.feeds(g) {
		r.passed[f] = 0
	}
	r.live = len(r.passed)
	if d.File != "" {
		if err := r.prepareFile(); err != nil {
			return err
		}
		defer func() {
			if cerr := r.closeFile(); err == nil {
				err = cerr
			}
		}()
	}
	if r.live == 0 {
		return r.end(ctx)
	}
	for {
		var m dlMessage
		select {
		case m = <-d.in:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if err := r.take(ctx, m); err != nil {
			return err
		}
		if r.live == 0 {
			return r.end(ctx)
		}
		if len(d.in) == 0 {
			// Nothing more waiting: what was written goes out now.
			if err := r.flush(ctx); err != nil {
				return err
			}
		}
	}
}

// take handles one message: writes or holds an entry, or notes a mark
// and cuts when every feeding node passed the barrier.
func (r *dlRun) take(ctx context.Context, m dlMessage) error {
	if m.e != nil {
		if m.feed.node && m.e.checkpoint-1 > r.done {
			// Its node passed a barrier that others have not yet.
			r.held = append(r.held, m.e)
			return nil
		}
		return r.write(ctx, m.e)
	}
	if m.mark == feedEnded {
		delete(r.passed, m.feed)
		r.live--
	} else {
		r.passed[m.feed] = m.mark
	}
	if r.live == 0 {
		return nil
	}
	// The barrier in flight: at most one, as the coordinator takes one
	// checkpoint at a time and this node takes part in each.
	next := r.done
	for _, id := range r.passed {
		next = max(next, id)
	}
	if next == r.done {
		return nil
	}
	for _, id := range r.passed {
		if id < next {
			return nil
		}
	}
	return r.cut(ctx, next)
}

// cut ends checkpoint id's part of the dead letters: what came before it
// is out and durable, the node reports, and the entries held back for
// the next checkpoint are written.
func (r *dlRun) cut(ctx context.Context, id int64) error {
	state, err := r.durable(ctx)
	if err != nil {
		return err
	}
	if r.d.File == "" {
		if err := r.d.send(ctx, message{kind: msgBarrier, barrier: id}); err != nil {
			return err
		}
	}
	if err := r.co.report(ctx, report{part: r.d.cpIndex, id: id, connector: state}); err != nil {
		return err
	}
	r.done = id
	held := r.held
	r.held = nil
	for _, e := range held {
		if err := r.write(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// end writes what was held back, reports the final state and ends the
// sink's input.
func (r *dlRun) end(ctx context.Context) error {
	for _, e := range r.held {
		if err := r.write(ctx, e); err != nil {
			return err
		}
	}
	r.held = nil
	state, err := r.durable(ctx)
	if err != nil {
		return err
	}
	if err := r.co.report(ctx, report{part: r.d.cpIndex, ended: true, finished: true, connector: state}); err != nil {
		return err
	}
	if r.d.File == "" {
		return r.d.send(ctx, message{kind: msgEnd})
	}
	return nil
}

func (r *dlRun) write(ctx context.Context, e *entry) error {
	r.d.Stats.RowsIn.Add(1)
	if r.d.File == "" {
		if r.batch == nil {
			r.batch = &row.Batch{}
		}
		r.batch.Append(row.Insert, e.row(r.pipeline))
		if r.batch.Len() >= 1024 {
			return r.flush(ctx)
		}
		return nil
	}
	line, err := e.line(r.pipeline)
	if err != nil {
		return fmt.Errorf("dead letter: %w", err)
	}
	if r.file == nil {
		if err := r.openFile(); err != nil {
			return err
		}
	}
	if _, err := r.w.Write(line); err != nil {
		return fmt.Errorf("dead letter %s: %w", r.d.File, err)
	}
	r.size += int64(len(line))
	return nil
}

// flush hands what was written on: to the file, or as a batch to the
// sink.
func (r *dlRun) flush(ctx context.Context) error {
	if r.d.File != "" {
		if r.w == nil {
			return nil
		}
		if err := r.w.Flush(); err != nil {
			return fmt.Errorf("dead letter %s: %w", r.d.File, err)
		}
		return nil
	}
	if r.batch == nil || r.batch.Len() == 0 {
		return nil
	}
	b := r.batch
	r.batch = nil
	r.d.Stats.RowsOut.Add(int64(b.Len()))
	return r.d.send(ctx, message{batch: b})
}

// durable flushes and, for a file, syncs it and returns its length as
// the state a restored run cuts it back to.
func (r *dlRun) durable(ctx context.Context) ([]byte, error) {
	if err := r.flush(ctx); err != nil {
		return nil, err
	}
	if r.d.File == "" {
		return nil, nil
	}
	if r.file == nil {
		return binary.AppendVarint(nil, r.size), nil
	}
	if err := r.file.Sync(); err != nil {
		return nil, fmt.Errorf("dead letter %s: %w", r.d.File, err)
	}
	return binary.AppendVarint(nil, r.size), nil
}

// prepareFile finds the dead-letter file's length, first cutting it back
// to where the entries of the records to be read again begin: the
// length at the restored checkpoint; or, when no checkpoint of the state
// directory has it (a run killed before its first), the length noted in
// the state directory when the state began. A run with a state directory
// that begins notes that length, before it writes any entry. The file is
// opened (made) at the first entry.
func (r *dlRun) prepareFile() error {
	path := r.d.File
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.size = 0
	case err != nil:
		return fmt.Errorf("dead letter: %w", err)
	default:
		r.size = st.Size()
	}
	var state []byte
	if comp := r.d.cp.restored; comp != nil && comp.Connector != nil {
		state = comp.Connector
	} else if store := r.co.opt.Store; store != nil {
		note := "dead-letters-" + noteName(path)
		if state, err = store.Note(note); err != nil {
			return fmt.Errorf("dead letter %s: %w", path, err)
		}
		if state == nil {
			return store.SetNote(note, binary.AppendVarint(nil, r.size))
		}
	}
	if state == nil {
		return nil
	}
	n, k := binary.Varint(state)
	switch {
	case k != len(state) || n < 0:
		return fmt.Errorf("dead letter %s: state %q is not a file length", path, state)
	case n < r.size:
		if err := os.Truncate(path, n); err != nil {
			return fmt.Errorf("dead letter %s: cut back to the %d bytes of the restored state: %w", path, n, err)
		}
		r.size = n
	case n > r.size:
		// Cut or replaced since (moved away by hand): nothing of it to
		// take back.
		r.co.log.Warn("dead-letter file is shorter than at the restored checkpoint: it was cut or replaced since; appending to it",
			"file", path, "bytes", r.size, "checkpoint_bytes", n)
	}
	return nil
}

// noteName names a file's note in the state directory.
func noteName(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:8])
}

// openFile opens the dead-letter file to append to it.
func (r *dlRun) openFile() error {
	path := r.d.File
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("dead letter: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("dead letter: %w", err)
	}
	r.file, r.w = f, bufio.NewWriter(f)
	return nil
}

func (r *dlRun) closeFile() error {
	if r.file == nil {
		return nil
	}
	err := errors.Join(r.w.Flush(), r.file.Sync(), r.file.Close())
	r.file = nil
	if err != nil {
		return fmt.Errorf("dead letter %s: %w", r.d.File, err)
	}
	return nil
}

package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Options tune a run.
type Options struct {
	// Stop, when closed, ends the run gracefully: sources stop reading,
	// everything in flight drains, sinks flush, and a final checkpoint is
	// taken. Unlike cancelling the context, no data is abandoned.
	Stop <-chan struct{}
	// Checkpoint configures checkpoints (see checkpoint.go).
	Checkpoint CheckpointOptions
	// MaxStateBytes is the most memory one operator's state may hold
	// (budget.go): DefaultMaxStateBytes() when 0, no limit when < 0.
	MaxStateBytes int64
}

// Run executes g until every sink has received the end of its input (a
// bounded pipeline), Stop is closed, or an error occurs. The first error
// cancels every node and is returned with the node's kind and name. With
// a checkpoint store, the run first restores the newest checkpoint.
func Run(ctx context.Context, g *Graph, opt Options) error {
	if g.BatchSize <= 0 {
		g.BatchSize = 1024
	}
	if g.ChannelSize <= 0 {
		g.ChannelSize = 4
	}
	g.DisableDeadlockingBuilds(opt.Checkpoint.Logger)
	if st := opt.Checkpoint.Store; st != nil {
		// After every node ended: the parts written for a checkpoint
		// that was not stored (in flight at a failure or a stop) go now,
		// not at the next run's pruning.
		defer st.DropUnstored()
	}
	co := newCoordinator(g, opt.Checkpoint)
	if err := co.restore(); err != nil {
		return fmt.Errorf("pipeline state: %w", err)
	}
	if err := co.tellSinks(); err != nil {
		return fmt.Errorf("pipeline state: %w", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	link := func(from, to *Node) chan message {
		ch := make(chan message, g.ChannelSize)
		from.outs = append(from.outs, ch)
		from.outTo = append(from.outTo, to)
		return ch
	}
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	fail := func(n *Node, err error) {
		if err == nil {
			return
		}
		once.Do(func() {
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				// A node that ended because another one failed.
				firstErr = context.Cause(ctx)
			} else {
				firstErr = fmt.Errorf("%s: %w", n.label(), err)
			}
			cancel(firstErr)
		})
	}
	// A panic in a node (an operator's or a connector's bug) is the
	// node's error like any other: it fails this run, not the process and
	// the other pipelines in it.
	start := func(n *Node, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail(n, panics.Call(f))
		}()
	}

	// Channels first, so that every output list is complete before any
	// node starts sending.
	opIn := make([]chan message, len(g.Ops))
	for i, op := range g.Ops {
		opIn[i] = link(op.Input, &op.Node)
	}
	unionIn := make([][]chan message, len(g.Unions))
	for i, u := range g.Unions {
		for _, in := range u.Inputs {
			unionIn[i] = append(unionIn[i], link(in, &u.Node))
		}
	}
	// A dead-letter sink's input is its DeadLetterNode, linked here too.
	sinkIn := make([]chan message, len(g.Sinks))
	for i, s := range g.Sinks {
		sinkIn[i] = link(s.Input, &s.Node)
	}
	coNode := &Node{Name: g.Name, Kind: "checkpoint of pipeline"}
	if opt.Checkpoint.Store != nil {
		coNode.Name = opt.Checkpoint.Store.Dir()
		coNode.Kind = "checkpoint store"
	}
	start(coNode, func() error { return co.run(ctx) })
	startDeadLetters(ctx, g)
	for _, d := range g.DeadLetters {
		start(&d.Node, func() error { return runDeadLetters(ctx, d, g, co) })
	}
	fused := fuse(g)
	recycleDirect(g, fused)
	poolCalcs(g)
	maxState := opt.MaxStateBytes
	if maxState == 0 {
		maxState = DefaultMaxStateBytes()
	}
	for _, s := range g.Sources {
		start(&s.Node, func() error { return runSource(ctx, s, fused[s], g.BatchSize, opt.Stop, co) })
	}
	for i, op := range g.Ops {
		start(&op.Node, func() error { return runOp(ctx, op, opIn[i], g.BatchSize, co, maxState) })
	}
	for i, u := range g.Unions {
		start(&u.Node, func() error { return runUnion(ctx, u, unionIn[i], co) })
	}
	for i, s := range g.Sinks {
		start(&s.Node, func() error { return runSink(ctx, s, sinkIn[i], co) })
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// send hands m to every consumer, waiting while a channel is full.
func (n *Node) send(ctx context.Context, m message) error {
	for _, ch := range n.outs {
		if err := n.sendTo(ctx, ch, m); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) closeOutputs() {
	for _, ch := range n.outs {
		close(ch)
	}
	n.outs, n.outTo = nil, nil
}

// sendAll sends the gathered batches of an emitter.
func (n *Node) sendAll(ctx context.Context, batches []*row.Batch) error {
	for _, b := range batches {
		n.Stats.RowsOut.Add(int64(rowsOf(b)))
		if err := n.send(ctx, message{batch: b}); err != nil {
			return err
		}
	}
	return nil
}

func runSink(ctx context.Context, n *SinkNode, in <-chan message, co *coordinator) (err error) {
	p := n.cp
	ctx = retry.WithCounter(ctx, &n.Stats.Retries)
	if err := n.Sink.Open(ctx); err != nil {
		_ = n.Sink.Close(context.WithoutCancel(ctx))
		return fmt.Errorf("open: %w", err)
	}
	defer func() {
		if cerr := n.Sink.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	if r := p.restored; r != nil && p.committer != nil {
		if err := p.committer.Commit(ctx, r.Connector); err != nil {
			return fmt.Errorf("commit of restored checkpoint: %w", err)
		}
	}
	interval := n.FlushInterval
	if interval <= 0 {
		interval = time.Second
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	dirty := false
	finished := false
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-tick.C:
			if dirty {
				if err := n.flush(ctx); err != nil {
					return fmt.Errorf("flush: %w", err)
				}
				n.acknowledged()
				dirty = false
			}
		case <-p.notify:
			if err := p.commitPending(ctx); err != nil {
				return err
			}
		case m, open := <-in:
			if !open {
				if f, ok := n.Sink.(connector.Finisher); ok && finished {
					if err := f.Finish(ctx); err != nil {
						return fmt.Errorf("finish: %w", err)
					}
				}
				state, err := n.checkpoint(ctx)
				if err != nil {
					return err
				}
				if err := co.report(ctx, report{part: n.cpIndex, ended: true, finished: finished, connector: state, rows: n.Stats.RowsIn.Load()}); err != nil {
					return err
				}
				if err := n.Feed.end(ctx); err != nil {
					return err
				}
				return p.waitFinal(ctx, co.done)
			}
			switch m.kind {
			case msgBarrier:
				state, err := n.checkpoint(ctx)
				if err != nil {
					return err
				}
				dirty = false
				if err := co.report(ctx, report{part: n.cpIndex, id: m.barrier, connector: state, rows: n.Stats.RowsIn.Load()}); err != nil {
					return err
				}
				if err := n.Feed.pass(ctx, m.barrier); err != nil {
					return err
				}
				continue
			case msgEnd:
				finished = !m.stop
				continue
			case msgWatermark:
				if ws, ok := n.Sink.(connector.WatermarkSink); ok {
					if err := ws.Watermark(ctx, m.watermark); err != nil {
						return fmt.Errorf("watermark: %w", err)
					}
				}
				continue
			}
			n.Stats.RowsIn.Add(int64(m.batch.Len()))
			b, err := n.admit(m.batch)
			if err != nil {
				return err
			}
			if b.Len() == 0 {
				continue
			}
			if n.Tap != nil {
				n.Tap(b)
			}
			if err := n.write(ctx, b); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			n.unacked += int64(b.Len())
			if c, ok := n.Sink.(connector.RowCopier); ok && c.CopiesRows() && n.Tap == nil {
				// The sink keeps none of the rows: the batch goes back
				// to the fusion that mapped it or the source that
				// made it (fuse.go).
				var text *textHold
				if tc, ok := n.Sink.(connector.TextCopier); ok && tc.CopiesText() {
					text = takeHold(m.batch, &n.Node) // its text too (fuse_hold.go)
				}
				if n.recycle != nil && b == m.batch {
					n.recycle(m.batch)
				} else {
					release(m.batch, &n.Node)
				}
				if text != nil {
					text.done()
				}
			}
			dirty = true
		}
	}
}

// checkpoint flushes the sink, so that everything before the barrier is
// durable, and returns its snapshot if it takes one.
func (n *SinkNode) checkpoint(ctx context.Context) ([]byte, error) {
	if err := n.flush(ctx); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	n.acknowledged()
	sn, ok := n.Sink.(connector.SinkSnapshotter)
	if !ok {
		return nil, nil
	}
	state, err := sn.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if state == nil {
		state = []byte{}
	}
	return state, nil
}

// acknowledged counts as written, after a Flush returned nil, the rows
// given to Write since the last one that the target did not refuse:
// a Flush settles every row before it, each acknowledged by the target
// or handed to the policy (connector.Sink).
func (n *SinkNode) acknowledged() {
	var refused int64
	if n.Feed != nil {
		refused = n.Feed.policy.Skipped()
	}
	n.Stats.RowsOut.Add(max(n.unacked-(refused-n.refused), 0))
	n.unacked, n.refused = 0, refused
}

// admit keeps the changes the sink's mode takes: upsert sinks never see
// -U (the +U that follows overwrites by key).
func (n *SinkNode) admit(b *row.Batch) (*row.Batch, error) {
	switch n.Mode {
	case connector.Upsert:
		if n.Compact && b.Len() > 1 {
			return n.compact(b), nil
		}
		drop := 0
		for _, c := range b.Changes {
			if c.Kind == row.UpdateBefore {
				drop++
			}
		}
		if drop == 0 {
			return b, nil
		}
		out := &row.Batch{Changes: make([]row.Change, 0, b.Len()-drop)}
		// The kept changes keep their records' positions: a sink that
		// writes them (Kafka's exactly-once headers) needs every one.
		var from []int32
		if b.Origin != nil {
			from = make([]int32, 0, cap(out.Changes))
		}
		for i, c := range b.Changes {
			if c.Kind != row.UpdateBefore {
				out.Changes = append(out.Changes, c)
				if from != nil {
					from = append(from, int32(i))
				}
			}
		}
		if from != nil {
			out.Origin = &derivedOrigin{parent: b.Origin, from: from}
		}
		return out, nil
	case connector.Append:
		for _, c := range b.Changes {
			if c.Kind != row.Insert {
				return nil, fmt.Errorf("append-only sink received a %s change: the plan should have refused this pipeline", c.Kind)
			}
		}
	}
	return b, nil
}

// compact keeps, for each key, only the last of its +I, +U and -D changes
// in b, in the order of those last changes: what an upsert sink ends with
// is the same, with fewer writes.
func (n *SinkNode) compact(b *row.Batch) *row.Batch {
	last := make(map[string]int, b.Len())
	var key []byte
	for i, c := range b.Changes {
		if c.Kind == row.UpdateBefore {
			continue
		}
		key = row.KeyOf(key[:0], c.Row, n.Key)
		last[string(key)] = i
	}
	out := &row.Batch{Changes: make([]row.Change, 0, len(last))}
	for i, c := range b.Changes {
		if c.Kind == row.UpdateBefore {
			continue
		}
		key = row.KeyOf(key[:0], c.Row, n.Key)
		if last[string(key)] == i {
			out.Changes = append(out.Changes, c)
		}
	}
	return out
}

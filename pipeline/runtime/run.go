package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/etld/etld/internal/panics"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Options tune a run.
type Options struct {
	// Stop, when closed, ends the run gracefully: sources stop reading,
	// everything in flight drains, sinks flush, and a final checkpoint is
	// taken. Unlike cancelling the context, no data is abandoned.
	Stop <-chan struct{}
	// Checkpoint configures checkpoints (see checkpoint.go).
	Checkpoint CheckpointOptions
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
	co := newCoordinator(g, opt.Checkpoint)
	if err := co.restore(); err != nil {
		return fmt.Errorf("pipeline state: %w", err)
	}
	if err := co.tellSinks(); err != nil {
		return fmt.Errorf("pipeline state: %w", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	link := func(from *Node) chan message {
		ch := make(chan message, g.ChannelSize)
		from.outs = append(from.outs, ch)
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
		opIn[i] = link(op.Input)
	}
	unionIn := make([][]chan message, len(g.Unions))
	for i, u := range g.Unions {
		for _, in := range u.Inputs {
			unionIn[i] = append(unionIn[i], link(in))
		}
	}
	sinkIn := make([]chan message, len(g.Sinks))
	for i, s := range g.Sinks {
		sinkIn[i] = link(s.Input)
	}
	coNode := &Node{Name: g.Name, Kind: "checkpoint of pipeline"}
	if opt.Checkpoint.Store != nil {
		coNode.Name = opt.Checkpoint.Store.Dir()
		coNode.Kind = "checkpoint store"
	}
	start(coNode, func() error { return co.run(ctx) })
	fused := fuse(g)
	for _, s := range g.Sources {
		start(&s.Node, func() error { return runSource(ctx, s, fused[s], g.BatchSize, opt.Stop, co) })
	}
	for i, op := range g.Ops {
		start(&op.Node, func() error { return runOp(ctx, op, opIn[i], g.BatchSize, co) })
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
		select {
		case ch <- m:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

func (n *Node) closeOutputs() {
	for _, ch := range n.outs {
		close(ch)
	}
	n.outs = nil
}

// sendAll sends the gathered batches of an emitter.
func (n *Node) sendAll(ctx context.Context, batches []*row.Batch) error {
	for _, b := range batches {
		n.Stats.RowsOut.Add(int64(b.Len()))
		if err := n.send(ctx, message{batch: b}); err != nil {
			return err
		}
	}
	return nil
}

func runOp(ctx context.Context, n *OpNode, in <-chan message, batchSize int, co *coordinator) (err error) {
	defer n.closeOutputs()
	if o, ok := n.Op.(operator.Opener); ok {
		// A lookup join's client (join_lookup.go).
		if err := o.Open(ctx); err != nil {
			_ = o.Close(context.WithoutCancel(ctx))
			return err
		}
		defer func() { err = errors.Join(err, o.Close(context.WithoutCancel(ctx))) }()
	}
	step, err := n.batchStep()
	if err != nil {
		return err
	}
	c, _ := n.Op.(*Calc)
	fusedCalc := c != nil && c.fused
	n.Stats.Watermark.Store(operator.NoWatermark)
	em := newBatchEmitter(batchSize)
	// finished: Finish has run, in this run or before the restored
	// checkpoint; it never runs twice.
	finished := n.cp.restored != nil && n.cp.restored.Ended
	stop := false
	// A Flusher (a mini-batch) is flushed before every snapshot and on a
	// timer, so held changes wait at most its latency.
	fl, _ := n.Op.(operator.Flusher)
	var tick <-chan time.Time
	if fl != nil && fl.FlushEvery() > 0 {
		t := time.NewTicker(fl.FlushEvery())
		defer t.Stop()
		tick = t.C
	}
	// A Sweeper (state TTL) frees expired state on a timer too, so that
	// idle keys go while the input is quiet.
	sw, _ := n.Op.(operator.Sweeper)
	var sweep <-chan time.Time
	if sw != nil && sw.SweepEvery() > 0 {
		t := time.NewTicker(sw.SweepEvery())
		defer t.Stop()
		sweep = t.C
	}
	flush := func() error {
		if fl == nil {
			return nil
		}
		em.begin(nil)
		return fl.Flush(em)
	}
	for {
		var m message
		var open bool
		select {
		case m, open = <-in:
		case <-tick:
			if err := flush(); err != nil {
				return err
			}
			if err := n.sendAll(ctx, em.take()); err != nil {
				return err
			}
			continue
		case <-sweep:
			sw.Sweep()
			n.countDropped()
			continue
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if !open {
			if err := flush(); err != nil {
				return err
			}
			if !stop && !finished {
				em.begin(nil)
				if err := n.Op.Finish(em); err != nil {
					return err
				}
				finished = true
			}
			if err := n.sendAll(ctx, em.take()); err != nil {
				return err
			}
			n.countDropped()
			state, err := n.snapshot(co)
			if err != nil {
				return err
			}
			if err := co.report(ctx, report{part: n.cpIndex, ended: true, finished: finished, runtime: state}); err != nil {
				return err
			}
			return n.send(ctx, message{kind: msgEnd, stop: stop})
		}
		switch m.kind {
		case msgBatch:
			n.Stats.RowsIn.Add(int64(m.batch.Len()))
			if fusedCalc && fusedOf(m.batch) != nil {
				// Mapped in the source's decoders already (fuse.go).
				if m.batch.Len() > 0 {
					if err := n.sendAll(ctx, []*row.Batch{m.batch}); err != nil {
						return err
					}
				}
				continue
			}
			em.begin(m.batch)
			if err := step(m, em); err != nil {
				return err
			}
		case msgWatermark:
			em.begin(nil)
			if err := n.Op.Watermark(m.watermark, em); err != nil {
				return err
			}
		case msgBarrier:
			if err := flush(); err != nil {
				return err
			}
		case msgEnd:
			stop = m.stop
			continue // forwarded once the input closes
		}
		if err := n.sendAll(ctx, em.take()); err != nil {
			return err
		}
		switch m.kind {
		case msgWatermark:
			if h, ok := n.Op.(operator.WatermarkHolder); ok {
				m.watermark = h.HoldWatermark(m.watermark)
			}
			n.Stats.Watermark.Store(m.watermark)
			if err := n.send(ctx, m); err != nil {
				return err
			}
		case msgBarrier:
			if err := n.barrier(ctx, co, m); err != nil {
				return err
			}
		}
		n.countDropped()
	}
}

// batchStep returns how the node hands an input batch to its operator:
// with its input's number to one of two inputs, or else to Process,
// after which an operator that keeps nothing of its input gives the
// batch's rows back to the fusion that mapped them.
func (n *OpNode) batchStep() (func(m message, em *batchEmitter) error, error) {
	switch op := n.Op.(type) {
	case operator.TwoInput:
		return func(m message, em *batchEmitter) error { return op.ProcessInput(m.input, m.batch, em) }, nil
	case operator.Operator:
		rel, _ := op.(operator.InputReleaser)
		return func(m message, em *batchEmitter) error {
			if err := op.Process(m.batch, em); err != nil {
				return err
			}
			if rel != nil && rel.ReleasesInput() {
				release(m.batch, &n.Node)
			}
			return nil
		}, nil
	default:
		return nil, fmt.Errorf("operator %T takes no input", n.Op)
	}
}

// barrier snapshots the operator and forwards the barrier. With one input
// there is nothing to align; several inputs meet in a UnionNode, which
// aligns their barriers (union.go).
func (n *OpNode) barrier(ctx context.Context, co *coordinator, m message) error {
	state, err := n.snapshot(co)
	if err != nil {
		return err
	}
	if err := co.report(ctx, report{part: n.cpIndex, id: m.barrier, runtime: state}); err != nil {
		return err
	}
	return n.send(ctx, m)
}

// snapshot encodes the operator's state for a checkpoint. A run without
// a checkpoint store keeps no state: its barriers only make sinks flush,
// and encoding the operators' state (hundreds of MB for a million keys)
// at every barrier and at the end would be wasted work.
func (n *OpNode) snapshot(co *coordinator) ([]byte, error) {
	sn, ok := n.Op.(operator.Snapshotter)
	if !ok || co.opt.Store == nil {
		return nil, nil
	}
	state, err := sn.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	n.Stats.StateBytes.Store(int64(len(state)))
	return state, nil
}

func (n *OpNode) countDropped() {
	if c, ok := n.Op.(operator.Counters); ok {
		d, _ := c.Dropped()
		n.Stats.Skipped.Store(d)
	}
	if s, ok := n.Op.(operator.StateSizer); ok {
		n.Stats.StateEntries.Store(s.StateEntries())
	}
}

func runSink(ctx context.Context, n *SinkNode, in <-chan message, co *coordinator) (err error) {
	p := n.cp
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
				if err := n.Sink.Flush(ctx); err != nil {
					return fmt.Errorf("flush: %w", err)
				}
				dirty = false
			}
		case <-p.notify:
			if err := p.commitPending(ctx); err != nil {
				return err
			}
		case m, open := <-in:
			if !open {
				state, err := n.checkpoint(ctx)
				if err != nil {
					return err
				}
				if err := co.report(ctx, report{part: n.cpIndex, ended: true, finished: finished, connector: state, rows: n.Stats.RowsIn.Load()}); err != nil {
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
				continue
			case msgEnd:
				finished = !m.stop
				continue
			case msgWatermark:
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
			if err := n.Sink.Write(ctx, b); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			n.Stats.RowsOut.Add(int64(b.Len()))
			if c, ok := n.Sink.(connector.RowCopier); ok && c.CopiesRows() && n.Tap == nil {
				release(m.batch, &n.Node) // the sink keeps none of its rows (fuse.go)
			}
			dirty = true
		}
	}
}

// checkpoint flushes the sink, so that everything before the barrier is
// durable, and returns its snapshot if it takes one.
func (n *SinkNode) checkpoint(ctx context.Context) ([]byte, error) {
	if err := n.Sink.Flush(ctx); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
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

package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// runOp runs an operator node: each message of its input goes to the
// operator and what it emits goes on; a mini-batch is also flushed on a
// timer and expired state swept on another, so that neither waits for
// input.
func runOp(ctx context.Context, n *OpNode, in <-chan message, batchSize int, co *coordinator, maxState int64) (err error) {
	defer n.closeOutputs()
	ctx = retry.WithCounter(ctx, &n.Stats.Retries)
	if o, ok := n.Op.(operator.Opener); ok {
		// A lookup join's client.
		if err := o.Open(ctx); err != nil {
			_ = o.Close(context.WithoutCancel(ctx))
			return err
		}
		defer func() { err = errors.Join(err, o.Close(context.WithoutCancel(ctx))) }()
	}
	r, err := newOpRun(n, batchSize, co)
	if err != nil {
		return err
	}
	r.budget.mem, _ = n.Op.(operator.StateMemory)
	r.budget.max = maxState
	if b, ok := n.Op.(interface{ SetStateBudget(int64) }); ok {
		// A batch run's sort spills within the budget (batch_sort.go).
		b.SetStateBudget(maxState)
	}
	// A restored state over the budget fails now, not at the next
	// message.
	if err := r.budget.check(); err != nil {
		return err
	}
	// What the operator emits goes on as each batch fills.
	r.em.flow = func(b *row.Batch) error { return n.sendAll(ctx, []*row.Batch{b}) }
	n.Stats.setWatermark(operator.NoWatermark)
	var tick, sweep <-chan time.Time
	if r.flusher != nil && r.flusher.FlushEvery() > 0 {
		t := time.NewTicker(r.flusher.FlushEvery())
		defer t.Stop()
		tick = t.C
	}
	sw, _ := n.Op.(operator.Sweeper)
	if sw != nil && sw.SweepEvery() > 0 {
		t := time.NewTicker(sw.SweepEvery())
		defer t.Stop()
		sweep = t.C
	}
	for {
		select {
		case m, open := <-in:
			if !open {
				return r.end(ctx)
			}
			c := n.startBusy()
			err := r.handle(ctx, m)
			n.stopBusy(c, 0)
			if err != nil {
				return err
			}
		case <-tick:
			c := n.startBusy()
			err := r.flush()
			if err == nil {
				err = r.sendEmitted(ctx)
			}
			n.stopBusy(c, 0)
			if err != nil {
				return err
			}
		case <-sweep:
			c := n.startBusy()
			sw.Sweep()
			n.countDropped()
			n.stopBusy(c, 0)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// opRun is one run of an operator node, with what the operator is
// resolved once.
type opRun struct {
	n    *OpNode
	co   *coordinator
	em   *batchEmitter
	step func(m message, em *batchEmitter) error
	// fusedCalc: the operator is a Calc whose mapping a source may have
	// done already (fuse.go).
	fusedCalc bool
	// flusher is a mini-batch, flushed before every snapshot and on a
	// timer, so held changes wait at most its latency.
	flusher operator.Flusher
	holder  operator.WatermarkHolder
	budget  stateBudget
	// finished: Finish has run, in this run or before the restored
	// checkpoint; it never runs twice. stop: the input was stopped, not
	// ended.
	finished, stop bool
}

func newOpRun(n *OpNode, batchSize int, co *coordinator) (*opRun, error) {
	step, err := n.batchStep()
	if err != nil {
		return nil, err
	}
	step = n.lateStep(step)
	r := &opRun{n: n, co: co, em: newBatchEmitter(batchSize), step: step}
	c, _ := n.Op.(*Calc)
	r.fusedCalc = c != nil && c.fused
	r.em.pool, r.em.by = n.slabs, n.slabsBy // set for a Calc or a Carving alone (poolCalcs)
	r.em.textBy = n.textBy                  // set for a TextPasser alone (holdText)
	r.flusher, _ = n.Op.(operator.Flusher)
	r.holder, _ = n.Op.(operator.WatermarkHolder)
	r.finished = n.cp.restored != nil && n.cp.restored.Ended
	return r, nil
}

// sendEmitted sends what the operator emitted and the emitter still
// holds, or the error of a batch that could not go on while it emitted.
func (r *opRun) sendEmitted(ctx context.Context) error {
	if err := r.em.failed(); err != nil {
		r.em.take()
		return err
	}
	return r.n.sendAll(ctx, r.em.take())
}

func (r *opRun) flush() error {
	if r.flusher == nil {
		return nil
	}
	r.em.begin(nil)
	return r.flusher.Flush(r.em)
}

// handle gives one message to the operator, sends what it emitted, and
// forwards a watermark (held back by an operator that emits older rows)
// or a barrier (after the snapshot).
func (r *opRun) handle(ctx context.Context, m message) error {
	n := r.n
	switch m.kind {
	case msgBatch:
		n.Stats.RowsIn.Add(int64(rowsOf(m.batch)))
		if r.fusedCalc && fusedOf(m.batch) != nil {
			// Mapped in the source's decoders already.
			if m.batch.Len() == 0 {
				return nil
			}
			return n.sendAll(ctx, []*row.Batch{m.batch})
		}
		r.em.begin(m.batch)
		r.holdInput(m)
		if err := r.step(m, r.em); err != nil {
			return err
		}
	case msgWatermark:
		r.em.begin(nil)
		if err := n.Op.Watermark(m.watermark, r.em); err != nil {
			return err
		}
	case msgBarrier:
		if err := r.flush(); err != nil {
			return err
		}
	case msgEnd:
		r.stop = m.stop
		return nil // forwarded once the input closes
	}
	if err := r.sendEmitted(ctx); err != nil {
		return err
	}
	r.passedText()
	switch m.kind {
	case msgWatermark:
		if r.holder != nil {
			m.watermark = r.holder.HoldWatermark(m.watermark)
		}
		n.Stats.setWatermark(m.watermark)
		if err := n.send(ctx, m); err != nil {
			return err
		}
	case msgBarrier:
		if err := n.barrier(ctx, r.co, m); err != nil {
			return err
		}
	}
	n.countDropped()
	return r.budget.check()
}

// end runs when the input closed: the last flush, Finish unless the input
// was stopped or it ran already, the final snapshot, and the end message
// saying how the input ended.
func (r *opRun) end(ctx context.Context) error {
	n := r.n
	if err := r.flush(); err != nil {
		return err
	}
	if !r.stop && !r.finished {
		r.em.begin(nil)
		if err := n.Op.Finish(r.em); err != nil {
			return err
		}
		r.finished = true
	}
	if err := r.sendEmitted(ctx); err != nil {
		return err
	}
	n.countDropped()
	st, err := n.snapshot(r.co, 0)
	if err != nil {
		return err
	}
	if err := r.co.report(ctx, report{part: n.cpIndex, ended: true, finished: r.finished, runtime: st.state, runtimePart: st.part, entries: st.entries}); err != nil {
		return err
	}
	if err := n.Feed.end(ctx); err != nil {
		return err
	}
	if err := n.endLate(ctx); err != nil {
		return err
	}
	return n.send(ctx, message{kind: msgEnd, stop: r.stop})
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
		if br, ok := op.(batchReleaser); ok {
			br.setRelease(func(b *row.Batch) { release(b, &n.Node) })
		}
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
	st, err := n.snapshot(co, m.barrier)
	if err != nil {
		return err
	}
	if err := co.report(ctx, report{part: n.cpIndex, id: m.barrier, runtime: st.state, runtimePart: st.part, entries: st.entries}); err != nil {
		return err
	}
	if err := n.send(ctx, m); err != nil {
		return err
	}
	if err := n.passLate(ctx, m.barrier); err != nil {
		return err
	}
	return n.Feed.pass(ctx, m.barrier)
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

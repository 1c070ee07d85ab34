package runtime

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// UnionNode merges several inputs into one stream (UNION ALL): batches pass
// unchanged, in the order they arrive. It keeps no state but takes part in
// checkpoints, since it is where the inputs' barriers meet:
//
//   - Barriers are aligned, as Flink's aligned checkpoints: an input that
//     delivered barrier N is held back (its forwarder waits) until every
//     input still open delivered N; then the union reports N and forwards
//     one barrier N. Without that, changes after barrier N on one input
//     would be emitted before it, and a restore would read them again.
//   - The watermark is the minimum of the open inputs' watermarks, sent
//     when it advances; an input that ended no longer holds it back (a
//     bounded input sent +infinity before ending anyway), but one that
//     was stopped does: it resumes from the checkpoint with rows at its
//     watermark, which a higher one downstream would make late.
//   - The stream ends when every input has ended; the end is a stop when
//     any input stopped.
//   - Positions: a batch passed on from input i names its records as
//     "<i>:<record's input>" (unionOrigin), so that a sink following each
//     input's records in their order (the Kafka sink's exactly-once
//     positions) keeps two inputs that read one source apart.
type UnionNode struct {
	Node
	Inputs []*Node
	// BuildFirst: input Build is read to its end before the others are
	// passed on (a join's build input, union_build.go).
	BuildFirst bool
	Build      int
	// Strict: the join relies on the build input's rows coming first (a
	// batch hash join), so where holding the others back could deadlock
	// (DisableDeadlockingBuilds) they are read and kept in memory until
	// the build input ended, instead of being let through.
	Strict bool
	// buffer: the held inputs are read and kept, not held back.
	buffer bool
	// tags caches the tagged names of records' inputs (unionOrigin).
	tags unionTags
}

// unionMsg is a message of input i; open false means the input closed.
type unionMsg struct {
	i    int
	m    message
	open bool
}

func runUnion(ctx context.Context, n *UnionNode, ins []chan message, co *coordinator) error {
	defer n.closeOutputs()
	n.Stats.setWatermark(operator.NoWatermark)
	fctx, fcancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer fcancel()
	merged := make(chan unionMsg)
	u := newUnionRun(n, co, len(ins))
	if n.BuildFirst {
		u.build = newBuildGate(n.Build, len(ins))
		u.build.buffer = n.buffer
		if r := n.cp.restored; r != nil {
			if err := u.build.restoreHeld(r.Runtime, len(ins), co.verdicts[n.ID].Widen); err != nil {
				return err
			}
		}
	}
	for i, ch := range ins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			forwardInput(fctx, i, ch, merged, u.resume[i], u.build.inputGate(i))
		}()
	}
	for u.open > 0 {
		var m unionMsg
		select {
		case m = <-merged:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		c := n.startBusy()
		err := u.handle(ctx, m)
		n.stopBusy(c, 0)
		if err != nil {
			return err
		}
	}
	if err := co.report(ctx, report{part: n.cpIndex, ended: true, finished: !u.stop, runtime: u.state()}); err != nil {
		return err
	}
	return n.send(ctx, message{kind: msgEnd, stop: u.stop})
}

// unionRun is one run of a union node: what it knows of each input.
type unionRun struct {
	n  *UnionNode
	co *coordinator
	// resume lets an input held at a barrier go on once it is aligned.
	resume  []chan struct{}
	wms     []int64
	closed  []bool
	stopped []bool // ended by a stop: still holds the watermark
	arrived []bool // delivered the pending barrier
	pending int64  // the barrier being aligned, 0 for none
	// aligning is when the pending barrier's first input delivered it.
	aligning time.Time
	open     int
	stop     bool
	outWM    int64
	// build, if set, holds back the inputs but the build input until it
	// ended (union_build.go).
	build *buildGate
}

func newUnionRun(n *UnionNode, co *coordinator, inputs int) *unionRun {
	u := &unionRun{n: n, co: co, resume: make([]chan struct{}, inputs), wms: make([]int64, inputs),
		closed: make([]bool, inputs), stopped: make([]bool, inputs), arrived: make([]bool, inputs),
		open: inputs, outWM: operator.NoWatermark}
	for i := range u.wms {
		u.resume[i] = make(chan struct{}, 1)
		u.wms[i] = operator.NoWatermark
	}
	return u
}

// handle takes one message of input m.i, or its end.
func (u *unionRun) handle(ctx context.Context, in unionMsg) error {
	n := u.n
	if !in.open {
		if u.deferEnd(in.i) {
			return u.aligned(ctx)
		}
		u.closed[in.i] = true
		u.open--
		if u.build != nil && in.i == u.build.input {
			if err := u.buildEnded(ctx); err != nil {
				return err
			}
		}
		if u.open == 0 {
			return nil
		}
		if err := u.advance(ctx); err != nil {
			return err
		}
		return u.aligned(ctx)
	}
	defer u.pull(in.i)
	if u.hold(in) {
		return nil
	}
	switch m := in.m; m.kind {
	case msgBatch:
		n.Stats.RowsIn.Add(int64(m.batch.Len()))
		return u.pass(ctx, in.i, m)
	case msgWatermark:
		return u.pass(ctx, in.i, m)
	case msgBarrier:
		if u.pending != m.barrier {
			u.aligning = time.Now()
		}
		u.pending = m.barrier
		u.arrived[in.i] = true
		// Held inputs are read up to their barrier (union_build.go).
		for i := range u.arrived {
			u.pull(i)
		}
		return u.aligned(ctx)
	case msgEnd:
		u.stop = u.stop || m.stop
		u.stopped[in.i] = m.stop
	}
	return nil
}

// pass sends a batch of input i on, or takes its watermark.
func (u *unionRun) pass(ctx context.Context, i int, m message) error {
	if m.kind == msgWatermark {
		u.wms[i] = max(u.wms[i], m.watermark)
		return u.advance(ctx)
	}
	u.n.Stats.RowsOut.Add(int64(m.batch.Len()))
	m.input = i
	m.batch = u.n.tagged(m.batch, i)
	return u.n.send(ctx, m)
}

// state is the union's part of a checkpoint: the rows it holds back,
// when it reads a build input first and the run keeps checkpoints.
func (u *unionRun) state() []byte {
	if u.build == nil || u.co.opt.Store == nil {
		return nil
	}
	return u.build.encodeHeld()
}

// aligned forwards the pending barrier once every open input delivered
// it, and lets the held inputs go on.
func (u *unionRun) aligned(ctx context.Context) error {
	if u.pending == 0 {
		return nil
	}
	for i := range u.closed {
		if !u.closed[i] && !u.arrived[i] && !u.build.ended(i) {
			return nil
		}
	}
	u.co.g.CheckpointLog.aligned(u.pending, time.Since(u.aligning))
	if err := u.co.report(ctx, report{part: u.n.cpIndex, id: u.pending, runtime: u.state()}); err != nil {
		return err
	}
	if err := u.n.send(ctx, message{kind: msgBarrier, barrier: u.pending}); err != nil {
		return err
	}
	u.pending = 0
	for i := range u.arrived {
		if u.arrived[i] {
			u.arrived[i] = false
			u.resume[i] <- struct{}{}
		}
	}
	return nil
}

// advance sends the minimum watermark of the open inputs if it grew.
func (u *unionRun) advance(ctx context.Context) error {
	low, some := operator.MaxWatermark, false
	for i, wm := range u.wms {
		if !u.closed[i] || u.stopped[i] {
			low, some = min(low, wm), true
		}
	}
	if !some || low == operator.NoWatermark || low <= u.outWM {
		return nil
	}
	u.outWM = low
	u.n.Stats.setWatermark(low)
	return u.n.send(ctx, message{kind: msgWatermark, watermark: low})
}

// forwardInput hands the messages of input i to the union's loop, and
// after a barrier waits for resume: the input is held back until the
// barrier is aligned.
func forwardInput(ctx context.Context, i int, in <-chan message, out chan<- unionMsg, resume <-chan struct{}, gate *inputGate) {
	for {
		var m message
		var open, ok bool
		// A held input reads a message only when let (union_build.go).
		if gate, ok = gate.wait(ctx.Done()); !ok {
			return
		}
		select {
		case m, open = <-in:
		case <-ctx.Done():
			return
		}
		select {
		case out <- unionMsg{i: i, m: m, open: open}:
		case <-ctx.Done():
			return
		}
		if !open {
			return
		}
		if m.kind == msgBarrier {
			select {
			case <-resume:
			case <-ctx.Done():
				return
			}
		}
	}
}

// tagged returns b as passed on from input i: a copy of the batch (the
// input's other readers keep theirs) whose origin names each record's
// input with i, when b's origin gives records.
func (n *UnionNode) tagged(b *row.Batch, i int) *row.Batch {
	rec, ok := b.Origin.(row.RecordOrigin)
	if !ok {
		return b
	}
	out := *b
	out.Origin = &unionOrigin{Origin: b.Origin, rec: rec, input: i, tags: &n.tags}
	return &out
}

// unionOrigin is the origin of a batch the union passed on from one of
// its inputs: the records of the batch it came with, their input named
// "<input>:<name>". Position, for errors, is the record's own.
type unionOrigin struct {
	row.Origin
	rec   row.RecordOrigin
	input int
	tags  *unionTags
}

// unionTags are the tagged names a union made, shared by its batches.
type unionTags struct {
	m sync.Map // unionTag -> string
	n atomic.Int64
}

type unionTag struct {
	input int
	name  string
}

// maxTags bounds the tagged names a union keeps; past it (inputs named
// by ever new files) each name is built anew.
const maxTags = 1 << 14

// Record implements row.RecordOrigin. It may be called from several
// goroutines (the union's readers).
func (u *unionOrigin) Record(i int) (string, int64, bool) {
	name, num, ok := u.rec.Record(i)
	if !ok {
		return "", 0, false
	}
	key := unionTag{u.input, name}
	if t, ok := u.tags.m.Load(key); ok {
		return t.(string), num, true
	}
	t := strconv.Itoa(u.input) + ":" + name
	if u.tags.n.Load() < maxTags {
		if _, loaded := u.tags.m.LoadOrStore(key, t); !loaded {
			u.tags.n.Add(1)
		}
	}
	return t, num, true
}

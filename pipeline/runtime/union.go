package runtime

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

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
	n.Stats.Watermark.Store(operator.NoWatermark)
	fctx, fcancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer fcancel()
	merged := make(chan unionMsg)
	resume := make([]chan struct{}, len(ins))
	for i, ch := range ins {
		resume[i] = make(chan struct{}, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			forwardInput(fctx, i, ch, merged, resume[i])
		}()
	}
	wms := make([]int64, len(ins))
	closed := make([]bool, len(ins))
	stopped := make([]bool, len(ins)) // ended by a stop: still holds the watermark
	arrived := make([]bool, len(ins))
	for i := range wms {
		wms[i] = operator.NoWatermark
	}
	var pending int64 // the barrier being aligned, 0 for none
	open, stop, outWM := len(ins), false, operator.NoWatermark
	// aligned forwards the pending barrier once every open input
	// delivered it, and lets the held inputs go on.
	aligned := func() error {
		if pending == 0 {
			return nil
		}
		for i := range ins {
			if !closed[i] && !arrived[i] {
				return nil
			}
		}
		if err := co.report(ctx, report{part: n.cpIndex, id: pending}); err != nil {
			return err
		}
		if err := n.send(ctx, message{kind: msgBarrier, barrier: pending}); err != nil {
			return err
		}
		pending = 0
		for i := range arrived {
			if arrived[i] {
				arrived[i] = false
				resume[i] <- struct{}{}
			}
		}
		return nil
	}
	// advance sends the minimum watermark of the open inputs if it grew.
	advance := func() error {
		low, some := operator.MaxWatermark, false
		for i, wm := range wms {
			if !closed[i] || stopped[i] {
				low, some = min(low, wm), true
			}
		}
		if !some || low == operator.NoWatermark || low <= outWM {
			return nil
		}
		outWM = low
		n.Stats.Watermark.Store(low)
		return n.send(ctx, message{kind: msgWatermark, watermark: low})
	}
	for open > 0 {
		var u unionMsg
		select {
		case u = <-merged:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if !u.open {
			closed[u.i] = true
			open--
			if open == 0 {
				break
			}
			if err := advance(); err != nil {
				return err
			}
			if err := aligned(); err != nil {
				return err
			}
			continue
		}
		switch m := u.m; m.kind {
		case msgBatch:
			n.Stats.RowsIn.Add(int64(m.batch.Len()))
			n.Stats.RowsOut.Add(int64(m.batch.Len()))
			m.input = u.i
			m.batch = n.tagged(m.batch, u.i)
			if err := n.send(ctx, m); err != nil {
				return err
			}
		case msgWatermark:
			wms[u.i] = max(wms[u.i], m.watermark)
			if err := advance(); err != nil {
				return err
			}
		case msgBarrier:
			pending = m.barrier
			arrived[u.i] = true
			if err := aligned(); err != nil {
				return err
			}
		case msgEnd:
			stop = stop || m.stop
			stopped[u.i] = m.stop
		}
	}
	if err := co.report(ctx, report{part: n.cpIndex, ended: true, finished: !stop}); err != nil {
		return err
	}
	return n.send(ctx, message{kind: msgEnd, stop: stop})
}

// forwardInput hands the messages of input i to the union's loop, and
// after a barrier waits for resume: the input is held back until the
// barrier is aligned.
func forwardInput(ctx context.Context, i int, in <-chan message, out chan<- unionMsg, resume <-chan struct{}) {
	for {
		var m message
		var open bool
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

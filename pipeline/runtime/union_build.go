package runtime

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"

	"github.com/etld/etld/pipeline/row"
)

// A join's union may read one input, the build input, to its end before
// it passes on anything of the others (UnionNode.BuildFirst): a LEFT JOIN
// of a stream with a dimension file then sees every dimension row before
// the first stream row, and gives the same changelog every run instead
// of NULL-padded rows retracted later when the stream happened to be read
// first. The other inputs are held back, not buffered: their forwarders
// do not read their channels, so their sources wait (backpressure).
//
// A checkpoint still aligns. When the build input delivers barrier N,
// each held input is read up to its barrier N, one message at a time;
// what it sent before the barrier (at most the batches in flight between
// its source and the union) is kept by the union and goes into the
// union's part of the checkpoint, so that a restore, whose sources
// resume after those rows, passes them on once the build input has
// ended. Holding back an input that shares a source with the build
// input would deadlock (the shared source waits on the held channel and
// never finishes the build input): DisableDeadlockingBuilds turns
// reading the build input first off for such a join.

// buildGate is what a union reading its build input first keeps.
type buildGate struct {
	input int
	// open is closed when the held inputs may be read freely: the build
	// input ended, or was stopped (then their rows are still held, for
	// the final checkpoint).
	open   chan struct{}
	opened bool
	// drain, per held input, lets its forwarder read one more message
	// while a barrier is being aligned.
	drain []chan struct{}
	// holding: the held inputs' messages are kept, not passed on.
	holding bool
	held    []heldMsg
	// buffer: the held inputs are read freely and their messages kept
	// (UnionNode.Strict where holding them back could deadlock); an
	// input that ends meanwhile is closed only once the held messages
	// went on (ends), so that its watermark holds the union's back
	// until then.
	buffer bool
	ends   []int
}

// heldMsg is a batch or watermark of a held input, kept in order.
type heldMsg struct {
	input int
	m     message
}

// inputGate is a held input's view of the gate, for its forwarder; nil
// for an input read freely.
type inputGate struct {
	open  <-chan struct{}
	drain <-chan struct{}
}

func newBuildGate(input, inputs int) *buildGate {
	g := &buildGate{input: input, open: make(chan struct{}), drain: make([]chan struct{}, inputs), holding: true}
	for i := range g.drain {
		g.drain[i] = make(chan struct{}, 1)
	}
	return g
}

// inputGate returns input i's gate, nil for the build input.
func (g *buildGate) inputGate(i int) *inputGate {
	if g == nil || i == g.input || g.buffer {
		return nil
	}
	return &inputGate{open: g.open, drain: g.drain[i]}
}

// wait blocks the forwarder until it may read one message; it returns
// the gate to use next (nil once open) and false when ctx ended.
func (g *inputGate) wait(done <-chan struct{}) (*inputGate, bool) {
	if g == nil {
		return nil, true
	}
	select {
	case <-g.open:
		return nil, true
	case <-g.drain:
		return g, true
	case <-done:
		return nil, false
	}
}

// openGate lets the held inputs be read freely.
func (g *buildGate) openGate() {
	if !g.opened {
		g.opened = true
		close(g.open)
	}
}

// pull gives held input i one more read while barrier alignment waits
// for it.
func (u *unionRun) pull(i int) {
	g := u.build
	if g == nil || g.opened || i == g.input || u.pending == 0 || u.arrived[i] || u.closed[i] {
		return
	}
	select {
	case g.drain[i] <- struct{}{}:
	default:
	}
}

// hold keeps a batch or watermark of a held input; it reports false for
// a message that is handled as usual (barriers, ends, the build input's).
func (u *unionRun) hold(in unionMsg) bool {
	g := u.build
	if g == nil || !g.holding || in.i == g.input || (in.m.kind != msgBatch && in.m.kind != msgWatermark) {
		return false
	}
	if in.m.kind == msgBatch {
		u.n.Stats.RowsIn.Add(int64(in.m.batch.Len()))
	}
	g.held = append(g.held, heldMsg{input: in.i, m: in.m})
	return true
}

// deferEnd reports whether the end of input i waits for the build
// input's, since its messages are still kept (buildGate.buffer).
func (u *unionRun) deferEnd(i int) bool {
	g := u.build
	if g == nil || !g.holding || i == g.input {
		return false
	}
	g.ends = append(g.ends, i)
	return true
}

// ended reports whether input i ended but is not closed yet (deferEnd):
// a barrier does not wait for it.
func (g *buildGate) ended(i int) bool {
	return g != nil && slices.Contains(g.ends, i)
}

// buildEnded runs when the build input closed: unless it was stopped,
// the held messages go on, in order, and the other inputs are read
// freely from now on. A stopped build input did not give all its rows:
// the held inputs are read to their end (they are stopping too) and
// what they sent stays held, for the final checkpoint.
func (u *unionRun) buildEnded(ctx context.Context) error {
	g := u.build
	if !u.stopped[g.input] {
		g.holding = false
		held := g.held
		g.held = nil
		for _, h := range held {
			if err := u.pass(ctx, h.input, h.m); err != nil {
				return err
			}
		}
	}
	for _, i := range g.ends {
		u.closed[i] = true
		u.open--
	}
	g.ends = nil
	g.openGate()
	return nil
}

// encodeHeld is the union's part of a checkpoint: the held messages.
func (g *buildGate) encodeHeld() []byte {
	out := binary.AppendUvarint(nil, uint64(len(g.held)))
	for _, h := range g.held {
		out = binary.AppendUvarint(out, uint64(h.input))
		if h.m.kind == msgWatermark {
			out = append(out, 1)
			out = binary.AppendVarint(out, h.m.watermark)
			continue
		}
		out = append(out, 0)
		out = binary.AppendUvarint(out, uint64(h.m.batch.Len()))
		for _, c := range h.m.batch.Changes {
			out = append(out, byte(c.Kind))
			out = row.AppendRow(out, c.Row)
		}
	}
	return out
}

// restoreHeld reads what encodeHeld wrote, its values retagged by widen
// (the join's, when its columns widened: Verdict.Widen).
func (g *buildGate) restoreHeld(b []byte, inputs int, widen map[row.TypeID]row.TypeID) error {
	if len(b) == 0 {
		return nil
	}
	d := row.NewDecoder(b)
	d.SetWiden(widen)
	n := d.Count(2)
	held := make([]heldMsg, 0, n)
	for range n {
		in := int(d.Uvarint())
		if in >= inputs || in == g.input {
			d.Fail("held input %d of %d", in, inputs)
		}
		switch d.Byte() {
		case 1:
			held = append(held, heldMsg{input: in, m: message{kind: msgWatermark, watermark: d.Varint()}})
		case 0:
			nc := d.Count(2)
			bt := &row.Batch{Changes: make([]row.Change, 0, nc)}
			for range nc {
				k := row.Kind(d.Byte())
				if k > row.Delete {
					d.Fail("change kind %d", k)
				}
				bt.Changes = append(bt.Changes, row.Change{Kind: k, Row: d.Row()})
			}
			held = append(held, heldMsg{input: in, m: message{kind: msgBatch, batch: bt}})
		default:
			d.Fail("held message kind")
		}
		if d.Err() != nil {
			break
		}
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("held rows of the join's inputs: %w", err)
	}
	g.held = held
	return nil
}

// DisableDeadlockingBuilds turns off reading the build input first for
// the unions where holding back the other inputs could wait forever: a
// node that feeds the build input also feeds a held input of the same
// or another such union whose build input in turn waits for this one
// (the simplest case: one source read on both sides of a join). It
// returns the names of the unions turned off.
func (g *Graph) DisableDeadlockingBuilds(log *slog.Logger) []string {
	inputs := map[*Node][]*Node{}
	for _, o := range g.Ops {
		inputs[&o.Node] = []*Node{o.Input}
	}
	for _, u := range g.Unions {
		inputs[&u.Node] = u.Inputs
	}
	upstream := func(n *Node) map[*Node]bool {
		seen := map[*Node]bool{}
		stack := []*Node{n}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[x] {
				continue
			}
			seen[x] = true
			stack = append(stack, inputs[x]...)
		}
		return seen
	}
	var off []string
	for {
		var gated []*UnionNode
		for _, u := range g.Unions {
			if u.BuildFirst && !u.buffer {
				gated = append(gated, u)
			}
		}
		// waits[a][b]: a's build input may wait until b's held inputs are
		// read freely, as a node feeding it also feeds one of them.
		builds := make([]map[*Node]bool, len(gated))
		held := make([]map[*Node]bool, len(gated))
		for i, u := range gated {
			builds[i] = upstream(u.Inputs[u.Build])
			held[i] = map[*Node]bool{}
			for j, in := range u.Inputs {
				if j != u.Build {
					for x := range upstream(in) {
						held[i][x] = true
					}
				}
			}
		}
		waits := func(a, b int) bool {
			for x := range builds[a] {
				if held[b][x] {
					return true
				}
			}
			return false
		}
		victim := -1
		for a := range gated {
			if reaches(len(gated), waits, a, a) {
				victim = a
				break
			}
		}
		if victim < 0 {
			return off
		}
		u := gated[victim]
		off = append(off, u.Name)
		if u.Strict {
			u.buffer = true
			if log != nil {
				log.Info("a join keeps its probe input in memory while it reads its build input: they share a source", "join", u.Name)
			}
			continue
		}
		u.BuildFirst = false
		if log != nil {
			log.Info("a join reads both inputs at once: its build input shares a source with the input it would hold back", "join", u.Name)
		}
	}
}

// reaches reports whether a path of one or more edges leads from a to b.
func reaches(n int, edge func(a, b int) bool, a, b int) bool {
	seen := make([]bool, n)
	stack := []int{a}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for y := range n {
			if !seen[y] && edge(x, y) {
				if y == b {
					return true
				}
				seen[y] = true
				stack = append(stack, y)
			}
		}
	}
	return false
}

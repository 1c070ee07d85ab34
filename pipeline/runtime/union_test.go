package runtime

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// unionHarness runs one UnionNode over n input channels the test feeds,
// with a coordinator that only collects reports.
type unionHarness struct {
	t    *testing.T
	ins  []chan message
	out  chan message
	co   *coordinator
	done chan error
}

func newUnionHarness(t *testing.T, n int) *unionHarness {
	t.Helper()
	h := &unionHarness{t: t, out: make(chan message, 64), co: &coordinator{g: &Graph{}, reports: make(chan report, 64)}, done: make(chan error, 1)}
	u := &UnionNode{Node: Node{Name: "Union", Kind: "transform"}}
	u.outs = []chan message{h.out}
	for range n {
		h.ins = append(h.ins, make(chan message, 16))
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { h.done <- runUnion(ctx, u, h.ins, h.co) }()
	return h
}

func oneRow(v int64) message {
	return message{batch: &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.BigIntValue(v)}}}}}
}

// next returns the union's next output as text, failing after a deadline.
func (h *unionHarness) next() string {
	h.t.Helper()
	select {
	case m, open := <-h.out:
		if !open {
			return "closed"
		}
		switch m.kind {
		case msgBatch:
			return fmt.Sprintf("row %d", m.batch.Changes[0].Row[0].Int64())
		case msgWatermark:
			return fmt.Sprintf("wm %d", m.watermark)
		case msgBarrier:
			return fmt.Sprintf("barrier %d", m.barrier)
		case msgEnd:
			return fmt.Sprintf("end stop=%v", m.stop)
		}
	case <-time.After(5 * time.Second):
		h.t.Fatal("no output from the union within 5s")
	}
	return ""
}

// quiet asserts that the union sends nothing more for a while: what it
// holds back stays held.
func (h *unionHarness) quiet() {
	h.t.Helper()
	select {
	case m := <-h.out:
		h.t.Fatalf("union sent %+v while it should hold its inputs back", m)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestUnionAlignsBarriers(t *testing.T) {
	h := newUnionHarness(t, 2)
	h.ins[0] <- oneRow(1)
	h.ins[0] <- message{kind: msgBarrier, barrier: 1}
	h.ins[0] <- oneRow(2) // after the barrier: must wait for it
	if got := h.next(); got != "row 1" {
		t.Fatalf("first output %q, want row 1", got)
	}
	h.quiet()
	h.ins[1] <- oneRow(10)
	h.ins[1] <- message{kind: msgBarrier, barrier: 1}
	h.ins[1] <- oneRow(11)
	var got []string
	for range 4 {
		got = append(got, h.next())
	}
	if got[0] != "row 10" || got[1] != "barrier 1" {
		t.Fatalf("outputs %q: want row 10, then barrier 1 before any row sent after it", got)
	}
	rest := got[2:]
	slices.Sort(rest)
	if !slices.Equal(rest, []string{"row 11", "row 2"}) {
		t.Fatalf("after the barrier got %q, want rows 2 and 11", rest)
	}
	select {
	case r := <-h.co.reports:
		if r.id != 1 || r.ended {
			t.Fatalf("report %+v, want barrier 1", r)
		}
	default:
		t.Fatal("the union did not report barrier 1")
	}
	// Input 0 was held for the quiet 100 ms at least: the checkpoint's
	// alignment.
	log := &h.co.g.CheckpointLog
	log.mu.Lock()
	aligned := log.aligning[1]
	log.mu.Unlock()
	if aligned < 100*time.Millisecond || aligned > time.Minute {
		t.Errorf("barrier 1 aligned in %v, want the 100 ms input 0 was held", aligned)
	}
	// An input that ends while a barrier waits on it no longer holds it.
	h.ins[0] <- message{kind: msgBarrier, barrier: 2}
	h.quiet()
	close(h.ins[1])
	if got := h.next(); got != "barrier 2" {
		t.Fatalf("got %q, want barrier 2 once the other input ended", got)
	}
	h.ins[0] <- message{kind: msgEnd}
	close(h.ins[0])
	for _, want := range []string{"end stop=false", "closed"} {
		if got := h.next(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if err := <-h.done; err != nil {
		t.Fatal(err)
	}
}

func TestUnionWatermarkIsMinimum(t *testing.T) {
	h := newUnionHarness(t, 3)
	wm := func(i int, v int64) { h.ins[i] <- message{kind: msgWatermark, watermark: v} }
	wm(0, 10)
	wm(1, 5)
	h.quiet() // input 2 has no watermark yet
	wm(2, 7)
	if got := h.next(); got != "wm 5" {
		t.Fatalf("got %q, want wm 5", got)
	}
	wm(0, 20)
	wm(1, 4) // a watermark never goes back
	h.quiet()
	wm(1, 30)
	if got := h.next(); got != "wm 7" {
		t.Fatalf("got %q, want wm 7 (input 2 holds it)", got)
	}
	h.ins[2] <- message{kind: msgEnd}
	close(h.ins[2])
	if got := h.next(); got != "wm 20" {
		t.Fatalf("got %q, want wm 20 once input 2 ended", got)
	}
	// A stopped input goes on holding the watermark: it resumes from the
	// checkpoint with rows at its watermark, which must not be late then.
	h.ins[0] <- message{kind: msgEnd, stop: true}
	close(h.ins[0])
	h.quiet()
	close(h.ins[1])
	for _, want := range []string{"end stop=true", "closed"} {
		if got := h.next(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if err := <-h.done; err != nil {
		t.Fatal(err)
	}
	var last report
	for len(h.co.reports) > 0 {
		last = <-h.co.reports
	}
	if !last.ended || last.finished {
		t.Fatalf("final report %+v: want ended, not finished (an input stopped)", last)
	}
}

// unionCountGraph is two feeds -> UNION ALL -> GROUP BY key COUNT(*),
// SUM(v) -> sink.
func unionCountGraph(a, b *feedSource, sink *logSink) *Graph {
	g := &Graph{Name: "t"}
	sa := &SourceNode{Node: Node{Name: "a", Kind: "source", Fingerprint: "feed"}, Source: a}
	sb := &SourceNode{Node: Node{Name: "b", Kind: "source", Fingerprint: "feed"}, Source: b}
	u := &UnionNode{Node: Node{Name: "union", Kind: "transform"}, Inputs: []*Node{&sa.Node, &sb.Node}}
	agg := optest.Must(aggop.NewGroupAgg([]int{0}, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 1, ArgType: optest.TBigInt}}, aggop.GroupAggOptions{}))
	op := &OpNode{Node: Node{Name: "agg", Kind: "transform", Fingerprint: "count"}, Input: &u.Node, Op: agg}
	g.Sources = []*SourceNode{sa, sb}
	g.Unions = []*UnionNode{u}
	g.Ops = []*OpNode{op}
	g.Sinks = []*SinkNode{{Node: Node{Name: "out", Kind: "sink", Fingerprint: "log"}, Input: &op.Node, Sink: sink, Mode: connector.Retract}}
	return g
}

// A run killed after a checkpoint taken through a union resumes from it:
// the sink's rows up to the checkpoint plus the resumed run's rows give
// exactly the table of all input, each row counted once.
func TestUnionCheckpointRestore(t *testing.T) {
	store, err := checkpoint.Open(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	sink := &logSink{ev: ev, store: store}
	a := &feedSource{ev: ev, feed: make(chan int64, 20)}
	b := &feedSource{ev: ev, feed: make(chan int64, 20)}
	for v := range int64(10) {
		a.feed <- v
		b.feed <- 100 + v
	}
	g := unionCountGraph(a, b, sink)
	kill := runUntilCheckpointed(t, g, store, 20)
	kill()
	cp, err := store.Latest()
	if err != nil || cp == nil {
		t.Fatalf("no checkpoint stored: %v", err)
	}
	var kept int64 = -1
	for _, c := range cp.Components {
		if c.ID == "sink/out" {
			kept, _ = binary.Varint(c.Connector)
		}
	}
	if kept <= 0 {
		t.Fatalf("checkpoint %d has no sink position", cp.ID)
	}

	ev2 := &events{}
	sink2 := &logSink{ev: ev2, store: store}
	a2 := &feedSource{ev: ev2, feed: make(chan int64, 20), bounded: 20}
	b2 := &feedSource{ev: ev2, feed: make(chan int64, 20), bounded: 20}
	for v := range int64(10) {
		a2.feed <- 10 + v
		b2.feed <- 110 + v
	}
	g2 := unionCountGraph(a2, b2, sink2)
	start(g2, Options{Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}}).wait(t)
	if !slices.Contains(ev2.list(), "source restore 10") {
		t.Fatalf("sources not restored at 10: %q", ev2.list())
	}

	rows := append(slices.Clone(sink.rows[:kept]), sink2.rows...)
	table := map[string]string{}
	for _, r := range rows {
		key, _, _ := strings.Cut(r[3:], ",")
		switch r[:2] {
		case "+I", "+U":
			table[key] = r[2:]
		default:
			delete(table, key)
		}
	}
	want := map[string]string{}
	count, sum := map[int64]int64{}, map[int64]int64{}
	for v := range int64(20) {
		for _, x := range []int64{v, 100 + v} {
			count[x%3]++
			sum[x%3] += x
		}
	}
	for k := range count {
		want[fmt.Sprint(k)] = fmt.Sprintf("[%d, %d, %d]", k, count[k], sum[k])
	}
	if !maps.Equal(table, want) {
		t.Errorf("final table %v, want %v", table, want)
	}
}

// TestUnionNamesItsInputsApart: a batch passed on from input i names
// each record's input "<i>:<name>", so that two inputs reading one
// source stay apart for a sink following each input's records in order;
// errors still name the record itself, and the batch its input's other
// readers hold is left as it was.
func TestUnionNamesItsInputsApart(t *testing.T) {
	h := newUnionHarness(t, 2)
	var sent []*row.Batch
	for i := range 2 {
		m := oneRow(int64(i))
		pos := row.NewPositions(1, ":")
		pos.Mark(1, "orders.csv", 7)
		m.batch.Origin = pos
		sent = append(sent, m.batch)
		h.ins[i] <- m
		got := <-h.out
		ro, ok := got.batch.Origin.(row.RecordOrigin)
		if !ok {
			t.Fatalf("input %d: the union's batch gives no records", i)
		}
		name, num, ok := ro.Record(0)
		if want := fmt.Sprintf("%d:orders.csv", i); name != want || num != 7 || !ok {
			t.Errorf("input %d: record %q %d %v, want %q 7", i, name, num, ok, want)
		}
		if p := got.batch.Origin.Position(0); p != "orders.csv:7" {
			t.Errorf("input %d: position %q, want orders.csv:7", i, p)
		}
	}
	for i, b := range sent {
		if name, _, _ := b.Origin.(row.RecordOrigin).Record(0); name != "orders.csv" {
			t.Errorf("input %d's own batch now names %q", i, name)
		}
	}
}

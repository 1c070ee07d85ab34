package runtime

import (
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// tenWindows appends window_start and window_end of the 10 ms window
// holding a feed row's value (its time in ms), as a TUMBLE TVF would: a
// window fires at its last millisecond.
type tenWindows struct{}

func (tenWindows) Process(in *row.Batch, out operator.Emitter) error {
	for _, c := range in.Changes {
		start := c.Row[1].Int64() / 10 * 10_000
		out.Emit(c.Kind, append(slices.Clone(c.Row), row.TimestampValue(start), row.TimestampValue(start+10_000)))
	}
	return nil
}
func (tenWindows) Watermark(int64, operator.Emitter) error { return nil }
func (tenWindows) Finish(operator.Emitter) error           { return nil }

// windowJoinFeedGraph is two feeds (watermark: the largest value read, in
// ms, less a delay of 1 ms)
// -> windows -> union -> inner window join on the key column -> sink.
func windowJoinFeedGraph(a, b *feedSource, sink *logSink) *Graph {
	g := &Graph{Name: "t"}
	at := func(r row.Row) (int64, bool, error) { return r[1].Int64()*1000 - 1000, true, nil }
	sa := &SourceNode{Node: Node{Name: "a", Kind: "source", Fingerprint: "feed"}, Source: a, EventTime: at}
	sb := &SourceNode{Node: Node{Name: "b", Kind: "source", Fingerprint: "feed"}, Source: b, EventTime: at}
	wa := &OpNode{Node: Node{Name: "wa", Kind: "transform", Fingerprint: "windows"}, Input: &sa.Node, Op: tenWindows{}}
	wb := &OpNode{Node: Node{Name: "wb", Kind: "transform", Fingerprint: "windows"}, Input: &sb.Node, Op: tenWindows{}}
	u := &UnionNode{Node: Node{Name: "inputs", Kind: "transform"}, Inputs: []*Node{&wa.Node, &wb.Node}}
	j := joinop.NewWindowJoin(joinop.WindowJoinSpec{Kind: joinop.InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 4, RightWidth: 4,
		LeftStart: 2, LeftEnd: 3, RightStart: 2, RightEnd: 3})
	op := &OpNode{Node: Node{Name: "join", Kind: "transform", Fingerprint: "window join"}, Input: &u.Node, Op: j}
	g.Sources = []*SourceNode{sa, sb}
	g.Unions = []*UnionNode{u}
	g.Ops = []*OpNode{wa, wb, op}
	g.Sinks = []*SinkNode{{Node: Node{Name: "out", Kind: "sink", Fingerprint: "log"}, Input: &op.Node, Sink: sink, Mode: connector.Append}}
	return g
}

// A run killed after a checkpoint taken while a window is open resumes
// with the window's rows: the resumed run emits the window's join when
// the watermark passes its end, and the next window's at the end of
// input, exactly the window join of all input.
func TestWindowJoinCheckpointRestore(t *testing.T) {
	store, err := checkpoint.Open(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	sink := &logSink{ev: ev, store: store}
	a := &feedSource{ev: ev, feed: make(chan int64, 20)}
	b := &feedSource{ev: ev, feed: make(chan int64, 20)}
	for v := range int64(10) { // all in window [0, 10), which stays open
		a.feed <- v
		b.feed <- v
	}
	g := windowJoinFeedGraph(a, b, sink)
	kill := runUntilCheckpointed(t, g, store, 20)
	if n := g.Ops[2].Stats.StateEntries.Load(); n != 20 {
		t.Errorf("window join state entries %d, want the open window's 20 rows", n)
	}
	kill()
	if len(sink.rows) != 0 {
		t.Fatalf("the open window emitted before its end: %q", sink.rows)
	}

	ev2 := &events{}
	sink2 := &logSink{ev: ev2, store: store}
	a2 := &feedSource{ev: ev2, feed: make(chan int64, 20), bounded: 20}
	b2 := &feedSource{ev: ev2, feed: make(chan int64, 20), bounded: 20}
	for v := range int64(10) {
		a2.feed <- 10 + v
		b2.feed <- 10 + v
	}
	g2 := windowJoinFeedGraph(a2, b2, sink2)
	start(g2, Options{Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}}).wait(t)

	got := optest.FoldChanges(t, sink2.rows)
	var want []string
	for x := range int64(20) {
		for y := range int64(20) {
			if x/10 == y/10 && x%3 == y%3 {
				w := []row.Value{row.TimestampValue(x / 10 * 10_000), row.TimestampValue(x/10*10_000 + 10_000)}
				r := append(append(row.Row{row.BigIntValue(x % 3), row.BigIntValue(x)}, w...), row.BigIntValue(y%3), row.BigIntValue(y), w[0], w[1])
				want = append(want, row.Change{Kind: row.Insert, Row: r}.String()[2:])
			}
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the resumed run's table:\n got %q\nwant %q", got, want)
	}
}

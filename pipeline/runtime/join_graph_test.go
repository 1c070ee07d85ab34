package runtime

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// joinFeedGraph is two feeds -> union (their sides) -> LEFT JOIN on the
// feeds' key column -> sink, as plan.Graph wires a join.
func joinFeedGraph(a, b *feedSource, sink *logSink) *Graph {
	g := &Graph{Name: "t"}
	sa := &SourceNode{Node: Node{Name: "a", Kind: "source", Fingerprint: "feed"}, Source: a}
	sb := &SourceNode{Node: Node{Name: "b", Kind: "source", Fingerprint: "feed"}, Source: b}
	u := &UnionNode{Node: Node{Name: "inputs", Kind: "transform"}, Inputs: []*Node{&sa.Node, &sb.Node}}
	j := joinop.NewJoin(joinop.JoinSpec{Kind: joinop.LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
		Residual: func(r row.Row) (bool, error) { return r[1].Int64()%2 == 0 || r[3].Int64() > 104, nil }})
	op := &OpNode{Node: Node{Name: "join", Kind: "transform", Fingerprint: "join"}, Input: &u.Node, Op: j}
	g.Sources = []*SourceNode{sa, sb}
	g.Unions = []*UnionNode{u}
	g.Ops = []*OpNode{op}
	g.Sinks = []*SinkNode{{Node: Node{Name: "out", Kind: "sink", Fingerprint: "log"}, Input: &op.Node, Sink: sink, Mode: connector.Retract}}
	return g
}

// A run killed after a checkpoint taken through a join resumes from it:
// the sink's changes up to the checkpoint plus the resumed run's fold to
// exactly the left join of all input.
func TestJoinCheckpointRestore(t *testing.T) {
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
	g := joinFeedGraph(a, b, sink)
	kill := runUntilCheckpointed(t, g, store, 20)
	if g.Ops[0].Stats.StateEntries.Load() != 20 {
		t.Errorf("join state entries %d, want 20 rows", g.Ops[0].Stats.StateEntries.Load())
	}
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
	g2 := joinFeedGraph(a2, b2, sink2)
	start(g2, Options{Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}}).wait(t)

	got := optest.FoldChanges(t, append(slices.Clone(sink.rows[:kept]), sink2.rows...))
	var want []string
	for x := range int64(20) {
		n := 0
		for y := int64(100); y < 120; y++ {
			if x%3 == y%3 && (x%2 == 0 || y > 104) {
				want = append(want, fmt.Sprintf("[%d, %d, %d, %d]", x%3, x, y%3, y))
				n++
			}
		}
		if n == 0 {
			want = append(want, fmt.Sprintf("[%d, %d, null, null]", x%3, x))
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("final table after the restore:\n got %q\nwant %q", got, want)
	}
}

package runtime

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
)

// signalSource is a feedSource that closes read once it has read after
// rows, and may say it is unbounded while it still ends at bounded rows
// (a file the runtime treats as a stream, so that it takes barriers
// while it waits for its feed).
type signalSource struct {
	feedSource
	after     int64
	read      chan struct{}
	once      sync.Once
	unbounded bool
}

func (s *signalSource) Bounded() bool { return !s.unbounded && s.feedSource.Bounded() }
func (s *signalSource) Read(ctx context.Context, max int) (*row.Batch, error) {
	b, err := s.feedSource.Read(ctx, max)
	if s.read != nil && s.feedSource.read >= s.after {
		s.once.Do(func() { close(s.read) })
	}
	return b, err
}

// buildJoinGraph is probe (left) and build (right) -> union reading the
// build input first -> LEFT JOIN on the key column -> sink.
func buildJoinGraph(probe, build connector.Source, sink *logSink) *Graph {
	return buildJoinGraphOf(probe, build, sink, joinop.JoinSpec{Kind: joinop.LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2})
}

// hashJoinSpec is buildJoinGraph's join as the planner makes it in batch
// execution over insert-only inputs: a hash join whose right rows are
// in its probe table alone.
var hashJoinSpec = joinop.JoinSpec{Kind: joinop.LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
	LeftTypes: []row.TypeID{row.BigInt, row.BigInt}, RightTypes: []row.TypeID{row.BigInt, row.BigInt},
	LeftAppendOnly: true, RightAppendOnly: true, Batch: true, RightFirst: true}

// buildJoinGraphOf is buildJoinGraph with the join of spec.
func buildJoinGraphOf(probe, build connector.Source, sink *logSink, spec joinop.JoinSpec) *Graph {
	g := &Graph{Name: "t"}
	sa := &SourceNode{Node: Node{Name: "probe", Kind: "source", Fingerprint: "feed"}, Source: probe}
	sb := &SourceNode{Node: Node{Name: "build", Kind: "source", Fingerprint: "feed"}, Source: build}
	u := &UnionNode{Node: Node{Name: "inputs", Kind: "transform"}, Inputs: []*Node{&sa.Node, &sb.Node}, BuildFirst: true, Build: 1}
	j := joinop.NewJoin(spec)
	op := &OpNode{Node: Node{Name: "join", Kind: "transform", Fingerprint: "join"}, Input: &u.Node, Op: j}
	g.Sources = []*SourceNode{sa, sb}
	g.Unions = []*UnionNode{u}
	g.Ops = []*OpNode{op}
	g.Sinks = []*SinkNode{{Node: Node{Name: "out", Kind: "sink", Fingerprint: "log"}, Input: &op.Node, Sink: sink, Mode: connector.Retract}}
	return g
}

// The build input's rows reach the join before any probe row, although
// the probe input is read first (its rows are all there at the start,
// the build input's only once the probe has read three): the LEFT JOIN
// emits no NULL-padded row to retract later, and the same changelog in
// every run.
func TestJoinReadsBuildInputFirst(t *testing.T) {
	var first []string
	for run := range 20 {
		ev := &events{}
		sink := &logSink{ev: ev}
		probe := &signalSource{feedSource: feedSource{ev: ev, feed: make(chan int64, 10), bounded: 10}, after: 3, read: make(chan struct{})}
		build := &feedSource{ev: ev, feed: make(chan int64, 6), bounded: 6}
		for v := range int64(10) {
			probe.feed <- v
		}
		go func() {
			<-probe.read
			for v := range int64(6) {
				build.feed <- 100 + v
			}
		}()
		start(buildJoinGraph(probe, build, sink), Options{}).wait(t)
		for _, r := range sink.rows {
			if !strings.HasPrefix(r, "+I") || strings.Contains(r, "null") {
				t.Fatalf("run %d: change %s: the probe rows were joined before the build input ended:\n%s", run, r, strings.Join(sink.rows, "\n"))
			}
		}
		if len(sink.rows) != 20 {
			t.Fatalf("run %d: %d rows, want 20 (each probe row matches two build rows)", run, len(sink.rows))
		}
		if run == 0 {
			first = slices.Clone(sink.rows)
		} else if !slices.Equal(sink.rows, first) {
			t.Fatalf("run %d changelog differs from run 0:\n%q\n%q", run, sink.rows, first)
		}
	}
}

// A checkpoint taken while the build input is still being read keeps
// the probe rows the union read to align the barrier; the restored run
// joins them once the build input ends, with no NULL-padded row. The
// same with the batch hash join whose right rows are in its probe table
// alone: the checkpoint holds the build rows read so far.
func TestJoinBuildFirstRestoreMidBuild(t *testing.T) {
	t.Run("streaming-join", func(t *testing.T) { testRestoreMidBuild(t, buildJoinGraph) })
	t.Run("hash-join", func(t *testing.T) {
		testRestoreMidBuild(t, func(probe, build connector.Source, sink *logSink) *Graph {
			return buildJoinGraphOf(probe, build, sink, hashJoinSpec)
		})
	})
}

func testRestoreMidBuild(t *testing.T, buildJoinGraph func(probe, build connector.Source, sink *logSink) *Graph) {
	store, err := checkpoint.Open(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	sink := &logSink{ev: ev, store: store}
	probe := &feedSource{ev: ev, feed: make(chan int64, 10)}
	build := &signalSource{feedSource: feedSource{ev: ev, feed: make(chan int64, 10), bounded: 10}, unbounded: true}
	for v := range int64(10) {
		probe.feed <- v
	}
	for v := range int64(5) {
		build.feed <- 100 + v
	}
	g := buildJoinGraph(probe, build, sink)
	kill := runUntilCheckpointed(t, g, store, 15)
	kill()
	if len(sink.rows) != 0 {
		t.Fatalf("the join emitted before its build input ended: %q", sink.rows)
	}
	cp, err := store.Latest()
	if err != nil || cp == nil {
		t.Fatalf("no checkpoint stored: %v", err)
	}
	held := false
	for _, c := range cp.Components {
		if c.ID == "union/inputs/0" && len(c.Runtime) > 1 {
			held = true
		}
		if c.ID == "source/build" {
			if n, _ := binary.Varint(c.Connector); n != 5 {
				t.Fatalf("checkpoint %d: build input at %d, want 5 (still being read)", cp.ID, n)
			}
		}
	}
	if !held {
		t.Fatalf("checkpoint %d keeps no held probe rows: %+v", cp.ID, cp.Components)
	}

	ev2 := &events{}
	sink2 := &logSink{ev: ev2, store: store}
	probe2 := &feedSource{ev: ev2, feed: make(chan int64, 10), bounded: 10}
	build2 := &feedSource{ev: ev2, feed: make(chan int64, 10), bounded: 10}
	for v := range int64(5) {
		build2.feed <- 105 + v
	}
	start(buildJoinGraph(probe2, build2, sink2), Options{Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}}).wait(t)
	var want []string
	for x := range int64(10) {
		for y := int64(100); y < 110; y++ {
			if x%3 == y%3 {
				want = append(want, fmt.Sprintf("+I[%d, %d, %d, %d]", x%3, x, y%3, y))
			}
		}
	}
	got := slices.Clone(sink2.rows)
	for _, r := range got {
		if !strings.HasPrefix(r, "+I") {
			t.Fatalf("restored run emitted %s:\n%s", r, strings.Join(got, "\n"))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("restored run:\n got %q\nwant %q", got, want)
	}
}

// One source read on both sides of a join would deadlock if the probe
// side were held back (the source waits on the held channel and never
// ends the build side): reading the build input first is turned off for
// that join, and the run ends. A chain of enrichments (a stream joined
// with one dimension, the result with another) keeps it on for both.
func TestBuildFirstOffWhenInputsShareASource(t *testing.T) {
	ev := &events{}
	sink := &logSink{ev: ev}
	src := &feedSource{ev: ev, feed: make(chan int64, 10), bounded: 10}
	for v := range int64(10) {
		src.feed <- v
	}
	g := buildJoinGraph(src, src, sink)
	// Both sides read the one source node.
	g.Unions[0].Inputs[1] = g.Unions[0].Inputs[0]
	g.Sources = g.Sources[:1]
	start(g, Options{}).wait(t)
	if g.Unions[0].BuildFirst {
		t.Fatal("the join still reads its build input first")
	}
	if len(sink.rows) == 0 {
		t.Fatal("no rows joined")
	}

	stream := &SourceNode{Node: Node{Name: "stream"}}
	dim1 := &SourceNode{Node: Node{Name: "dim1"}}
	dim2 := &SourceNode{Node: Node{Name: "dim2"}}
	u1 := &UnionNode{Node: Node{Name: "j1"}, Inputs: []*Node{&stream.Node, &dim1.Node}, BuildFirst: true, Build: 1}
	j1 := &OpNode{Node: Node{Name: "join1"}, Input: &u1.Node}
	u2 := &UnionNode{Node: Node{Name: "j2"}, Inputs: []*Node{&j1.Node, &dim2.Node}, BuildFirst: true, Build: 1}
	// A third join builds from dim1 and holds dim2 back, while the
	// second builds from dim2 and holds back the first's output, which
	// waits for dim1: each waits for the other.
	u3 := &UnionNode{Node: Node{Name: "j3"}, Inputs: []*Node{&dim2.Node, &dim1.Node}, BuildFirst: true, Build: 1}
	chain := &Graph{Sources: []*SourceNode{stream, dim1, dim2}, Unions: []*UnionNode{u1, u2}, Ops: []*OpNode{j1}}
	if off := chain.DisableDeadlockingBuilds(nil); len(off) != 0 {
		t.Errorf("a chain of enrichments turned off %v", off)
	}
	chain.Unions = append(chain.Unions, u3)
	if off := chain.DisableDeadlockingBuilds(nil); len(off) != 1 {
		t.Errorf("a cycle of two joins holding inputs back: turned off %v, want one of them", off)
	}
}

// A batch hash join relies on its right input's rows all coming first
// (joinop.JoinSpec.RightFirst): when both inputs read one source, its
// union (Strict) keeps the left input's rows in memory until the right
// input has ended instead of reading both at once. Each of the source's
// ten one-row batches is a left row, joined with every row of its key
// (v % 3): none padded with NULLs, none missing.
func TestStrictBuildKeepsProbeRowsOfASharedSource(t *testing.T) {
	for run := range 10 {
		ev := &events{}
		sink := &logSink{ev: ev}
		src := &feedSource{ev: ev, feed: make(chan int64, 10), bounded: 10}
		for v := range int64(10) {
			src.feed <- v
		}
		g := buildJoinGraph(src, src, sink)
		g.Unions[0].Inputs[1] = g.Unions[0].Inputs[0]
		g.Unions[0].Strict = true
		g.Sources = g.Sources[:1]
		g.Ops[0].Op = joinop.NewJoin(joinop.JoinSpec{Kind: joinop.LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
			LeftAppendOnly: true, RightAppendOnly: true, Batch: true, RightFirst: true})
		start(g, Options{}).wait(t)
		if !g.Unions[0].BuildFirst {
			t.Fatal("the strict union stopped reading its build input first")
		}
		var want []string
		for l := range int64(10) {
			for r := range int64(10) {
				if l%3 == r%3 {
					want = append(want, fmt.Sprintf("+I[%d, %d, %d, %d]", l%3, l, r%3, r))
				}
			}
		}
		got := slices.Clone(sink.rows)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("run %d: got\n%s\nwant\n%s", run, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

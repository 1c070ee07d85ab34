package runtime

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// A processing-time window fires on the node's tick once the clock has
// passed its end, with no input after its rows: nothing else would
// close it on a quiet stream.
func TestProcWindowFiresOnTheTickWhileQuiet(t *testing.T) {
	var ms atomic.Int64 // the clock: ms after 2023-11-14 22:13:20 UTC
	now := func() time.Time { return time.UnixMilli(1_700_000_000_000 + ms.Load()) }
	w := windowop.WindowSpec{Kind: windowop.Tumble, Size: 10_000_000, TimeCol: 1, ProcTime: true}
	agg := optest.Must(windowop.NewProcWindowAgg(w, []int{0}, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}, windowop.WindowOptions{}, now))
	ev := &events{}
	sink := &logSink{ev: ev}
	src := &feedSource{ev: ev, feed: make(chan int64, 10)}
	g := &Graph{Name: "t"}
	sn := &SourceNode{Node: Node{Name: "src", Kind: "source", Fingerprint: "feed"}, Source: src}
	op := &OpNode{Node: Node{Name: "win", Kind: "transform", Fingerprint: "win"}, Input: &sn.Node, Op: agg}
	g.Sources, g.Ops = []*SourceNode{sn}, []*OpNode{op}
	g.Sinks = []*SinkNode{{Node: Node{Name: "out", Kind: "sink", Fingerprint: "log"}, Input: &op.Node, Sink: sink, Mode: connector.Append}}
	stop := make(chan struct{})
	run := start(g, Options{Stop: stop})
	src.feed <- 1
	src.feed <- 4
	src.feed <- 2
	testenv.Eventually(t, 10*time.Second, "3 rows counted", func() error {
		if n := op.Stats.StateEntries.Load(); n != 2 {
			return fmt.Errorf("%d groups", n)
		}
		return nil
	})
	sink.mu.Lock()
	early := slices.Clone(sink.rows)
	sink.mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("the window fired before the clock reached its end: %q", early)
	}
	ms.Store(9_999) // the window's timer: end - 1 ms
	want := []string{
		"+I[1, 2023-11-14T22:13:20, 2023-11-14T22:13:30, 2023-11-14T22:13:29.999Z, 2]",
		"+I[2, 2023-11-14T22:13:20, 2023-11-14T22:13:30, 2023-11-14T22:13:29.999Z, 1]",
	}
	testenv.Eventually(t, 10*time.Second, "the window fired by the tick", func() error {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		if !slices.Equal(sink.rows, want) {
			return fmt.Errorf("sink rows %q", sink.rows)
		}
		return nil
	})
	close(stop)
	run.wait(t)
}

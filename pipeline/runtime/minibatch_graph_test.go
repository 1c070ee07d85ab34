package runtime

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/runtime/aggop"
)

// A mini-batch that neither its size nor its latency would flush is
// flushed by the checkpoint barrier (before the operator's snapshot, so
// the sink's snapshot holds the changes the state already counts), and by
// a stop; with a short latency, the timer flushes an idle stream.
func TestMiniBatchFlushesAtBarriersStopAndLatency(t *testing.T) {
	held := aggop.GroupAggOptions{MiniBatch: true, MiniBatchSize: 1 << 30, MiniBatchLatency: time.Hour}
	t.Run("barrier and stop", func(t *testing.T) {
		store, _ := checkpoint.Open(t.TempDir(), "t")
		ev := &events{}
		sink := &logSink{ev: ev, store: store}
		src := &feedSource{ev: ev, feed: make(chan int64, 10)}
		g := countGraphWith(src, sink, held)
		stop := make(chan struct{})
		run := start(g, Options{Stop: stop, Checkpoint: CheckpointOptions{Interval: 5 * time.Millisecond, Store: store}})
		src.feed <- 1
		src.feed <- 4 // same key 1: folds into one +I
		testenv.Eventually(t, 10*time.Second, "a checkpoint's snapshot with the folded row", func() error {
			if !slices.Contains(ev.list(), "sink snapshot 1") {
				return fmt.Errorf("events %q", ev.list())
			}
			return nil
		})
		src.feed <- 2
		testenv.Eventually(t, 10*time.Second, "3 rows read", func() error {
			if n := g.Sources[0].Stats.RowsIn.Load(); n != 3 {
				return fmt.Errorf("%d rows", n)
			}
			return nil
		})
		close(stop)
		run.wait(t)
		if want := []string{"+I[1, 2, 5]", "+I[2, 1, 2]"}; !slices.Equal(sink.rows, want) {
			t.Errorf("sink got %q, want %q", sink.rows, want)
		}
	})
	t.Run("latency", func(t *testing.T) {
		ev := &events{}
		sink := &logSink{ev: ev}
		src := &feedSource{ev: ev, feed: make(chan int64, 10)}
		opt := held
		opt.MiniBatchLatency = 10 * time.Millisecond
		g := countGraphWith(src, sink, opt)
		stop := make(chan struct{})
		run := start(g, Options{Stop: stop})
		src.feed <- 1
		testenv.Eventually(t, 10*time.Second, "the timer's flush", func() error {
			sink.mu.Lock()
			defer sink.mu.Unlock()
			if len(sink.rows) != 1 {
				return fmt.Errorf("sink rows %q", sink.rows)
			}
			return nil
		})
		close(stop)
		run.wait(t)
	})
}

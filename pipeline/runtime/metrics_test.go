package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// gateSink's first Write waits until release is closed, as a target
// that hangs; its Writes fail first failures times, each retried.
type gateSink struct {
	memSink
	release  chan struct{}
	held     atomic.Bool
	failures int
}

func (s *gateSink) Write(ctx context.Context, b *row.Batch) error {
	if s.held.CompareAndSwap(false, true) {
		<-s.release
	}
	return retry.Do(ctx, retry.Backoff{Initial: time.Millisecond, Max: time.Millisecond}, nil, "write", func(context.Context) error {
		if s.failures > 0 {
			s.failures--
			return errors.New("target away")
		}
		return s.memSink.Write(ctx, b)
	})
}

// A sink that hangs shows as a call under way, then as its busy time and
// one slow write; the source and the operator before it, whose channels
// are full, show the same wait as backpressure, not as busy time.
func TestBusyAndBackpressureOfAHangingSink(t *testing.T) {
	pass := &Calc{Filter: func(row.Row) (bool, error) { return true, nil }}
	sink := &gateSink{release: make(chan struct{}), failures: 3}
	g := graph(&seqSource{n: 70}, pass, nil)
	g.Sinks[0].Sink = sink
	g.ChannelSize = 1
	src, op, sn := g.Sources[0], g.Ops[0], g.Sinks[0]
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), g, Options{}) }()

	// Batches of 7: the sink holds the 1st in Write, its channel the
	// 2nd, the operator is sending the 3rd, its channel holds the 4th,
	// and the source is sending the 5th.
	testenv.Eventually(t, 10*time.Second, "the source blocked", func() error {
		if n := src.Stats.RowsOut.Load(); n != 35 {
			return fmt.Errorf("source sent %d rows", n)
		}
		return nil
	})
	const hang = 300 * time.Millisecond
	from := sn.PendingCall(time.Now())
	testenv.Eventually(t, 10*time.Second, "the write hanging", func() error {
		if p := sn.PendingCall(time.Now()); p < from+hang {
			return fmt.Errorf("write under way for %v", p)
		}
		return nil
	})
	close(sink.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(sink.changes) != 70 {
		t.Fatalf("sink got %d rows", len(sink.changes))
	}
	if p := sn.PendingCall(time.Now()); p != 0 {
		t.Errorf("a call still under way after the run: %v", p)
	}
	if b := time.Duration(sn.Stats.Busy.Load()); b < hang {
		t.Errorf("sink busy %v, want at least the hang %v", b, hang)
	}
	w := sn.Writes.Snapshot()
	if w.Count != 10 || w.Quantile(1) < hang.Seconds() {
		t.Errorf("writes: %d, the slowest up to %vs; want 10, one above %v", w.Count, w.Quantile(1), hang)
	}
	if sn.Flushes.Snapshot().Count == 0 {
		t.Error("no flush timed")
	}
	if r := sn.Stats.Retries.Load(); r != 3 {
		t.Errorf("sink retries %d, want 3", r)
	}
	// Each was blocked before the hang was timed, give or take the
	// moment between counting its rows and sending them.
	for _, n := range []*Node{&src.Node, &op.Node} {
		bp, busy := time.Duration(n.Stats.Backpressure.Load()), time.Duration(n.Stats.Busy.Load())
		if bp < hang-50*time.Millisecond || busy >= bp {
			t.Errorf("%s: backpressure %v, busy %v; want the hang (%v) as backpressure, less busy", n.Name, bp, busy, hang)
		}
	}
}

package runtime

import (
	"context"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// What a run measures beyond counting rows: watermarks, and where its
// time goes. Busy time and backpressure are taken per message (a batch,
// a watermark, a barrier), never per row: two clock reads a batch, and a
// third only when a send finds its channel full.

// setWatermark stores the node's watermark, and as its data's watermark
// unless it is none or the end of a bounded input.
func (s *Stats) setWatermark(wm int64) {
	s.Watermark.Store(wm)
	if wm != operator.MaxWatermark && wm != operator.NoWatermark {
		s.dataWM.Store(wm)
		s.hasDataWM.Store(true)
	}
}

// DataWatermark is the highest watermark that came from the node's data
// (in microseconds; ok false before the first), which stays when the end
// of a bounded input sends the watermark to MaxWatermark; ended says it
// did.
func (s *Stats) DataWatermark() (wm int64, ok, ended bool) {
	if !s.hasDataWM.Load() {
		return 0, false, false
	}
	return s.dataWM.Load(), true, s.Watermark.Load() == operator.MaxWatermark
}

// sendTo hands m to ch, counting the time it waited for room as
// backpressure.
func (n *Node) sendTo(ctx context.Context, ch chan message, m message) error {
	select {
	case ch <- m:
		return nil
	default:
	}
	start := time.Now()
	defer func() { n.Stats.Backpressure.Add(int64(time.Since(start))) }()
	select {
	case ch <- m:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// busyClock times one piece of a node's work: the time since start less
// the backpressure met meanwhile is busy time.
type busyClock struct {
	start   time.Time
	blocked int64
}

func (n *Node) startBusy() busyClock {
	return busyClock{start: time.Now(), blocked: n.Stats.Backpressure.Load()}
}

// stopBusy adds the work's busy time, less skip (time it waited for
// something else than its output, such as an unbounded source's Read).
func (n *Node) stopBusy(c busyClock, skip time.Duration) {
	d := time.Since(c.start) - time.Duration(n.Stats.Backpressure.Load()-c.blocked) - skip
	if d > 0 {
		n.Stats.Busy.Add(int64(d))
	}
}

// waiting is the part of a Read that took reading which was not work: all
// of it for an unbounded source, whose Read waits for new records.
func (s *SourceNode) waiting(reading time.Duration) time.Duration {
	if s.Source.Bounded() {
		return 0
	}
	return reading
}

// write and flush call the sink's Write and Flush, timed (busy time,
// and the latency histograms).
func (n *SinkNode) write(ctx context.Context, b *row.Batch) error {
	start := n.beginCall()
	err := n.Sink.Write(ctx, b)
	n.endCall(&n.Writes, start)
	return err
}

func (n *SinkNode) flush(ctx context.Context) error {
	start := n.beginCall()
	err := n.Sink.Flush(ctx)
	n.endCall(&n.Flushes, start)
	return err
}

func (n *SinkNode) beginCall() time.Time {
	start := time.Now()
	n.callStart.Store(start.UnixNano())
	return start
}

func (n *SinkNode) endCall(l *operator.Latency, start time.Time) {
	d := time.Since(start)
	n.callStart.Store(0)
	l.Observe(d)
	n.Stats.Busy.Add(int64(d))
}

// PendingCall is how long the sink's Write or Flush under way has been
// running, 0 between calls: a target that hangs shows here long before a
// counter moves.
func (n *SinkNode) PendingCall(now time.Time) time.Duration {
	at := n.callStart.Load()
	if at == 0 {
		return 0
	}
	return max(now.Sub(time.Unix(0, at)), 0)
}

package runtime

import (
	"maps"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// splitList is a connector.SplitSource's split list without a source.
type splitList []string

func (l splitList) Splits() []string                 { return l }
func (l splitList) Split(b *row.Batch, i int) string { return "" }

// The source's watermark is the minimum of its splits'; a split without
// a record holds it at none; idle splits stop holding it, the ones that
// went quiet first first.
func TestSplitWatermarks(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := newSplitWatermarks(splitList{"t/0", "t/1", "t/2"}, time.Second, nil, t0)
	w.refresh(t0)
	if got := w.add("t/0", 50, true, t0.Add(100*time.Millisecond)); got != operator.NoWatermark {
		t.Fatalf("watermark %d with two splits unread, want none", got)
	}
	w.add("t/1", 30, true, t0)
	if got := w.add("t/2", 40, true, t0); got != 30 {
		t.Fatalf("watermark %d, want the least split's 30", got)
	}
	// t/1 and t/2 went quiet before t/0: once all three are idle, the
	// watermark is t/0's, as when t/1 and t/2 went idle.
	if got, next := w.markIdle(t0.Add(500*time.Millisecond)), w.nextIdle(); got != 30 || !next.Equal(t0.Add(time.Second)) {
		t.Fatalf("before the timeout: %d, next %v", got, next)
	}
	if got, next := w.markIdle(t0.Add(2*time.Second)), w.nextIdle(); got != 50 || !next.IsZero() {
		t.Fatalf("all idle: %d, next %v; want t/0's 50 and no next", got, next)
	}
	// A record brings its split back.
	if got := w.add("t/1", 35, true, t0.Add(3*time.Second)); got != 35 {
		t.Fatalf("t/1 back: %d, want 35", got)
	}
}

// A checkpoint keeps each split's watermark; one written before splits
// had their own still restores the source's.
func TestSourceStateRoundTrip(t *testing.T) {
	w := newSplitWatermarks(splitList{"a/0", "a/1"}, 0, map[string]int64{"a/0": 7, "a/1": operator.NoWatermark}, time.Now())
	wm, splits, ok := decodeSourceState(encodeSourceState(7, w))
	if !ok || wm != 7 || !maps.Equal(splits, map[string]int64{"a/0": 7, "a/1": operator.NoWatermark}) {
		t.Fatalf("decoded %d %v %v", wm, splits, ok)
	}
	if wm, splits, ok := decodeSourceState(encodeWatermark(9)); !ok || wm != 9 || splits != nil {
		t.Fatalf("old form decoded %d %v %v", wm, splits, ok)
	}
	if _, _, ok := decodeSourceState(encodeSourceState(7, w)[:5]); ok {
		t.Fatal("a cut state decoded")
	}
}

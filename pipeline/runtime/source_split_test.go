package runtime

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
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

// splitFeed is a SplitSource of two splits, p0 and p1: each fed item is
// a row (its event time) of split item[0].
type splitFeed struct {
	feed chan [2]int64
	read int64
}

func (s *splitFeed) Bounded() bool               { return false }
func (s *splitFeed) Open(context.Context) error  { return nil }
func (s *splitFeed) Close(context.Context) error { return nil }
func (s *splitFeed) Splits() []string            { return []string{"p0", "p1"} }
func (s *splitFeed) Position() ([]byte, error)   { return binary.AppendVarint(nil, s.read), nil }
func (s *splitFeed) Restore(pos []byte) error    { s.read, _ = binary.Varint(pos); return nil }
func (s *splitFeed) Split(b *row.Batch, i int) string {
	return b.Origin.(*row.Positions).Input(i)
}
func (s *splitFeed) Read(ctx context.Context, max int) (*row.Batch, error) {
	select {
	case it := <-s.feed:
		s.read++
		b := &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.BigIntValue(it[1])}}}}
		pos := row.NewPositions(1, "/")
		pos.Mark(1, fmt.Sprintf("p%d", it[0]), s.read)
		b.Origin = pos
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// splitGraph reads src with its watermark at the rows' values.
func splitGraph(src *splitFeed) *Graph {
	g := graph(src, nil, &memSink{})
	g.Sources[0].EventTime = func(r row.Row) (int64, bool, error) { return r[0].Int64(), true, nil }
	g.Sources[0].RowTime = func(r row.Row) int64 { return r[0].Int64() }
	return g
}

// A checkpoint keeps each split's watermark: a run restored from it
// gives the watermark an uninterrupted run would. p0 is at 200 when the
// run stops; after the restore a row of p1 at 150 moves the source's
// watermark to 150, the minimum with p0's restored 200 (without p0's it
// would stay at 50: p0 would have none).
func TestSplitWatermarksRestored(t *testing.T) {
	store, err := checkpoint.Open(t.TempDir(), "t")
	if err != nil {
		t.Fatal(err)
	}
	opt := func(stop chan struct{}) Options {
		return Options{Stop: stop, Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}}
	}
	src := &splitFeed{feed: make(chan [2]int64, 10)}
	src.feed <- [2]int64{0, 100}
	src.feed <- [2]int64{0, 200}
	src.feed <- [2]int64{1, 50}
	g := splitGraph(src)
	stop := make(chan struct{})
	run := start(g, opt(stop))
	testenv.Eventually(t, 10*time.Second, "watermark 50", func() error {
		if wm := g.Sources[0].Stats.Watermark.Load(); wm != 50 {
			return fmt.Errorf("watermark %d", wm)
		}
		return nil
	})
	close(stop)
	run.wait(t)

	src2 := &splitFeed{feed: make(chan [2]int64, 10)}
	src2.feed <- [2]int64{1, 150}
	g2 := splitGraph(src2)
	stop2 := make(chan struct{})
	run2 := start(g2, opt(stop2))
	testenv.Eventually(t, 10*time.Second, "watermark 150", func() error {
		if wm := g2.Sources[0].Stats.Watermark.Load(); wm != 150 {
			return fmt.Errorf("watermark %d", wm)
		}
		return nil
	})
	close(stop2)
	run2.wait(t)
	if got := g2.Checkpoints.Restored.Load(); got == 0 {
		t.Fatal("the second run restored no checkpoint")
	}
}

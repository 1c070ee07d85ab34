package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// viewSource is a bounded source of n rows (kind i%3, a = i*7%50, b = i)
// in batches of 64, which maps each batch as it reads it, as a source's
// decoders would (connector.MappingSource), unless plain. Its position
// is the number of rows read; after stopAt rows (if > 0) it waits for
// the run's end. It logs each Restore.
type viewSource struct {
	n, next, stopAt int
	plain           bool
	mapper          func(*row.Batch) *row.Batch
	restored        []int
}

func (*viewSource) Bounded() bool               { return true }
func (*viewSource) Open(context.Context) error  { return nil }
func (*viewSource) Close(context.Context) error { return nil }
func (s *viewSource) MapBatches(f func(*row.Batch) *row.Batch, fresh bool) bool {
	if s.plain {
		return false
	}
	s.mapper = f
	return true
}
func (s *viewSource) Read(ctx context.Context, _ int) (*row.Batch, error) {
	if s.stopAt > 0 && s.next >= s.stopAt {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.next >= s.n {
		return nil, io.EOF
	}
	b := &row.Batch{}
	for b.Len() < 64 && s.next < s.n {
		i := int64(s.next)
		b.Append(row.Insert, row.Row{row.BigIntValue(i % 3), row.BigIntValue(i * 7 % 50), row.BigIntValue(i)})
		s.next++
	}
	if s.mapper != nil {
		if m := s.mapper(b); m != nil {
			return m, nil
		}
	}
	return b, nil
}
func (s *viewSource) Position() ([]byte, error) { return binary.AppendVarint(nil, int64(s.next)), nil }
func (s *viewSource) Restore(pos []byte) error {
	v, n := binary.Varint(pos)
	if n <= 0 {
		return errors.New("bad position")
	}
	s.next = int(v)
	s.restored = append(s.restored, s.next)
	return nil
}

// wmSink logs the rows and the watermarks it gets, in order.
type wmSink struct {
	memSink
	mu  sync.Mutex
	log []string
}

func (s *wmSink) Write(_ context.Context, b *row.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range b.Changes {
		s.log = append(s.log, c.String())
	}
	return nil
}
func (s *wmSink) Watermark(_ context.Context, wm int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, fmt.Sprintf("wm %d", wm))
	return nil
}

// viewsGraph is src with a computed column c = a + b (the event time,
// its watermark c - 40), read by three views, each a Calc keeping one
// kind and projecting columns of its own (the Nexmark DDL's person,
// auction and bid over one source), each written by a sink of sinks.
func viewsGraph(src *viewSource, sinks [3]connector.Sink) *Graph {
	compute := func() func(row.Row) (row.Row, error) {
		scratch := make(row.Row, 4)
		return func(r row.Row) (row.Row, error) {
			copy(scratch, r[:3])
			scratch[3] = row.BigIntValue(r[1].Int64() + r[2].Int64())
			return scratch, nil
		}
	}
	col := func(i int) func(row.Row) (row.Value, error) {
		return func(r row.Row) (row.Value, error) { return r[i], nil }
	}
	sum := func(r row.Row) (row.Value, error) { return row.BigIntValue(r[1].Int64() + r[2].Int64()), nil }
	sn := &SourceNode{Node: Node{Name: "s", Kind: "source"}, Source: src, Compute: compute,
		Calc:      &Calc{Project: []func(row.Row) (row.Value, error){col(0), col(1), col(2), sum}},
		EventTime: func(r row.Row) (int64, bool, error) { return r[3].Int64() - 40, true, nil },
		RowTime:   func(r row.Row) int64 { return r[3].Int64() },
	}
	g := &Graph{Name: "views", Sources: []*SourceNode{sn}, BatchSize: 64}
	projections := [3][]func(row.Row) (row.Value, error){{col(2)}, {col(3), col(1)}, {col(1), col(2), col(3)}}
	for k := range 3 {
		c := &Calc{Filter: func(r row.Row) (bool, error) { return r[0].Int64() == int64(k), nil }, Project: projections[k]}
		op := &OpNode{Node: Node{Name: fmt.Sprintf("view%d", k), Kind: "transform"}, Input: &sn.Node, Op: c}
		g.Ops = append(g.Ops, op)
		g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: fmt.Sprintf("out%d", k), Kind: "sink"}, Input: &op.Node, Sink: sinks[k], Mode: connector.Append})
	}
	return g
}

// TestFusedViewsAsUnfused: a source read by three Calcs runs them all in
// its decoders, each reader's node getting its own rows; every view's
// rows and the watermarks between them are the unfused run's, and the
// counters too.
func TestFusedViewsAsUnfused(t *testing.T) {
	run := func(plain bool) ([3][]string, *Graph) {
		var sinks [3]*wmSink
		var cs [3]connector.Sink
		for k := range sinks {
			sinks[k] = &wmSink{}
			cs[k] = sinks[k]
		}
		g := viewsGraph(&viewSource{n: 3000, plain: plain}, cs)
		if err := Run(context.Background(), g, Options{}); err != nil {
			t.Fatal(err)
		}
		var logs [3][]string
		for k, s := range sinks {
			logs[k] = s.log
		}
		return logs, g
	}
	fused, fg := run(false)
	plain, pg := run(true)
	if fz := fuse(viewsGraph(&viewSource{}, [3]connector.Sink{})); len(fz) != 1 {
		t.Fatal("a source read by three Calcs was not fused")
	}
	for k := range 3 {
		if len(fused[k]) < 1000 || !slices.Equal(fused[k], plain[k]) {
			t.Fatalf("view %d: fused %d entries, unfused %d; first difference at %d", k, len(fused[k]), len(plain[k]), firstDiff(fused[k], plain[k]))
		}
		wms := 0
		for _, e := range fused[k] {
			if len(e) > 3 && e[:3] == "wm " {
				wms++
			}
		}
		if wms < 2 {
			t.Fatalf("view %d saw %d watermarks: the test cuts nothing", k, wms)
		}
	}
	counters := func(g *Graph) string {
		s := fmt.Sprintf("source %d/%d", g.Sources[0].Stats.RowsIn.Load(), g.Sources[0].Stats.RowsOut.Load())
		for _, op := range g.Ops {
			s += fmt.Sprintf(" %s %d/%d", op.Name, op.Stats.RowsIn.Load(), op.Stats.RowsOut.Load())
		}
		return s
	}
	if f, p := counters(fg), counters(pg); f != p {
		t.Errorf("counters fused %s, unfused %s", f, p)
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestFusedViewsRestore: a run of the fused views stopped mid-stream
// checkpoints the source's position once, and the run restored from it
// reads on from there: each view's rows over the two runs are those of
// one unfused run, none lost, none twice.
func TestFusedViewsRestore(t *testing.T) {
	const n = 3000
	rowsOf := func(sinks [3]*wmSink) [3][]string {
		var out [3][]string
		for k, s := range sinks {
			for _, e := range s.log {
				if e[:3] != "wm " {
					out[k] = append(out[k], e)
				}
			}
		}
		return out
	}
	newSinks := func() ([3]*wmSink, [3]connector.Sink) {
		var sinks [3]*wmSink
		var cs [3]connector.Sink
		for k := range sinks {
			sinks[k] = &wmSink{}
			cs[k] = sinks[k]
		}
		return sinks, cs
	}
	sinks, cs := newSinks()
	if err := Run(context.Background(), viewsGraph(&viewSource{n: n, plain: true}, cs), Options{}); err != nil {
		t.Fatal(err)
	}
	want := rowsOf(sinks)

	store, err := checkpoint.Open(t.TempDir(), "views")
	if err != nil {
		t.Fatal(err)
	}
	first, firstCS := newSinks()
	src := &viewSource{n: n, stopAt: 1280}
	stop := make(chan struct{})
	done := start(viewsGraph(src, firstCS), Options{Stop: stop, Checkpoint: CheckpointOptions{Interval: 2 * time.Millisecond, Store: store}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		first[2].mu.Lock()
		got := len(first[2].log)
		first[2].mu.Unlock()
		if got > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	done.wait(t)

	second, secondCS := newSinks()
	again := &viewSource{n: n}
	if err := Run(context.Background(), viewsGraph(again, secondCS), Options{Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again.restored) != "[1280]" {
		t.Fatalf("the second run restored the source at %v, want [1280]", again.restored)
	}
	a, b := rowsOf(first), rowsOf(second)
	for k := range 3 {
		got := append(slices.Clone(a[k]), b[k]...)
		if !slices.Equal(got, want[k]) || len(a[k]) == 0 || len(b[k]) == 0 {
			t.Fatalf("view %d: %d rows before the stop and %d after, want %d in all, the same; first difference at %d", k, len(a[k]), len(b[k]), len(want[k]), firstDiff(got, want[k]))
		}
	}
}

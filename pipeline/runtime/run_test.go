package runtime

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// seqSource emits BIGINT 1..n, or fails after failAt rows.
type seqSource struct {
	n, next, failAt int
	block           bool // unbounded: blocks when done until ctx ends
	closed          bool
}

func (s *seqSource) Bounded() bool               { return !s.block }
func (s *seqSource) Open(context.Context) error  { return nil }
func (s *seqSource) Close(context.Context) error { s.closed = true; return nil }
func (s *seqSource) Read(ctx context.Context, max int) (*row.Batch, error) {
	if s.failAt > 0 && s.next >= s.failAt {
		return nil, errors.New("disk on fire")
	}
	if s.next >= s.n {
		if s.block {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, io.EOF
	}
	b := row.NewBatch(max, 1)
	for b.Len() < max && s.next < s.n {
		s.next++
		r := b.NewRow()
		r[0] = row.BigIntValue(int64(s.next))
		b.Append(row.Insert, r)
	}
	return b, nil
}

type memSink struct {
	mu       sync.Mutex
	changes  []row.Change
	failOn   int
	flushed  int
	closed   bool
	received chan struct{}
}

func (s *memSink) Capabilities() connector.Capabilities {
	return connector.Capabilities{Append: true, Upsert: true, Retract: true}
}
func (s *memSink) Bind(connector.SinkInput) error { return nil }
func (s *memSink) Open(context.Context) error     { return nil }
func (s *memSink) Write(_ context.Context, b *row.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failOn > 0 && len(s.changes)+b.Len() >= s.failOn {
		return errors.New("target is full")
	}
	s.changes = append(s.changes, b.Changes...)
	if s.received != nil {
		select {
		case s.received <- struct{}{}:
		default:
		}
	}
	return nil
}
func (s *memSink) Flush(context.Context) error {
	s.mu.Lock()
	s.flushed = len(s.changes)
	s.mu.Unlock()
	return nil
}
func (s *memSink) Close(context.Context) error { s.closed = true; return nil }

func graph(src connector.Source, calc *Calc, sinks ...*memSink) *Graph {
	g := &Graph{Name: "t", BatchSize: 7}
	sn := &SourceNode{Node: Node{Name: "src", Kind: "source"}, Source: src}
	g.Sources = append(g.Sources, sn)
	in := &sn.Node
	if calc != nil {
		op := &OpNode{Node: Node{Name: "calc", Kind: "transform"}, Input: in, Op: calc}
		g.Ops = append(g.Ops, op)
		in = &op.Node
	}
	for i, s := range sinks {
		g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: "sink" + string(rune('a'+i)), Kind: "sink"}, Input: in, Sink: s, Mode: connector.Append})
	}
	return g
}

func TestRunBoundedFilterFanOut(t *testing.T) {
	even := &Calc{Filter: func(r row.Row) (bool, error) { return r[0].Int64()%2 == 0, nil }}
	a, b := &memSink{}, &memSink{}
	g := graph(&seqSource{n: 100}, even, a, b)
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*memSink{a, b} {
		if len(s.changes) != 50 || s.flushed != 50 || !s.closed {
			t.Fatalf("sink got %d rows, flushed %d, closed %v; want 50, 50, true", len(s.changes), s.flushed, s.closed)
		}
		for i, c := range s.changes {
			if c.Row[0].Int64() != int64(2*(i+1)) {
				t.Fatalf("row %d = %v, want %d in order", i, c.Row, 2*(i+1))
			}
		}
	}
	if got := g.Sources[0].Stats.RowsOut.Load(); got != 100 {
		t.Errorf("source rows out = %d, want 100", got)
	}
	if got := g.Ops[0].Stats.RowsOut.Load(); got != 50 {
		t.Errorf("filter rows out = %d, want 50", got)
	}
}

func TestRunErrorsNameTheNodeAndNeverHang(t *testing.T) {
	cases := []struct {
		name string
		src  *seqSource
		sink *memSink
		want string
	}{
		{"source fails", &seqSource{n: 1000, failAt: 20}, &memSink{}, `source "src": read: disk on fire`},
		{"sink fails, bounded source", &seqSource{n: 100000}, &memSink{failOn: 30}, `sink "sinka": write: target is full`},
		{"sink fails, unbounded source", &seqSource{n: 100, block: true}, &memSink{failOn: 30}, `sink "sinka": write: target is full`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- Run(context.Background(), graph(tc.src, nil, tc.sink), Options{}) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want %q", err, tc.want)
				}
				if !tc.src.closed || !tc.sink.closed {
					t.Errorf("source closed %v, sink closed %v; want both closed", tc.src.closed, tc.sink.closed)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run hung after an error")
			}
		})
	}
}

func TestRunStopDrainsAndFlushes(t *testing.T) {
	sink := &memSink{received: make(chan struct{}, 1)}
	stop := make(chan struct{})
	g := graph(&seqSource{n: 10, block: true}, nil, sink)
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), g, Options{Stop: stop}) }()
	<-sink.received
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("graceful stop returned %v", err)
	}
	if sink.flushed != 10 || !sink.closed {
		t.Fatalf("flushed %d rows, closed %v; want 10, true", sink.flushed, sink.closed)
	}
}

func TestCalcFilterOverUpdates(t *testing.T) {
	// Keep rows whose count column is below 3, as a HAVING cnt < 3 would.
	calc := &Calc{Filter: func(r row.Row) (bool, error) { return r[1].Int64() < 3, nil }}
	in := []row.Change{
		{Kind: row.Insert, Row: row.Row{row.StringValue("a"), row.BigIntValue(1)}},
		{Kind: row.UpdateBefore, Row: row.Row{row.StringValue("a"), row.BigIntValue(1)}},
		{Kind: row.UpdateAfter, Row: row.Row{row.StringValue("a"), row.BigIntValue(2)}},
		{Kind: row.UpdateBefore, Row: row.Row{row.StringValue("a"), row.BigIntValue(2)}},
		{Kind: row.UpdateAfter, Row: row.Row{row.StringValue("a"), row.BigIntValue(3)}},
		{Kind: row.Insert, Row: row.Row{row.StringValue("b"), row.BigIntValue(5)}},
		{Kind: row.UpdateBefore, Row: row.Row{row.StringValue("b"), row.BigIntValue(5)}},
		{Kind: row.UpdateAfter, Row: row.Row{row.StringValue("b"), row.BigIntValue(1)}},
		{Kind: row.Delete, Row: row.Row{row.StringValue("b"), row.BigIntValue(1)}},
	}
	want := "+I[a, 1]\n-U[a, 1]\n+U[a, 2]\n-D[a, 2]\n+I[b, 1]\n-D[b, 1]\n"
	em := newBatchEmitter(100)
	// Split the input across batches between a -U and its +U.
	if err := calc.Process(&row.Batch{Changes: in[:4]}, em); err != nil {
		t.Fatal(err)
	}
	if err := calc.Process(&row.Batch{Changes: in[4:]}, em); err != nil {
		t.Fatal(err)
	}
	if err := calc.Finish(em); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, b := range em.take() {
		got.WriteString(b.String())
	}
	if got.String() != want {
		t.Errorf("got\n%swant\n%s", got.String(), want)
	}
}

func TestUpsertSinkCompactsEachKeyToItsLastChange(t *testing.T) {
	k := func(kind row.Kind, key string, n int64) row.Change {
		return row.Change{Kind: kind, Row: row.Row{row.StringValue(key), row.BigIntValue(n)}}
	}
	in := &row.Batch{Changes: []row.Change{
		k(row.Insert, "a", 1),
		k(row.Insert, "b", 1),
		k(row.UpdateBefore, "a", 1),
		k(row.UpdateAfter, "a", 2),
		k(row.Insert, "c", 1),
		k(row.Delete, "b", 1),
		k(row.UpdateBefore, "a", 2),
		k(row.UpdateAfter, "a", 3),
	}}
	cases := []struct {
		compact bool
		want    string
	}{
		{true, "+I[c, 1]\n-D[b, 1]\n+U[a, 3]\n"},
		{false, "+I[a, 1]\n+I[b, 1]\n+U[a, 2]\n+I[c, 1]\n-D[b, 1]\n+U[a, 3]\n"},
	}
	for _, tc := range cases {
		n := &SinkNode{Mode: connector.Upsert, Key: []int{0}, Compact: tc.compact}
		out, err := n.admit(in)
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("compact=%v:\n%swant\n%s", tc.compact, out, tc.want)
		}
	}
}

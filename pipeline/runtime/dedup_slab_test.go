package runtime

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/rankop"
)

// keyedRowsSource reads n rows [key, payload]: 13 keys in turn, payloads
// of lengths that vary, so that a deduplication keeping the last row
// replaces each key's row again and again.
type keyedRowsSource struct{ n, next int }

func (s *keyedRowsSource) Bounded() bool               { return true }
func (s *keyedRowsSource) Open(context.Context) error  { return nil }
func (s *keyedRowsSource) Close(context.Context) error { return nil }
func (s *keyedRowsSource) Read(_ context.Context, max int) (*row.Batch, error) {
	if s.next >= s.n {
		return nil, io.EOF
	}
	b := row.NewBatch(max, 2)
	for b.Len() < max && s.next < s.n {
		r := b.NewRow()
		r[0] = row.StringValue(fmt.Sprint("key", s.next%13))
		r[1] = row.StringValue(strings.Repeat(string(rune('a'+s.next%26)), s.next%90))
		b.Append(row.Insert, r)
		s.next++
	}
	return b, nil
}

type lineOut struct{ lines []string }

func (o *lineOut) Emit(k row.Kind, r row.Row) {
	o.lines = append(o.lines, row.Change{Kind: k, Row: r}.String())
}

// TestDedupRowsCarvedFromSlabs: a deduplication keeping the last row
// (operator.Carving) carves its -U rows from slabs that its one reader,
// a sink that copies its rows, gives back; read by two sinks, one of
// which holds the rows, it carves from new slabs. Either way every
// change is the operator's own, as it emits them on its own.
func TestDedupRowsCarvedFromSlabs(t *testing.T) {
	const n = 5000
	spec := rankop.DedupSpec{Key: []int{0}, TimeCol: 1, KeepLast: true}
	var want lineOut
	alone := rankop.NewDedup(spec)
	src := &keyedRowsSource{n: n}
	for {
		b, err := src.Read(context.Background(), 100)
		if err == io.EOF {
			break
		}
		if err := alone.Process(b, &want); err != nil {
			t.Fatal(err)
		}
	}
	build := func(sinks ...connector.Sink) *Graph {
		g := &Graph{Name: "t", BatchSize: 7}
		s := &SourceNode{Node: Node{Name: "rows", Kind: "source"}, Source: &keyedRowsSource{n: n}}
		op := &OpNode{Node: Node{Name: "dedup", Kind: "transform"}, Input: &s.Node, Op: rankop.NewDedup(spec)}
		g.Sources, g.Ops = []*SourceNode{s}, []*OpNode{op}
		for i, sk := range sinks {
			g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: fmt.Sprint("sink", i), Kind: "sink"}, Input: &op.Node, Sink: sk, Mode: connector.Retract})
		}
		return g
	}

	copier := &copySink{}
	g := build(copier)
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(copier.rows, want.lines) {
		t.Fatalf("the copying sink wrote %d changes, want %d, the same", len(copier.rows), len(want.lines))
	}
	if pool := g.Ops[0].slabs; pool == nil || len(pool.free) == 0 {
		t.Fatal("the deduplication's one reader gave no slab back")
	}

	copier, holder := &copySink{}, &memSink{}
	g = build(copier, holder)
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if g.Ops[0].slabs != nil {
		t.Error("a deduplication read by two sinks has a pool: one's release would reuse rows the other holds")
	}
	if got := heldRows(holder); !slices.Equal(got, want.lines) || !slices.Equal(copier.rows, want.lines) {
		t.Fatalf("the holding sink has %d changes, the copying one %d; want %d each, the same", len(got), len(copier.rows), len(want.lines))
	}
}

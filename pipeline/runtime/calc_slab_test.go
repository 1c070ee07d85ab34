package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
)

// copySink is a memSink that keeps a text copy of each row (a
// connector.RowCopier): the runtime gives the rows' memory back once
// Write returned.
type copySink struct {
	memSink
	mu   sync.Mutex
	rows []string
}

func (s *copySink) Write(_ context.Context, b *row.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range b.Changes {
		s.rows = append(s.rows, c.String())
	}
	return nil
}
func (s *copySink) CopiesRows() bool { return true }

// timesTen projects BIGINT v to (v*10, v).
func timesTen() *Calc {
	return &Calc{Project: []func(row.Row) (row.Value, error){
		func(r row.Row) (row.Value, error) { return row.BigIntValue(r[0].Int64() * 10), nil },
		func(r row.Row) (row.Value, error) { return r[0], nil },
	}}
}

// wantTimesTen is what timesTen makes of 1..n.
func wantTimesTen(n int) []string {
	var want []string
	for v := 1; v <= n; v++ {
		want = append(want, row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(int64(v * 10)), row.BigIntValue(int64(v))}}.String())
	}
	return want
}

func heldRows(s *memSink) []string {
	var out []string
	for _, c := range s.changes {
		out = append(out, c.String())
	}
	return out
}

// TestCalcSlabsGoBackOnlyFromTheirOneReader: a Calc's rows are carved
// from slabs that its one reader gives back (a sink that copies its
// rows), and the rows it wrote are the Calc's; a Calc read by two nodes
// carves from new slabs, so that a sink holding the rows across batches
// keeps them as they were while the other one is done with its own;
// rows a second Calc passes on as they are (no projection) stay the
// first one's, which no node gives back.
func TestCalcSlabsGoBackOnlyFromTheirOneReader(t *testing.T) {
	const n = 5000
	want := wantTimesTen(n)

	copier := &copySink{}
	g := graph(&seqSource{n: n}, timesTen())
	g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: "copier", Kind: "sink"}, Input: &g.Ops[0].Node, Sink: copier})
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(copier.rows, want) {
		t.Fatalf("the copying sink wrote %d rows, the first %v; want %d", len(copier.rows), copier.rows[:min(3, len(copier.rows))], n)
	}
	if pool := g.Ops[0].slabs; pool == nil || len(pool.free) == 0 {
		t.Fatal("the Calc's one reader gave no slab back")
	}

	copier, holder := &copySink{}, &memSink{}
	g = graph(&seqSource{n: n}, timesTen(), holder)
	g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: "copier", Kind: "sink"}, Input: &g.Ops[0].Node, Sink: copier})
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if g.Ops[0].slabs != nil {
		t.Error("a Calc read by two sinks has a pool: one's release would reuse rows the other holds")
	}
	if got := heldRows(holder); !slices.Equal(got, want) || !slices.Equal(copier.rows, want) {
		t.Fatalf("the holding sink has %d rows, the copying one %d; want %d each, the same", len(got), len(copier.rows), n)
	}

	copier, holder = &copySink{}, &memSink{}
	g = graph(&seqSource{n: n}, timesTen())
	pass := &OpNode{Node: Node{Name: "pass", Kind: "transform"}, Input: &g.Ops[0].Node,
		Op: &Calc{Filter: func(row.Row) (bool, error) { return true, nil }}}
	g.Ops = append(g.Ops, pass)
	g.Sinks = append(g.Sinks,
		&SinkNode{Node: Node{Name: "copier", Kind: "sink"}, Input: &pass.Node, Sink: copier},
		&SinkNode{Node: Node{Name: "holder", Kind: "sink"}, Input: &pass.Node, Sink: holder})
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := heldRows(holder); !slices.Equal(got, want) || !slices.Equal(copier.rows, want) {
		t.Fatalf("behind a filter, the holding sink has %d rows, the copying one %d; want %d each, the same", len(got), len(copier.rows), n)
	}
}

// TestEmitterSlabsPerBatch: the rows of the batch after a full one start
// a slab of their own, so that the full batch's reader giving its slabs
// back does not hand out the memory of rows still on their way.
func TestEmitterSlabsPerBatch(t *testing.T) {
	var reader Node
	pool := newSlabPool()
	e := newBatchEmitter(2)
	e.pool, e.by = pool, &reader
	e.begin(nil)
	for v := range 3 {
		r := e.carve(1)
		r[0] = row.BigIntValue(int64(v))
		e.Emit(row.Insert, r)
	}
	out := e.take()
	if len(out) != 2 || out[0].Len() != 2 || out[1].Len() != 1 {
		t.Fatalf("batches %v", out)
	}
	release(out[0], &reader)
	e.begin(nil)
	for v := range 100 {
		r := e.carve(1)
		r[0] = row.BigIntValue(int64(100 + v))
		e.Emit(row.Insert, r)
	}
	if got := out[1].Changes[0].Row[0].Int64(); got != 2 {
		t.Fatalf("the row after a full batch became %d: it shared the released batch's slab", got)
	}
}

// TestCalcHeldUpdateIsNotCarved: a -U a filtering Calc holds for its +U
// goes out with a later batch, after the reader gave the slabs of the
// batch it came in back: it is a row of its own, not the slab's, and
// keeps its values while the next rows reuse that slab.
func TestCalcHeldUpdateIsNotCarved(t *testing.T) {
	c := &Calc{
		Filter: func(row.Row) (bool, error) { return true, nil },
		Project: []func(row.Row) (row.Value, error){
			func(r row.Row) (row.Value, error) { return r[0], nil },
		},
	}
	var reader Node
	pool := newSlabPool()
	e := newBatchEmitter(1024)
	e.pool, e.by = pool, &reader
	v := func(i int64) row.Row { return row.Row{row.BigIntValue(i)} }
	in := &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: v(1)}, {Kind: row.UpdateBefore, Row: v(2)}}}
	e.begin(in)
	if err := c.Process(in, e); err != nil {
		t.Fatal(err)
	}
	for _, b := range e.take() {
		release(b, &reader)
	}
	in = &row.Batch{Changes: []row.Change{{Kind: row.UpdateAfter, Row: v(3)}}}
	for i := range 200 {
		in.Append(row.Insert, v(int64(10+i)))
	}
	e.begin(in)
	if err := c.Process(in, e); err != nil {
		t.Fatal(err)
	}
	out := e.take()
	got := fmt.Sprint(out[0].Changes[0], out[0].Changes[1])
	if want := fmt.Sprint(row.Change{Kind: row.UpdateBefore, Row: v(2)}, row.Change{Kind: row.UpdateAfter, Row: v(3)}); got != want {
		t.Fatalf("the held update went out as %s, want %s", got, want)
	}
}

// TestHashJoinRowsCarvedFromSlabs: a batch hash join that emits picked
// columns (operator.Carving) carves its joined rows from slabs that its
// one reader, a sink that copies its rows, gives back; read by two
// sinks, one of which holds the rows, it carves from new slabs. Every
// joined row is the join's either way.
func TestHashJoinRowsCarvedFromSlabs(t *testing.T) {
	const n = 5000
	var want []string
	for v := 1; v <= n; v++ {
		want = append(want, row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(int64(v)), row.BigIntValue(int64(v))}}.String())
	}
	slices.Sort(want)
	build := func(sinks ...connector.Sink) *Graph {
		g := &Graph{Name: "t", BatchSize: 7}
		sa := &SourceNode{Node: Node{Name: "probe", Kind: "source"}, Source: &seqSource{n: n}}
		sb := &SourceNode{Node: Node{Name: "build", Kind: "source"}, Source: &seqSource{n: n}}
		u := &UnionNode{Node: Node{Name: "inputs", Kind: "transform"}, Inputs: []*Node{&sa.Node, &sb.Node}, BuildFirst: true, Build: 1}
		types := []row.TypeID{row.BigInt}
		j := joinop.NewJoin(joinop.JoinSpec{Kind: joinop.InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 1, RightWidth: 1,
			LeftTypes: types, RightTypes: types, LeftAppendOnly: true, RightAppendOnly: true, Batch: true, RightFirst: true, Output: []int{1, 0}})
		op := &OpNode{Node: Node{Name: "join", Kind: "transform"}, Input: &u.Node, Op: j}
		g.Sources, g.Unions, g.Ops = []*SourceNode{sa, sb}, []*UnionNode{u}, []*OpNode{op}
		for i, s := range sinks {
			g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: fmt.Sprint("sink", i), Kind: "sink"}, Input: &op.Node, Sink: s, Mode: connector.Append})
		}
		return g
	}
	sorted := func(rows []string) []string { return slices.Sorted(slices.Values(rows)) }

	copier := &copySink{}
	g := build(copier)
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := sorted(copier.rows); !slices.Equal(got, want) {
		t.Fatalf("the copying sink wrote %d rows, the first %v; want %d", len(got), got[:min(3, len(got))], n)
	}
	if pool := g.Ops[0].slabs; pool == nil || len(pool.free) == 0 {
		t.Fatal("the join's one reader gave no slab back")
	}

	copier, holder := &copySink{}, &memSink{}
	g = build(copier, holder)
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if g.Ops[0].slabs != nil {
		t.Error("a join read by two sinks has a pool: one's release would reuse rows the other holds")
	}
	if got, copied := sorted(heldRows(holder)), sorted(copier.rows); !slices.Equal(got, want) || !slices.Equal(copied, want) {
		t.Fatalf("the holding sink has %d rows, the copying one %d; want %d each, the same", len(got), len(copied), n)
	}
}

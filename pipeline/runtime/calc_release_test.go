package runtime

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// TestCalcGivesCarvedInputBack: a projecting Calc that is the one reader
// of a node carving its rows (here another Calc) gives each batch's
// slabs and change list back once it processed it, and the rows it
// wrote are right though the next batches reuse that memory; a Calc
// with no projection passes its input rows on and gives nothing back.
func TestCalcGivesCarvedInputBack(t *testing.T) {
	const n = 5000
	swapBack := &Calc{Project: []func(row.Row) (row.Value, error){
		func(r row.Row) (row.Value, error) { return row.BigIntValue(r[1].Int64() * 10), nil },
		func(r row.Row) (row.Value, error) { return row.BigIntValue(r[0].Int64() / 10), nil },
	}}
	copier := &copySink{}
	g := graph(&seqSource{n: n}, timesTen())
	second := &OpNode{Node: Node{Name: "second", Kind: "transform"}, Input: &g.Ops[0].Node, Op: swapBack}
	g.Ops = append(g.Ops, second)
	g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: "copier", Kind: "sink"}, Input: &second.Node, Sink: copier})
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := wantTimesTen(n); !slices.Equal(copier.rows, want) {
		t.Fatalf("the sink wrote %d rows, the first %v; want %d", len(copier.rows), copier.rows[:min(3, len(copier.rows))], n)
	}
	pool := g.Ops[0].slabs
	if pool == nil || len(pool.free) == 0 || len(pool.changes) == 0 {
		t.Fatal("the second Calc gave the first one's slabs and change lists back to no pool")
	}

	holder := &memSink{}
	g = graph(&seqSource{n: n}, timesTen())
	pass := &OpNode{Node: Node{Name: "pass", Kind: "transform"}, Input: &g.Ops[0].Node,
		Op: &Calc{Filter: func(row.Row) (bool, error) { return true, nil }}}
	g.Ops = append(g.Ops, pass)
	g.Sinks = append(g.Sinks, &SinkNode{Node: Node{Name: "holder", Kind: "sink"}, Input: &pass.Node, Sink: holder})
	if err := Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if pool := g.Ops[0].slabs; pool == nil || len(pool.free) != 0 || len(pool.changes) != 0 {
		t.Fatal("a filtering Calc with no projection gave back the rows it passed on")
	}
	if got := heldRows(holder); !slices.Equal(got, wantTimesTen(n)) {
		t.Fatalf("behind a filter, the holding sink has %d rows, want %d", len(got), n)
	}
}

// TestCalcReleasesOnlyCarvedInput: a Calc asks to give an input batch
// back only when an operator carved its rows (a source's batch may hold
// its block, which the projected strings point into), and not when a
// row of it went to Reject.
func TestCalcReleasesOnlyCarvedInput(t *testing.T) {
	c := timesTen()
	out := newBatchEmitter(64)
	b := &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: row.Row{row.BigIntValue(1)}}}}
	if err := c.Process(b, out); err != nil || c.ReleasesInput() {
		t.Fatalf("a source's batch: ReleasesInput %v (%v), want false", c.ReleasesInput(), err)
	}
	b.Origin = &slabOrigin{}
	if err := c.Process(b, out); err != nil || !c.ReleasesInput() {
		t.Fatalf("a carved batch: ReleasesInput %v (%v), want true", c.ReleasesInput(), err)
	}
	bad := &Calc{Project: []func(row.Row) (row.Value, error){
		func(r row.Row) (row.Value, error) {
			if r[0].Int64() == 2 {
				return row.Value{}, errors.New("bad value")
			}
			return r[0], nil
		},
	}, Reject: func(connector.BadRecord) error { return nil }}
	b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(2)}})
	if err := bad.Process(b, out); err != nil || bad.ReleasesInput() {
		t.Fatalf("a carved batch with a rejected row: ReleasesInput %v (%v), want false", bad.ReleasesInput(), err)
	}
}

// TestEmitterReusesChangeLists: a batch's change list comes back with
// its slabs when its one reader releases it, and the next batch is
// filled into it; a batch not released keeps its own.
func TestEmitterReusesChangeLists(t *testing.T) {
	var reader Node
	e := newBatchEmitter(4)
	e.pool, e.by = newSlabPool(), &reader
	fill := func(n int) []*row.Batch {
		e.begin(nil)
		for v := range n {
			r := e.carve(1)
			r[0] = row.BigIntValue(int64(v))
			e.Emit(row.Insert, r)
		}
		return e.take()
	}
	first := fill(8)
	if len(first) != 2 {
		t.Fatalf("%d batches, want 2", len(first))
	}
	list := &first[0].Changes[:1][0]
	release(first[0], &reader)
	if first[0].Changes != nil {
		t.Fatal("a released batch still has its changes")
	}
	next := fill(4)
	if &next[0].Changes[:1][0] != list {
		t.Fatal("the next batch did not reuse the released batch's change list")
	}
	if got := first[1].Changes[0].Row[0].Int64(); got != 4 {
		t.Fatalf("the batch not released changed: its first row is %d, want 4", got)
	}
}

var _ operator.InputReleaser = (*Calc)(nil)

package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// mappingSource is a source that only records the map a fusion gives it
// (connector.MappingSource); nothing reads it.
type mappingSource struct {
	mapper func(*row.Batch) *row.Batch
}

func (*mappingSource) Bounded() bool               { return true }
func (*mappingSource) Open(context.Context) error  { return nil }
func (*mappingSource) Close(context.Context) error { return nil }
func (*mappingSource) Read(context.Context, int) (*row.Batch, error) {
	return nil, errors.New("not read")
}
func (m *mappingSource) MapBatches(f func(*row.Batch) *row.Batch, fresh bool) bool {
	m.mapper = f
	return true
}

// computedGraph is a source of rows (kind, a, b) with a computed column
// c = a + b (an error when a is negative), c's watermark, and a Calc
// over it that keeps kind 2 and projects (c, b).
func computedGraph(project bool) (*Graph, *mappingSource, *Calc) {
	compute := func() func(row.Row) (row.Row, error) {
		scratch := make(row.Row, 4)
		return func(r row.Row) (row.Row, error) {
			if r[1].Int64() < 0 {
				return nil, fmt.Errorf("negative a")
			}
			copy(scratch, r[:3])
			scratch[3] = row.BigIntValue(r[1].Int64() + r[2].Int64())
			return scratch, nil
		}
	}
	serial := compute()
	var computed row.Row
	src := &mappingSource{}
	sn := &SourceNode{Node: Node{Name: "s"}, Source: src, Compute: compute,
		Calc: &Calc{Project: []func(row.Row) (row.Value, error){
			func(r row.Row) (row.Value, error) {
				var err error
				computed, err = serial(r)
				if err != nil {
					return row.NullValue, err
				}
				return computed[0], nil
			},
			func(row.Row) (row.Value, error) { return computed[1], nil },
			func(row.Row) (row.Value, error) { return computed[2], nil },
			func(row.Row) (row.Value, error) { return computed[3], nil },
		}},
		EventTime: func(r row.Row) (int64, bool, error) { return r[3].Int64() - 10, true, nil },
		RowTime:   func(r row.Row) int64 { return r[3].Int64() },
	}
	c := &Calc{Filter: func(r row.Row) (bool, error) { return r[0].Int64() == 2, nil }}
	if project {
		c.Project = []func(row.Row) (row.Value, error){
			func(r row.Row) (row.Value, error) { return r[3], nil },
			func(r row.Row) (row.Value, error) { return r[2], nil },
		}
	}
	op := &OpNode{Node: Node{Name: "calc"}, Input: &sn.Node, Op: c}
	sink := &SinkNode{Node: Node{Name: "out"}, Input: &op.Node}
	return &Graph{Sources: []*SourceNode{sn}, Ops: []*OpNode{op}, Sinks: []*SinkNode{sink}}, src, c
}

// TestFusedComputedColumns: a Calc over a source with computed columns
// and a watermark runs in the source's decoders, each batch computing
// into a scratch row of its own: the rows, the watermark and the rows'
// times are those of the serial way (the source's Calc, then the Calc's
// own); a row whose computed column fails sends the batch the serial
// way; a Calc that does not project (whose rows would be the scratch)
// is not fused.
func TestFusedComputedColumns(t *testing.T) {
	g, src, c := computedGraph(true)
	fz := fuse(g)
	if fz[g.Sources[0]] == nil || src.mapper == nil || !c.fused {
		t.Fatal("the Calc behind computed columns was not fused")
	}
	b := &row.Batch{}
	for i := range 100 {
		b.Append(row.Insert, row.Row{row.BigIntValue(int64(i % 3)), row.BigIntValue(int64(i * 7 % 50)), row.BigIntValue(int64(i))})
	}
	var want []string
	var wantTimes []int64
	wm := int64(-1 << 63)
	for _, ch := range b.Changes {
		r, _, err := g.Sources[0].Calc.Apply(ch.Row)
		if err != nil {
			t.Fatal(err)
		}
		wm = max(wm, r[3].Int64()-10)
		out, ok, err := c.Apply(r)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			want = append(want, fmt.Sprint(out))
			wantTimes = append(wantTimes, r[3].Int64())
		}
	}
	mapped := src.mapper(b)
	if mapped == nil {
		t.Fatal("the batch was not mapped")
	}
	var got []string
	for _, ch := range mapped.Changes {
		got = append(got, fmt.Sprint(ch.Row))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("fused rows\n%v\nserial\n%v", got, want)
	}
	fo := fusedOf(mapped)
	if fo.wm != wm || fmt.Sprint(fo.rowTimes) != fmt.Sprint(wantTimes) || fo.kept != 100 {
		t.Fatalf("watermark %d, row times %v, kept %d; want %d, %v, 100", fo.wm, fo.rowTimes, fo.kept, wm, wantTimes)
	}

	bad := &row.Batch{}
	bad.Append(row.Insert, row.Row{row.BigIntValue(2), row.BigIntValue(1), row.BigIntValue(1)})
	bad.Append(row.Insert, row.Row{row.BigIntValue(2), row.BigIntValue(-1), row.BigIntValue(1)})
	if src.mapper(bad) != nil {
		t.Error("a batch whose computed column failed was mapped: its row would miss on_error")
	}

	g, src, _ = computedGraph(false)
	if fuse(g) != nil || src.mapper != nil {
		t.Error("a Calc without a projection was fused behind computed columns")
	}
}

// TestFusedCalcChain: a projecting Calc that is the only reader of a
// fused Calc runs in the decoders too, over the fused Calc's rows: the
// rows are those of the two Calcs in turn, the count between them is
// noted for their counters, and the batch's memory goes back to the
// second Calc's reader.
func TestFusedCalcChain(t *testing.T) {
	g, src, c := computedGraph(true)
	c2 := &Calc{
		Filter: func(r row.Row) (bool, error) { return r[0].Int64()%2 == 0, nil },
		Project: []func(row.Row) (row.Value, error){
			func(r row.Row) (row.Value, error) { return row.BigIntValue(r[0].Int64() * 10), nil },
		},
	}
	op2 := &OpNode{Node: Node{Name: "calc2"}, Input: &g.Ops[0].Node, Op: c2}
	g.Ops = append(g.Ops, op2)
	g.Sinks[0].Input = &op2.Node
	fz := fuse(g)[g.Sources[0]]
	if fz == nil || fz.readers[0].next != c2 || !c2.fused || fz.readers[0].releaser != &g.Sinks[0].Node {
		t.Fatal("the second Calc was not fused, or its reader does not give the rows back")
	}
	got, want, mid, mapped := chainAgainstSerial(g, src, c, c2)
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
		t.Fatalf("fused rows\n%v\nserial\n%v", got, want)
	}
	if fo := fusedOf(mapped); fo.mid != mid || fo.kept != 200 || len(fo.rowTimes) != len(want) {
		t.Fatalf("mid %d, kept %d, %d row times; want %d, 200, %d", fo.mid, fo.kept, len(fo.rowTimes), mid, len(want))
	}

	// A Calc that only filters runs in the decoders too, behind a
	// projecting one: the rows that pass are its input rows, each in
	// memory of its own (not the first Calc's scratch row); behind a
	// Calc that does not project it is left to its node.
	for _, tc := range []struct {
		name    string
		project bool
	}{{"behind a projection", true}, {"behind a filter alone", false}} {
		t.Run(tc.name, func(t *testing.T) {
			var g *Graph
			var src *mappingSource
			var c *Calc
			if tc.project {
				g, src, c = computedGraph(true)
			} else {
				src = &mappingSource{}
				sn := &SourceNode{Node: Node{Name: "s"}, Source: src}
				c = &Calc{Filter: func(r row.Row) (bool, error) { return r[0].Int64() == 2, nil }}
				op := &OpNode{Node: Node{Name: "calc"}, Input: &sn.Node, Op: c}
				g = &Graph{Sources: []*SourceNode{sn}, Ops: []*OpNode{op}, Sinks: []*SinkNode{{Node: Node{Name: "out"}, Input: &op.Node}}}
			}
			filterOnly := &Calc{Filter: func(r row.Row) (bool, error) { return r[1].Int64()%2 == 0, nil }}
			op2 := &OpNode{Node: Node{Name: "calc2"}, Input: &g.Ops[0].Node, Op: filterOnly}
			g.Ops = append(g.Ops, op2)
			g.Sinks[0].Input = &op2.Node
			fz := fuse(g)[g.Sources[0]]
			if !tc.project {
				if fz == nil || fz.readers[0].next != nil || filterOnly.fused {
					t.Fatal("a filter alone was chained behind a Calc that does not project (its rows would be the source's)")
				}
				return
			}
			if fz == nil || fz.readers[0].next != filterOnly || !filterOnly.fused || fz.readers[0].releaser != &g.Sinks[0].Node {
				t.Fatal("the filter was not fused behind the projecting Calc, or its reader does not give the rows back")
			}
			got, want, mid, mapped := chainAgainstSerial(g, src, c, filterOnly)
			if fmt.Sprint(got) != fmt.Sprint(want) || len(want) < 2 || mid == len(want) {
				t.Fatalf("fused rows\n%v\nserial\n%v", got, want)
			}
			if &mapped.Changes[0].Row[0] == &mapped.Changes[1].Row[0] {
				t.Fatal("the rows share memory: the first Calc's scratch row was passed on")
			}
			if fo := fusedOf(mapped); fo.mid != mid || fo.kept != 200 || len(fo.rowTimes) != len(want) {
				t.Fatalf("mid %d, kept %d, %d row times; want %d, 200, %d", fo.mid, fo.kept, len(fo.rowTimes), mid, len(want))
			}
		})
	}
}

// chainAgainstSerial maps 200 rows through src's fused decoders (the
// source's Calc, c, then next, chained) and through the three Calcs one
// after the other: the rows of each, how many rows passed c, and the
// mapped batch.
func chainAgainstSerial(g *Graph, src *mappingSource, c, next *Calc) (got, want []string, mid int, mapped *row.Batch) {
	b := &row.Batch{}
	for i := range 200 {
		b.Append(row.Insert, row.Row{row.BigIntValue(int64(i % 3)), row.BigIntValue(int64(i * 7 % 50)), row.BigIntValue(int64(i))})
	}
	for _, ch := range b.Changes {
		r, _, _ := g.Sources[0].Calc.Apply(ch.Row)
		r1, ok, _ := c.Apply(r)
		if !ok {
			continue
		}
		mid++
		if r2, ok, _ := next.Apply(r1); ok {
			want = append(want, fmt.Sprint(r2))
		}
	}
	mapped = src.mapper(b)
	for _, ch := range mapped.Changes {
		got = append(got, fmt.Sprint(ch.Row))
	}
	return got, want, mid, mapped
}

// TestFusedEarlyFilter: a filter chained behind a fused Calc whose
// projection cannot fail runs once the columns it reads are projected,
// and the other columns are projected only for the rows it keeps: the
// rows are the serial way's. When the projection may fail, every column
// is projected first, so that a row the filter drops still has its
// error (the batch then takes the serial way, which sends it to
// on_error).
func TestFusedEarlyFilter(t *testing.T) {
	for _, tc := range []struct {
		name        string
		infallible  bool
		project     bool // the filter's Calc projects too
		early       bool
		failOnFirst bool
	}{
		{"infallible, filter alone", true, false, true, false},
		{"infallible, filter and projection", true, true, true, false},
		{"may fail", false, false, false, false},
		{"may fail, fails on a dropped row", false, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, src, c := computedGraph(true)
			// The fused Calc projects (c, b, c*2); the third counts its
			// evaluations, and fails on c = 0 when failOnFirst.
			evals := 0
			c.Project = append(c.Project, func(r row.Row) (row.Value, error) {
				evals++
				if tc.failOnFirst && r[3].Int64() == 0 {
					return row.NullValue, fmt.Errorf("c is 0")
				}
				return row.BigIntValue(r[3].Int64() * 2), nil
			})
			c.ProjectInfallible = tc.infallible
			next := &Calc{Filter: func(r row.Row) (bool, error) { return r[1].Int64()%4 == 0, nil }, FilterReads: []int{1}}
			if tc.project {
				next.Project = []func(row.Row) (row.Value, error){
					func(r row.Row) (row.Value, error) { return r[2], nil },
					func(r row.Row) (row.Value, error) { return r[0], nil },
				}
			}
			op2 := &OpNode{Node: Node{Name: "calc2"}, Input: &g.Ops[0].Node, Op: next}
			g.Ops = append(g.Ops, op2)
			g.Sinks[0].Input = &op2.Node
			fz := fuse(g)[g.Sources[0]]
			if fz == nil || fz.readers[0].next != next {
				t.Fatal("the filter was not chained")
			}
			if got := fz.readers[0].early != nil; got != tc.early {
				t.Fatalf("early filter %v, want %v", got, tc.early)
			}
			b := &row.Batch{}
			for i := range 200 {
				b.Append(row.Insert, row.Row{row.BigIntValue(2), row.BigIntValue(int64(i * 7 % 50)), row.BigIntValue(int64(i))})
			}
			if tc.failOnFirst {
				// c = a + b = 0, and b = -1, which the filter drops.
				b.Changes[0].Row = row.Row{row.BigIntValue(2), row.BigIntValue(1), row.BigIntValue(-1)}
			}
			var want []string
			for _, ch := range b.Changes {
				r, _, _ := g.Sources[0].Calc.Apply(ch.Row)
				r1, ok, err := c.Apply(r)
				if err != nil || !ok {
					continue
				}
				if r2, ok, _ := next.Apply(r1); ok {
					want = append(want, fmt.Sprint(r2))
				}
			}
			evals = 0
			mapped := src.mapper(b)
			if tc.failOnFirst {
				if mapped != nil {
					t.Fatal("a batch with a row whose projection failed was mapped: its error would be missed")
				}
				return
			}
			var got []string
			for _, ch := range mapped.Changes {
				got = append(got, fmt.Sprint(ch.Row))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 || len(want) == 200 {
				t.Fatalf("fused rows\n%v\nserial\n%v", got, want)
			}
			wantEvals := 200
			if tc.early {
				wantEvals = len(want)
			}
			if evals != wantEvals {
				t.Errorf("the column the filter does not read was projected %d times, want %d", evals, wantEvals)
			}
		})
	}
}

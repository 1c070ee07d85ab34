package runtime

import (
	"errors"
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// pickingSource is a mappingSource that decodes some columns only
// (connector.ColumnSource): cols is what it was told.
type pickingSource struct {
	mappingSource
	cols []int
}

func (p *pickingSource) SelectColumns(cols []int) bool {
	p.cols = cols
	return true
}

// timedGraph is a source of rows (id, k, amount, ts) with the watermark
// ts - 10 (an error when ts is NULL) and a Calc over it picking
// (amount, k), filtering amount > 2 when filter is set.
func timedGraph(filter, shift bool) (*Graph, *pickingSource, *Calc) {
	src := &pickingSource{}
	cols := row.Schema{Fields: []row.Field{{Name: "id"}, {Name: "k"}, {Name: "amount"}, {Name: "ts"}}}
	sn := &SourceNode{Node: Node{Name: "s"}, Source: src, Columns: cols,
		EventTime: func(r row.Row) (int64, bool, error) {
			if r[3].IsNull() {
				return 0, false, errors.New("ts is NULL")
			}
			return r[3].Int64() - 10, true, nil
		},
		RowTime:   func(r row.Row) int64 { return r[3].Int64() },
		TimeReads: []int{3},
	}
	if shift {
		sn.TimeShift = &TimeShift{Column: 3, Micros: -10}
	}
	pick := func(j int) func(row.Row) (row.Value, error) {
		return func(r row.Row) (row.Value, error) { return r[j], nil }
	}
	c := &Calc{Project: []func(row.Row) (row.Value, error){pick(2), pick(1)}, Columns: []int{2, 1}, Input: cols}
	if filter {
		c.Filter = func(r row.Row) (bool, error) { return r[2].Int64() > 2, nil }
		c.FilterReads, c.InputWidth = []int{2}, 4
	}
	op := &OpNode{Node: Node{Name: "calc"}, Input: &sn.Node, Op: c}
	sink := &SinkNode{Node: Node{Name: "out"}, Input: &op.Node}
	return &Graph{Sources: []*SourceNode{sn}, Ops: []*OpNode{op}, Sinks: []*SinkNode{sink}}, src, c
}

// TestPickedColumnsWatermark: a source with a watermark decodes its
// fused Calc's columns and the event time's after them; the decoders'
// batch has the watermark, the rows' times and the rows of the whole
// rows' way (cut to the Calc's columns), with and without a filter; a
// row whose event time fails sends the batch the serial way, where the
// source reports it as the whole row, NULL where nothing was decoded.
// The same when the watermark is a shifted column, read without calls
// (TimeShift).
func TestPickedColumnsWatermark(t *testing.T) {
	for _, tc := range []struct{ filter, shift bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		filter := tc.filter
		g, src, c := timedGraph(filter, tc.shift)
		if fuse(g) == nil || src.mapper == nil {
			t.Fatal("not fused")
		}
		if p := g.Sources[0].picked; p == nil || (p.shift != nil) != tc.shift {
			t.Fatalf("%+v: times picked %+v", tc, p)
		}
		if fmt.Sprint(src.cols) != "[2 1 3]" || c.Project != nil || c.narrow != 2 {
			t.Fatalf("filter %v: picked %v, project %v, narrow %d; want [2 1 3], none, 2", filter, src.cols, c.Project != nil, c.narrow)
		}
		b := &row.Batch{}
		var want []string
		var wantTimes, wantBefore []int64
		wm := operator.NoWatermark
		for i := range 20 {
			amount, ts := int64(i%5), int64(100+i*3-i%4*7)
			b.Append(row.Insert, row.Row{row.BigIntValue(amount), row.BigIntValue(int64(i)), row.BigIntValue(ts)})
			if !filter || amount > 2 {
				want = append(want, fmt.Sprint(row.Row{row.BigIntValue(amount), row.BigIntValue(int64(i))}))
				wantTimes = append(wantTimes, ts)
				wantBefore = append(wantBefore, wm)
			}
			wm = max(wm, ts-10)
		}
		mapped := src.mapper(b)
		if mapped == nil {
			t.Fatal("not mapped")
		}
		var got []string
		for _, ch := range mapped.Changes {
			got = append(got, fmt.Sprint(ch.Row))
		}
		fo := fusedOf(mapped)
		if fmt.Sprint(got) != fmt.Sprint(want) || fo.wm != wm {
			t.Fatalf("filter %v: rows %v, watermark %d; want %v, %d", filter, got, fo.wm, want, wm)
		}
		// The rows' times are kept only where a cut may come: the rows
		// behind the watermark of those before them; the cuts are those
		// of every row's time and watermark before it.
		var behind int
		for j, rt := range wantTimes {
			if rt <= wantBefore[j] {
				behind++
			}
		}
		if !fo.sparse || fo.before != nil || fo.rowTimes != nil || len(fo.behind) != behind || behind == 0 {
			t.Fatalf("%+v: sparse %v, %d before, %d times, %d behind; want sparse, none, none, %d", tc, fo.sparse, len(fo.before), len(fo.rowTimes), len(fo.behind), behind)
		}
		for _, wm0 := range []int64{operator.NoWatermark, 0, 90, 100, 110, 125, 200} {
			dense := &fusedOrigin{before: wantBefore, rowTimes: wantTimes, wm: wm}
			wantCuts, wantNext := g.Sources[0].fusedCuts(dense, len(want), wm0)
			cuts, next := g.Sources[0].fusedCuts(fo, mapped.Len(), wm0)
			if fmt.Sprint(cuts) != fmt.Sprint(wantCuts) || next != wantNext {
				t.Fatalf("%+v, watermark %d before: cuts %v then %d; want %v then %d", tc, wm0, cuts, next, wantCuts, wantNext)
			}
		}

		bad := &row.Batch{}
		bad.Append(row.Insert, row.Row{row.BigIntValue(3), row.BigIntValue(1), row.BigIntValue(5)})
		bad.Append(row.Insert, row.Row{row.BigIntValue(4), row.BigIntValue(2), row.NullValue})
		if src.mapper(bad) != nil {
			t.Fatal("a batch whose event time failed was mapped")
		}
		_, _, _, err := g.Sources[0].prepare(bad, operator.NoWatermark)
		var br connector.BadRecord
		if !errors.As(err, &br) || fmt.Sprint(br.Row) != fmt.Sprint(row.Row{row.NullValue, row.BigIntValue(2), row.BigIntValue(4), row.NullValue}) {
			t.Fatalf("the serial way's bad record: %v (row %v)", err, br.Row)
		}
	}
}

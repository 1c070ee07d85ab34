package windowop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// A frame's slot holds only the columns the frame reads again (the
// time, the arguments, a filter), whatever the row's width; a snapshot
// and a dump read its rows back at their width, the other columns
// NULL, as they always had them.
func TestOverFrameKeepsOnlyItsColumns(t *testing.T) {
	for _, tc := range []struct {
		name string
		aggs []aggop.AggCall
		time int
		kept []int
	}{
		{"SUM and MAX of one column", []aggop.AggCall{
			{Func: aggop.Sum, Arg: 3, ArgType: optest.TBigInt},
			{Func: aggop.Max, Arg: 3, ArgType: optest.TBigInt},
		}, 0, []int{0, 3}},
		{"time last, a filter, COUNT(*)", []aggop.AggCall{
			{Func: aggop.Min, Arg: 2, ArgType: optest.TBigInt, HasFilter: true, Filter: 1},
			{Func: aggop.CountStar, Arg: -1},
		}, 4, []int{1, 2, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := OverSpec{Keys: []int{5}, TimeCol: tc.time, Rows: true, Preceding: 2, Aggs: tc.aggs}
			g := optest.Must(NewOverAgg(spec, WindowOptions{}))
			out := &optest.Out{}
			for i := range 5 {
				r := make(row.Row, 6)
				for c := range r {
					r[c] = row.BigIntValue(int64(10*i + c))
				}
				r[1] = row.BoolValue(true)
				r[tc.time] = row.TimestampValue(int64(i+1) * 1000)
				r[5] = row.StringValue("p")
				if err := g.Process(optest.Batch(row.Change{Kind: row.Insert, Row: r}), out); err != nil {
					t.Fatal(err)
				}
			}
			if err := g.Watermark(10_000, out); err != nil {
				t.Fatal(err)
			}
			p := g.parts[string(row.KeyOf(nil, row.Row{5: row.StringValue("p")}, spec.Keys))]
			if p == nil || p.frame.n == 0 {
				t.Fatal("no frame")
			}
			if w := len(p.frame.vals) / p.frame.slots; w != len(tc.kept) {
				t.Fatalf("a slot of %d values, want %d (columns %v)", w, len(tc.kept), tc.kept)
			}
			for i := range p.frame.n {
				r := p.frame.at(i)
				if len(r) != 6 {
					t.Fatalf("row %d read back with %d columns, want 6", i, len(r))
				}
				for c, v := range r {
					if kept := slices.Contains(tc.kept, c); kept == v.IsNull() {
						t.Fatalf("row %d column %d: %v (kept %v)", i, c, v, kept)
					}
				}
			}
		})
	}
}

package windowop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestNTile: n rows cut into buckets of sizes differing by one, the
// larger first; more buckets than rows give each row its own.
func TestNTile(t *testing.T) {
	for _, tc := range []struct {
		n, buckets int
		want       []int64
	}{
		{5, 2, []int64{1, 1, 1, 2, 2}},
		{5, 3, []int64{1, 1, 2, 2, 3}},
		{3, 10, []int64{1, 2, 3}},
		{6, 3, []int64{1, 1, 2, 2, 3, 3}},
		{7, 1, []int64{1, 1, 1, 1, 1, 1, 1}},
		{1, 4, []int64{1}},
	} {
		var got []int64
		for pos := range tc.n {
			got = append(got, ntile(pos, tc.n, tc.buckets))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("NTILE(%d) of %d rows: %v, want %v", tc.buckets, tc.n, got, tc.want)
		}
	}
}

// TestWholePartitionFuncs: in batch mode, over a time order and over a
// non-time one, NTILE, PERCENT_RANK and CUME_DIST see the whole
// partition (peers share PERCENT_RANK and CUME_DIST; beside NTILE,
// CUME_DIST counts by position, as Flink), and LAG and LEAD over a
// non-time order read by position; streaming refuses them.
func TestWholePartitionFuncs(t *testing.T) {
	nt, pr, cd := RowFunc{Kind: NTile, Offset: 2}, RowFunc{Kind: PercentRank}, RowFunc{Kind: CumeDist}
	// (k, s, v): partition a has s 1, 3, 3, 5; b one row.
	in := []row.Change{optest.Ins("a", 3, 10), optest.Ins("a", 1, 20), optest.Ins("b", 7, 30), optest.Ins("a", 5, 40), optest.Ins("a", 3, 50)}
	for _, tc := range []struct {
		name  string
		calls []RowFunc
		want  []string
	}{
		{"percent rank, cume dist", []RowFunc{pr, cd}, []string{
			"+I[a, 1, 20, 0.0, 0.25]", "+I[a, 3, 10, 0.3333333333333333, 0.75]", "+I[a, 3, 50, 0.3333333333333333, 0.75]",
			"+I[a, 5, 40, 1.0, 1.0]", "+I[b, 7, 30, 0.0, 1.0]"}},
		{"ntile makes cume dist positional", []RowFunc{nt, cd}, []string{
			"+I[a, 1, 20, 1, 0.25]", "+I[a, 3, 10, 1, 0.5]", "+I[a, 3, 50, 2, 0.75]", "+I[a, 5, 40, 2, 1.0]", "+I[b, 7, 30, 1, 1.0]"}},
		{"lag, lead", []RowFunc{{Kind: Lag, Arg: 2, Offset: 1, Default: -1}, {Kind: Lead, Arg: 2, Offset: 2, Default: 1}}, []string{
			"+I[a, 1, 20, null, 50]", "+I[a, 3, 10, 20, 40]", "+I[a, 3, 50, 10, 3]", "+I[a, 5, 40, 50, 5]", "+I[b, 7, 30, null, 7]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kinds []FuncKind
			for _, c := range tc.calls {
				kinds = append(kinds, c.Kind)
			}
			spec := NonTimeSpec{Keys: []int{0}, Order: 1, Funcs: kinds, Calls: tc.calls}
			if _, err := NewNonTimeOver(spec, WindowOptions{}); err == nil {
				t.Error("streaming: no error")
			}
			g := optest.Must(NewNonTimeOver(spec, WindowOptions{Batch: true}))
			out := &optest.Out{}
			if err := g.Process(optest.Batch(in...), out); err != nil {
				t.Fatal(err)
			}
			if err := g.Finish(out); err != nil {
				t.Fatal(err)
			}
			if got := out.Take(); !slices.Equal(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

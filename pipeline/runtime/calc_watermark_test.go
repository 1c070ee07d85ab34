package runtime

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestCalcReadsWatermark: a Calc that reads the watermark is told each
// one, makes its graph's sources send one wherever theirs rises, and
// keeps every Calc of the graph out of the decoders; a Sequential one
// alone only stays out of them itself.
func TestCalcReadsWatermark(t *testing.T) {
	var seen []int64
	calc := &Calc{OnWatermark: func(wm int64) { seen = append(seen, wm) }, Sequential: true}
	for _, wm := range []int64{5, 9} {
		if err := calc.Watermark(wm, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 2 || seen[0] != 5 || seen[1] != 9 {
		t.Fatalf("OnWatermark saw %v, want [5 9]", seen)
	}
	src := &SourceNode{RowTime: func(row.Row) int64 { return 0 }}
	g := &Graph{Sources: []*SourceNode{src}, Ops: []*OpNode{{Op: calc}}}
	if fused := fuse(g); fused != nil {
		t.Fatalf("fused %v around a Calc that reads the watermark", fused)
	}
	if !src.everyRise || newCutter(src, 0).exact {
		t.Fatal("the source does not cut at every rise of its watermark")
	}
	// Every rise cuts, also before a row above the watermark.
	c := newCutter(src, 0)
	c.check(0, 10)
	c.advance(3)
	c.check(1, 10)
	if len(c.cuts) != 1 || c.cuts[0] != (wmCut{at: 1, wm: 3}) {
		t.Fatalf("cuts %v, want one at row 1 for watermark 3", c.cuts)
	}
	plain := &SourceNode{RowTime: func(row.Row) int64 { return 0 }}
	g = &Graph{Sources: []*SourceNode{plain}, Ops: []*OpNode{{Op: &Calc{Sequential: true}}}}
	if readsWatermark(g) || plain.everyRise {
		t.Fatal("a Sequential Calc that reads no watermark changed its sources")
	}
}

package matchop

import (
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// BenchmarkMatch runs the documentation's greedy (A B* C) pattern over
// 100 partitions of random prices, a watermark after every batch of 1000
// rows.
func BenchmarkMatch(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	base := optest.TS("2018-09-17 10:00:00")
	var batches []*row.Batch
	for i := range 100 {
		var ch []row.Change
		for j := range 1000 {
			ts := base + int64(i*1000+j)*1_000_000
			ch = append(ch, optest.Ins(string(rune('a'+r.IntN(26)))+string(rune('a'+r.IntN(4))), row.TimestampValue(ts), 5+r.IntN(15)))
		}
		batches = append(batches, optest.Batch(ch...))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		op := optest.Must(New(greedySpec(true)))
		out := &optest.Discard{}
		for i, bt := range batches {
			if err := op.Process(bt, out); err != nil {
				b.Fatal(err)
			}
			if err := op.Watermark(base+int64(i+1)*1000*1_000_000-5_000_000, out); err != nil {
				b.Fatal(err)
			}
		}
		if err := op.Finish(out); err != nil {
			b.Fatal(err)
		}
		if out.N == 0 {
			b.Fatal("no match")
		}
	}
	b.ReportMetric(float64(b.N*100_000)/b.Elapsed().Seconds(), "rows/s")
}

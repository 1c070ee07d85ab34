package rankop

import (
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// BenchmarkTopN: a top-3 per key over 100k keys (append-only input) and
// a keep-last deduplication over 1M keys, in 1024-row batches.
//
//	go test -run XXX -bench TopN ./pipeline/runtime/rankop/
func BenchmarkTopN(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const rows = 1 << 20
	batches := make([]*row.Batch, 0, rows/1024)
	for i := 0; i < rows; i += 1024 {
		bt := &row.Batch{Changes: make([]row.Change, 1024)}
		for j := range bt.Changes {
			bt.Changes[j] = row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(rnd.Int64N(100_000)), row.BigIntValue(rnd.Int64N(1_000_000)), row.DoubleValue(rnd.Float64())}}
		}
		batches = append(batches, bt)
	}
	cases := []struct {
		name string
		op   func() operator.Operator
	}{
		{"top3-100k", func() operator.Operator {
			return NewTopN(RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 2, Desc: true}}, Start: 1, End: 3, Kind: RowNumber, Strategy: AppendFast, OutputRank: true})
		}},
		{"dedup-last-1M", func() operator.Operator {
			return NewDedup(DedupSpec{Key: []int{1}, TimeCol: 2, KeepLast: true})
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				op := c.op()
				var out optest.Discard
				for _, bt := range batches {
					if err := op.Process(bt, &out); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

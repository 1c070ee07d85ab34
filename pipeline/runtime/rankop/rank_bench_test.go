package rankop

import (
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// BenchmarkTopN: a top-3 per key over 100k keys (append-only input) and
// a keep-last deduplication over 1M keys, in 1024-row batches; and over
// bids of Nexmark's shape (auction, bidder, price, channel, url, time,
// extra: wide rows with strings) a top-10 with rank numbers (most rows
// entering push the rows below them down a rank) and a top-1 ordered by
// price then time.
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
	names := []string{"Google", "Facebook", "Baidu", "Apple"}
	bids := make([]*row.Batch, 0, rows/1024)
	for i := 0; i < rows; i += 1024 {
		bt := &row.Batch{Changes: make([]row.Change, 1024)}
		for j := range bt.Changes {
			ch := names[rnd.IntN(len(names))]
			bt.Changes[j] = row.Change{Kind: row.Insert, Row: row.Row{
				row.BigIntValue(rnd.Int64N(10_000)), row.BigIntValue(rnd.Int64N(100_000)), row.BigIntValue(rnd.Int64N(10_000_000)),
				row.StringValue(ch), row.StringValue("https://www.nexmark.com/item.htm?query=1&channel_id=" + ch),
				row.TimestampValue(int64(i+j) * 1000), row.StringValue(""),
			}}
		}
		bids = append(bids, bt)
	}
	cases := []struct {
		name string
		in   []*row.Batch
		op   func() operator.Operator
	}{
		{"top3-100k", batches, func() operator.Operator {
			return NewTopN(RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 2, Desc: true}}, Start: 1, End: 3, Kind: RowNumber, Strategy: AppendFast, OutputRank: true})
		}},
		{"dedup-last-1M", batches, func() operator.Operator {
			return NewDedup(DedupSpec{Key: []int{1}, TimeCol: 2, KeepLast: true})
		}},
		{"bids-top10-rank-10k", bids, func() operator.Operator {
			return NewTopN(RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 2, Desc: true}}, Start: 1, End: 10, Kind: RowNumber, Strategy: AppendFast, OutputRank: true})
		}},
		{"bids-top1-price-time-10k", bids, func() operator.Operator {
			return NewTopN(RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 2, Desc: true}, {Col: 5}}, Start: 1, End: 1, Kind: RowNumber, Strategy: AppendFast})
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				op := c.op()
				var out optest.Discard
				for _, bt := range c.in {
					if err := op.Process(bt, &out); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

package windowop

import (
	"fmt"

	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// BenchmarkWindowAgg: 10M rows, 1,000 keys, ts rising 1 ms a row, a
// watermark after every batch.
func BenchmarkWindowAgg(b *testing.B) {
	const total, nkeys = 10_000_000, 1000
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}, {Func: aggop.Max, Arg: 2, ArgType: optest.TBigInt}}
	for _, bc := range []struct {
		name string
		spec WindowSpec
	}{
		{"tumble-1min", WindowSpec{Kind: Tumble, TimeCol: 1, Size: optest.Minute}},
		{"hop-1min-10s", WindowSpec{Kind: Hop, TimeCol: 1, Size: optest.Minute, Slide: optest.Minute / 6}},
		{"cumulate-1h-1min", WindowSpec{Kind: Cumulate, TimeCol: 1, Size: 60 * optest.Minute, Step: optest.Minute}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var rows, emitted int64
			heap0, mallocs0 := optest.MemNow()
			pool := optest.BenchPool(total/1024, 1024, nkeys, 1000)
			cpu0 := optest.CPUNow()
			b.ResetTimer()
			for range b.N {
				g := optest.Must(NewWindowAgg(bc.spec, []int{0}, aggs, WindowOptions{}))
				out := &optest.Discard{}
				for _, batch := range pool {
					if err := g.Process(batch, out); err != nil {
						b.Fatal(err)
					}
					if err := g.Watermark(batch.Changes[len(batch.Changes)-1].Row[1].Micros(), out); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.Watermark(operator.MaxWatermark, out); err != nil {
					b.Fatal(err)
				}
				rows += int64(len(pool) * 1024)
				emitted += out.N
			}
			b.StopTimer()
			optest.ReportRun(b, rows, cpu0, heap0, mallocs0, 0, pool)
			b.ReportMetric(float64(emitted)/float64(b.N), "out-rows/op")
		})
	}
}

// BenchmarkOverAgg: 2M rows, 1,000 keys, ts rising 1 ms a row, a
// watermark after every batch lagging 10 s behind its last row, so that
// some 10,000 rows wait in the queue: every row is pushed into it and
// popped out of it in event-time order.
func BenchmarkOverAgg(b *testing.B) {
	const total, nkeys, lag = 2_000_000, 1000, 10_000_000
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}}
	for _, bc := range []struct {
		name string
		spec OverSpec
	}{
		{"rows-10-preceding", OverSpec{Keys: []int{0}, TimeCol: 1, Rows: true, Preceding: 10, Aggs: aggs}},
		{"range-unbounded", OverSpec{Keys: []int{0}, TimeCol: 1, Preceding: Unbounded, Aggs: aggs}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var rows int64
			heap0, mallocs0 := optest.MemNow()
			pool := optest.BenchPool(total/1024, 1024, nkeys, 1000)
			cpu0 := optest.CPUNow()
			b.ResetTimer()
			for range b.N {
				g := optest.Must(NewOverAgg(bc.spec, WindowOptions{}))
				out := &optest.Discard{}
				for _, batch := range pool {
					if err := g.Process(batch, out); err != nil {
						b.Fatal(err)
					}
					if err := g.Watermark(batch.Changes[len(batch.Changes)-1].Row[1].Micros()-lag, out); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.Watermark(operator.MaxWatermark, out); err != nil {
					b.Fatal(err)
				}
				rows += int64(len(pool) * 1024)
			}
			b.StopTimer()
			optest.ReportRun(b, rows, cpu0, heap0, mallocs0, 0, pool)
		})
	}
}

// BenchmarkSessionAgg: 2M rows, 1,000 keys, ts rising 1 ms a row (a key
// every second), a watermark after every batch. With a gap of 0.5 s every
// row opens a session that fires later (a timer pushed and popped per
// row); with 10 s every row extends its key's session, whose timer comes
// up and is pushed again at the new end. keys-100k is M-session's shape:
// 100,000 keys, a gap of 5 s and the watermark 1 s behind, so that a key
// comes back every 100 s, long after its one-row session fired.
func BenchmarkSessionAgg(b *testing.B) {
	const total = 2_000_000
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}}
	for _, bc := range []struct {
		name     string
		gap, lag int64
		nkeys    int
	}{
		{"gap-0.5s", 500_000, 0, 1000},
		{"gap-10s", 10_000_000, 0, 1000},
		{"keys-100k", 5_000_000, 1_000_000, 100_000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var rows int64
			heap0, mallocs0 := optest.MemNow()
			pool := optest.BenchPool(total/1024, 1024, bc.nkeys, 1000)
			cpu0 := optest.CPUNow()
			b.ResetTimer()
			for range b.N {
				g := optest.Must(NewSessionAgg(1, bc.gap, []int{0}, aggs, WindowOptions{}))
				out := &carveDiscard{}
				for _, batch := range pool {
					if err := g.Process(batch, out); err != nil {
						b.Fatal(err)
					}
					if err := g.Watermark(batch.Changes[len(batch.Changes)-1].Row[1].Micros()-bc.lag, out); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.Watermark(operator.MaxWatermark, out); err != nil {
					b.Fatal(err)
				}
				rows += int64(len(pool) * 1024)
			}
			b.StopTimer()
			optest.ReportRun(b, rows, cpu0, heap0, mallocs0, 0, pool)
		})
	}
}

// BenchmarkWindowAggBatch: a HOP of 10 s sliding 5 s in batch mode
// (every window fires at the end of input), 10M rows, 1,000 keys, ts
// rising 1 ms a row: 2,000 slices of 1,000 groups open at the end. With
// BIGINT keys and with STRING keys (the names "k0".."k999").
func BenchmarkWindowAggBatch(b *testing.B) {
	const total, nkeys = 10_000_000, 1000
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}}
	spec := WindowSpec{Kind: Hop, TimeCol: 1, Size: optest.Minute / 6, Slide: optest.Minute / 12}
	for _, str := range []bool{false, true} {
		name := "hop-bigint"
		if str {
			name = "hop-string"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var rows, emitted int64
			heap0, mallocs0 := optest.MemNow()
			pool := optest.BenchPool(total/1024, 1024, nkeys, 1000)
			if str {
				names := make([]row.Value, nkeys)
				for i := range names {
					names[i] = row.StringValue(fmt.Sprintf("k%d", i))
				}
				for _, batch := range pool {
					for _, c := range batch.Changes {
						c.Row[0] = names[c.Row[0].Int64()]
					}
				}
			}
			cpu0 := optest.CPUNow()
			b.ResetTimer()
			for range b.N {
				g := optest.Must(NewWindowAgg(spec, []int{0}, aggs, WindowOptions{Batch: true}))
				out := &optest.Discard{}
				for _, batch := range pool {
					if err := g.Process(batch, out); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.Watermark(operator.MaxWatermark, out); err != nil {
					b.Fatal(err)
				}
				rows += int64(len(pool) * 1024)
				emitted += out.N
			}
			b.StopTimer()
			optest.ReportRun(b, rows, cpu0, heap0, mallocs0, 0, pool)
			b.ReportMetric(float64(emitted)/float64(b.N), "out-rows/op")
		})
	}
}

// BenchmarkOverAggSorted: a batch run's OVER over input sorted by time
// (as sortop.TimeSorted feeds it), 2M rows, ts rising 1 ms a row, ROWS 9
// PRECEDING with SUM and MAX, over 10, 1,000 and 100,000 partitions (the
// more, the more a row's partition state misses the cache).
func BenchmarkOverAggSorted(b *testing.B) {
	const total = 2_000_000
	aggs := []aggop.AggCall{{Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}, {Func: aggop.Max, Arg: 2, ArgType: optest.TBigInt}}
	spec := OverSpec{Keys: []int{0}, TimeCol: 1, Rows: true, Preceding: 9, Aggs: aggs}
	for _, nkeys := range []int{10, 1000, 100_000} {
		b.Run(fmt.Sprintf("keys-%d", nkeys), func(b *testing.B) {
			b.ReportAllocs()
			var rows int64
			heap0, mallocs0 := optest.MemNow()
			pool := optest.BenchPool(total/1024, 1024, nkeys, 1000)
			cpu0 := optest.CPUNow()
			b.ResetTimer()
			for range b.N {
				g := optest.Must(NewOverAgg(spec, WindowOptions{Batch: true, Sorted: true}))
				out := &optest.Discard{}
				for _, batch := range pool {
					if err := g.Process(batch, out); err != nil {
						b.Fatal(err)
					}
					if err := g.Watermark(batch.Changes[len(batch.Changes)-1].Row[1].Micros(), out); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.Watermark(operator.MaxWatermark, out); err != nil {
					b.Fatal(err)
				}
				rows += int64(len(pool) * 1024)
			}
			b.StopTimer()
			optest.ReportRun(b, rows, cpu0, heap0, mallocs0, 0, pool)
		})
	}
}

// carveDiscard counts rows and lends the memory of the next, as a node's
// emitter does (operator.RowCarver): the output rows cost nothing, so a
// benchmark measures the operator.
type carveDiscard struct {
	optest.Discard
	buf row.Row
}

func (d *carveDiscard) CarveRow(w int) row.Row {
	if cap(d.buf) < w {
		d.buf = make(row.Row, w)
	}
	return d.buf[:w]
}

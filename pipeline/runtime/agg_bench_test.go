//go:build unix

package runtime

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// discard counts what an operator emits.
type discard struct{ n int64 }

func (d *discard) Emit(row.Kind, row.Row) { d.n++ }

// benchPool builds batches of [key, ts, value] rows: keys spread over
// nkeys (every key within the first nkeys rows), ts rising by step µs.
func benchPool(batches, size, nkeys int, step int64) []*row.Batch {
	pool := make([]*row.Batch, batches)
	j := 0
	for i := range pool {
		b := row.NewBatch(size, 3)
		for range size {
			r := b.NewRow()
			r[0] = row.BigIntValue(int64(j * 7919 % nkeys))
			r[1] = row.TimestampValue(int64(j) * step)
			r[2] = row.BigIntValue(int64(j % 1000))
			b.Append(row.Insert, r)
			j++
		}
		pool[i] = b
	}
	return pool
}

// cpuNow is the process's user+system CPU time: on a shared machine rows
// per CPU second say more than rows per wall second.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memNow returns live bytes, the Go heap's and those mapped off it
// (offheap.go), and the count of allocations so far.
func memNow() (live, mallocs uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + uint64(offHeapLive.Load()), m.Mallocs
}

func reportRun(b *testing.B, rows int64, cpu0 time.Duration, heap0, mallocs0 uint64, groups int, keep any) {
	cpu := cpuNow() - cpu0
	heap1, mallocs1 := memNow()
	runtime.KeepAlive(keep)
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	if cpu > 0 {
		b.ReportMetric(float64(rows)/cpu.Seconds(), "rows/cpu-s")
	}
	b.ReportMetric(float64(mallocs1-mallocs0)/float64(rows), "allocs/row")
	if groups > 0 {
		b.ReportMetric(float64(int64(heap1)-int64(heap0))/float64(groups), "state-B/key")
	}
}

// BenchmarkGroupAgg: 10M rows over 100k keys, COUNT(*), SUM, MAX, into a
// discarding emitter. Run with -benchtime=1x: one op is 10M rows.
func BenchmarkGroupAgg(b *testing.B) {
	const total, nkeys = 10_000_000, 100_000
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 2, ArgType: tBigInt}, {Func: Max, Arg: 2, ArgType: tBigInt}}
	pool := benchPool(100, 1024, nkeys, 1)
	for _, bc := range []struct {
		name string
		opt  GroupAggOptions
	}{
		{"streaming", GroupAggOptions{}},
		{"streaming-insert-only", GroupAggOptions{InsertOnly: true}},
		{"batch-insert-only", GroupAggOptions{Batch: true, InsertOnly: true}},
		{"mini-batch-insert-only", GroupAggOptions{InsertOnly: true, MiniBatch: true, MiniBatchSize: 1 << 20}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var rows int64
			var g *GroupAgg
			heap0, mallocs0 := memNow()
			cpu0 := cpuNow()
			b.ResetTimer()
			for range b.N {
				g = NewGroupAgg([]int{0}, aggs, bc.opt)
				out := &discard{}
				for i := 0; i < total/1024; i++ {
					if err := g.Process(pool[i%len(pool)], out); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.Finish(out); err != nil {
					b.Fatal(err)
				}
				rows += total / 1024 * 1024
			}
			b.StopTimer()
			reportRun(b, rows, cpu0, heap0, mallocs0, g.Groups()*b.N, []any{g, pool})
		})
	}
}

// BenchmarkWindowAgg: 10M rows, 1,000 keys, ts rising 1 ms a row, a
// watermark after every batch.
func BenchmarkWindowAgg(b *testing.B) {
	const total, nkeys = 10_000_000, 1000
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 2, ArgType: tBigInt}, {Func: Max, Arg: 2, ArgType: tBigInt}}
	for _, bc := range []struct {
		name string
		spec WindowSpec
	}{
		{"tumble-1min", WindowSpec{Kind: Tumble, TimeCol: 1, Size: minute}},
		{"hop-1min-10s", WindowSpec{Kind: Hop, TimeCol: 1, Size: minute, Slide: minute / 6}},
		{"cumulate-1h-1min", WindowSpec{Kind: Cumulate, TimeCol: 1, Size: 60 * minute, Step: minute}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var rows, emitted int64
			heap0, mallocs0 := memNow()
			pool := benchPool(total/1024, 1024, nkeys, 1000)
			cpu0 := cpuNow()
			b.ResetTimer()
			for range b.N {
				g := NewWindowAgg(bc.spec, []int{0}, aggs, WindowOptions{})
				out := &discard{}
				for _, batch := range pool {
					if err := g.Process(batch, out); err != nil {
						b.Fatal(err)
					}
					if err := g.Watermark(batch.Changes[len(batch.Changes)-1].Row[1].Micros(), out); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.Watermark(MaxWatermark, out); err != nil {
					b.Fatal(err)
				}
				rows += int64(len(pool) * 1024)
				emitted += out.n
			}
			b.StopTimer()
			reportRun(b, rows, cpu0, heap0, mallocs0, 0, pool)
			b.ReportMetric(float64(emitted)/float64(b.N), "out-rows/op")
		})
	}
}

func BenchmarkDistinct(b *testing.B) {
	const total = 10_000_000
	pool := benchPool(100, 1024, 100_000, 0) // ts constant: 100k distinct rows
	b.ReportAllocs()
	var rows int64
	var d *Distinct
	heap0, mallocs0 := memNow()
	cpu0 := cpuNow()
	b.ResetTimer()
	for range b.N {
		d = NewDistinct()
		out := &discard{}
		for i := 0; i < total/1024; i++ {
			if err := d.Process(pool[i%len(pool)], out); err != nil {
				b.Fatal(err)
			}
		}
		rows += total / 1024 * 1024
	}
	b.StopTimer()
	reportRun(b, rows, cpu0, heap0, mallocs0, d.Rows()*b.N, []any{d, pool})
}

// BenchmarkGroupAggBaseline is the floor to compare BenchmarkGroupAgg's
// batch mode with: the same rows into a hand-written map[int64] of
// COUNT, SUM, MAX, emitting nothing.
func BenchmarkGroupAggBaseline(b *testing.B) {
	const total, nkeys = 10_000_000, 100_000
	type acc struct{ n, sum, max int64 }
	pool := benchPool(100, 1024, nkeys, 1)
	b.ReportAllocs()
	var rows int64
	var m map[int64]*acc
	heap0, mallocs0 := memNow()
	cpu0 := cpuNow()
	b.ResetTimer()
	for range b.N {
		m = map[int64]*acc{}
		for i := 0; i < total/1024; i++ {
			for _, c := range pool[i%len(pool)].Changes {
				k, v := c.Row[0].Int64(), c.Row[2].Int64()
				a := m[k]
				if a == nil {
					a = &acc{max: v}
					m[k] = a
				}
				a.n, a.sum, a.max = a.n+1, a.sum+v, max(a.max, v)
			}
		}
		rows += total / 1024 * 1024
	}
	b.StopTimer()
	reportRun(b, rows, cpu0, heap0, mallocs0, len(m)*b.N, []any{m, pool})
}

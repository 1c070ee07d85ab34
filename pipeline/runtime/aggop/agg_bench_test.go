//go:build unix

package aggop

import (
	"testing"

	"github.com/etld/etld/pipeline/runtime/optest"
)

// BenchmarkGroupAgg: 10M rows over 100k keys, COUNT(*), SUM, MAX, into a
// discarding emitter. Run with -benchtime=1x: one op is 10M rows.
func BenchmarkGroupAgg(b *testing.B) {
	const total, nkeys = 10_000_000, 100_000
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 2, ArgType: optest.TBigInt}, {Func: Max, Arg: 2, ArgType: optest.TBigInt}}
	pool := optest.BenchPool(100, 1024, nkeys, 1)
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
			heap0, mallocs0 := optest.MemNow()
			cpu0 := optest.CPUNow()
			b.ResetTimer()
			for range b.N {
				g = optest.Must(NewGroupAgg([]int{0}, aggs, bc.opt))
				out := &optest.Discard{}
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
			optest.ReportRun(b, rows, cpu0, heap0, mallocs0, g.Groups()*b.N, []any{g, pool})
		})
	}
}

func BenchmarkDistinct(b *testing.B) {
	const total = 10_000_000
	pool := optest.BenchPool(100, 1024, 100_000, 0) // ts constant: 100k distinct rows
	b.ReportAllocs()
	var rows int64
	var d *Distinct
	heap0, mallocs0 := optest.MemNow()
	cpu0 := optest.CPUNow()
	b.ResetTimer()
	for range b.N {
		d = NewDistinct()
		out := &optest.Discard{}
		for i := 0; i < total/1024; i++ {
			if err := d.Process(pool[i%len(pool)], out); err != nil {
				b.Fatal(err)
			}
		}
		rows += total / 1024 * 1024
	}
	b.StopTimer()
	optest.ReportRun(b, rows, cpu0, heap0, mallocs0, d.Rows()*b.N, []any{d, pool})
}

// BenchmarkGroupAggBaseline is the floor to compare BenchmarkGroupAgg's
// batch mode with: the same rows into a hand-written map[int64] of
// COUNT, SUM, MAX, emitting nothing.
func BenchmarkGroupAggBaseline(b *testing.B) {
	const total, nkeys = 10_000_000, 100_000
	type acc struct{ n, sum, max int64 }
	pool := optest.BenchPool(100, 1024, nkeys, 1)
	b.ReportAllocs()
	var rows int64
	var m map[int64]*acc
	heap0, mallocs0 := optest.MemNow()
	cpu0 := optest.CPUNow()
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
	optest.ReportRun(b, rows, cpu0, heap0, mallocs0, len(m)*b.N, []any{m, pool})
}

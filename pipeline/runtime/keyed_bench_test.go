package runtime_test

import (
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// keyedBenchPool is batches of size rows [ik BIGINT, sk STRING, ta
// STRING, tb BIGINT, amount BIGINT] over nkeys keys k, as bench/'s
// matrix has them: ik = k, sk = "sensor_<k>", ta = "g<k/10>", tb =
// k%10; each string built once, as a decoder would.
func keyedBenchPool(batches, size, nkeys int) []*row.Batch {
	pool := make([]*row.Batch, batches)
	j := 0
	for i := range pool {
		b := row.NewBatch(size, 5)
		for range size {
			k := j * 7919 % nkeys
			r := b.NewRow()
			r[0] = row.BigIntValue(int64(k))
			r[1] = row.StringValue(fmt.Sprintf("sensor_%d", k))
			r[2] = row.StringValue(fmt.Sprintf("g%d", k/10))
			r[3] = row.BigIntValue(int64(k % 10))
			r[4] = row.BigIntValue(int64(j % 10000))
			b.Append(row.Insert, r)
			j++
		}
		pool[i] = b
	}
	return pool
}

// BenchmarkKeyedGroupAgg: a batch-mode GROUP BY (COUNT, SUM, MAX) of
// 2M rows over 100k keys on 1 and 2 workers, by an integer, a string and
// a two-column key: what the split costs and the second worker gains
// (ns/row: wall time; cpu-ns/row: the process's CPU time).
func BenchmarkKeyedGroupAgg(b *testing.B) {
	const total = 2_000_000
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 4, ArgType: optest.TBigInt}, {Func: aggop.Max, Arg: 4, ArgType: optest.TBigInt}}
	pool := keyedBenchPool(200, 1024, 100_000)
	for _, kc := range []struct {
		name string
		keys []int
	}{{"int", []int{0}}, {"str", []int{1}}, {"two", []int{2, 3}}} {
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s-%dw", kc.name, n), func(b *testing.B) {
				var rows int64
				cpu0 := optest.CPUNow()
				for range b.N {
					k, err := runtime.NewKeyed(kc.keys, n, func() (operator.KeyGrouped, error) {
						return aggop.NewGroupAgg(kc.keys, aggs, aggop.GroupAggOptions{Batch: true, InsertOnly: true})
					})
					if err != nil {
						b.Fatal(err)
					}
					out := &optest.Discard{}
					for i := 0; i < total/1024; i++ {
						if err := k.Process(pool[i%len(pool)], out); err != nil {
							b.Fatal(err)
						}
					}
					if err := k.Finish(out); err != nil {
						b.Fatal(err)
					}
					rows += total / 1024 * 1024
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
				b.ReportMetric(float64((optest.CPUNow()-cpu0).Nanoseconds())/float64(rows), "cpu-ns/row")
			})
		}
	}
}

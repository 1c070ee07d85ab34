//go:build unix

package aggop

import (
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// keyPool is batches of size rows [key STRING, n BIGINT, v BIGINT, c STRING] over
// nkeys keys of prefix and a number (n and c follow the key): each row's key string is built
// once, as a decoder would, and the key is repeated in a scattered order.
// With prefix "#" the key is the number as a BIGINT instead: the same
// keys in the same order, for the integer key the others are held to.
func keyPool(batches, size, nkeys int, prefix string) []*row.Batch {
	pool := make([]*row.Batch, batches)
	j := 0
	for i := range pool {
		b := row.NewBatch(size, 4)
		for range size {
			k := j * 7919 % nkeys
			r := b.NewRow()
			if prefix == "#" {
				r[0] = row.BigIntValue(int64(k))
			} else {
				r[0] = row.StringValue(fmt.Sprintf("%s%d", prefix, k))
			}
			r[1] = row.BigIntValue(int64(k % 10))
			r[2] = row.BigIntValue(int64(j % 1000))
			r[3] = row.StringValue(fmt.Sprintf("c%d", k%3))
			b.Append(row.Insert, r)
			j++
		}
		pool[i] = b
	}
	return pool
}

// BenchmarkGroupAggKeys: batch-mode GROUP BY of a string key (short and
// long, 10 to 1M keys), of a two-column key (STRING, BIGINT), of three
// columns and of two STRINGs, COUNT,
// SUM, MAX, 2M rows an op.
func BenchmarkGroupAggKeys(b *testing.B) {
	const total = 2_000_000
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 2, ArgType: optest.TBigInt}, {Func: Max, Arg: 2, ArgType: optest.TBigInt}}
	for _, bc := range []struct {
		name   string
		keys   []int
		nkeys  int
		prefix string
	}{
		{"int-10", []int{0}, 10, "#"},
		{"int-10k", []int{0}, 10_000, "#"},
		{"int-100k", []int{0}, 100_000, "#"},
		{"int-1M", []int{0}, 1_000_000, "#"},
		{"str-10", []int{0}, 10, ""},
		{"str-10k", []int{0}, 10_000, ""},
		{"str-100k", []int{0}, 100_000, ""},
		{"str-100k-long", []int{0}, 100_000, "sensor_"},
		{"str-1M", []int{0}, 1_000_000, ""},
		{"two-100k", []int{0, 1}, 100_000, "n"},
		{"three-100k", []int{0, 1, 3}, 100_000, "n"},
		{"twostr-100k", []int{3, 0}, 100_000, "n"},
	} {
		pool := keyPool(200, 1024, bc.nkeys, bc.prefix)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var rows int64
			var g *GroupAgg
			cpu0 := optest.CPUNow()
			for range b.N {
				g = optest.Must(NewGroupAgg(bc.keys, aggs, GroupAggOptions{Batch: true, InsertOnly: true}))
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
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
			b.ReportMetric(float64((optest.CPUNow()-cpu0).Nanoseconds())/float64(rows), "cpu-ns/row")
		})
	}
}

//go:build unix

package aggop

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// BenchmarkDistinctStrings: COUNT(DISTINCT name) GROUP BY k over 2M rows
// of 20k keys, about 100 rows and names a key (names "n" and up to two
// base-36 digits: short, kept in their entry's word), and the same with
// names of 12 to 20 bytes (kept in the set's buffer). Run with
// -benchtime=1x: one op is 2M rows.
func BenchmarkDistinctStrings(b *testing.B) {
	const total, nkeys, size = 2_000_000, 20_000, 1024
	for _, long := range []bool{false, true} {
		name := "short"
		if long {
			name = "long"
		}
		r := rand.New(rand.NewPCG(1, 2))
		pool := make([]*row.Batch, total/size)
		for i := range pool {
			cs := make([]row.Change, size)
			for j := range cs {
				s := "n" + strconv.FormatInt(r.Int64N(1000), 36)
				if long {
					s = "name-of-a-value-" + s
				}
				cs[j] = row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(r.Int64N(nkeys)), row.StringValue(s)}}
			}
			pool[i] = &row.Batch{Changes: cs}
		}
		aggs := []AggCall{{Func: Count, Arg: 1, ArgType: optest.TString, Distinct: true}}
		for _, direct := range []bool{false, true} {
			bname := name
			if direct {
				bname += "-direct"
			}
			b.Run(bname, func(b *testing.B) {
				var rows int64
				var g *GroupAgg
				heap0, mallocs0 := optest.MemNow()
				cpu0 := optest.CPUNow()
				b.ResetTimer()
				for range b.N {
					g = optest.Must(NewGroupAgg([]int{0}, aggs, GroupAggOptions{Batch: true, InsertOnly: true}))
					if direct {
						g.store.undefer()
					}
					out := &optest.Discard{}
					for _, in := range pool {
						if err := g.Process(in, out); err != nil {
							b.Fatal(err)
						}
					}
					if err := g.Finish(out); err != nil {
						b.Fatal(err)
					}
					rows += total
				}
				b.StopTimer()
				optest.ReportRun(b, rows, cpu0, heap0, mallocs0, g.Groups()*b.N, []any{g, pool})
			})
		}
	}
}

// undefer has the store apply every set update at once, as before
// DeferSets (tests and benchmarks compare the two).
func (s *Store) undefer() {
	s.settle()
	s.deferring = false
	for gi := range s.sets {
		s.sets[gi].deferred = false
	}
}

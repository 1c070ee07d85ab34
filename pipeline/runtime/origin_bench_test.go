package runtime

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// BenchmarkCalcPositions: what carrying record positions costs a filter
// plus projection (the SQL benchmark's WHERE v > 500 and v * 2), with
// input batches that have an origin (a file or Kafka source) against
// batches without (before positions existed, no tracking was done at
// all; "none" is that path plus one nil check a batch). Both run in the
// same process, so the ratio is fair on a busy machine.
//
//	go test -run '^$' -bench CalcPositions -count 10 ./pipeline/runtime/
func BenchmarkCalcPositions(b *testing.B) {
	plain := optest.BenchPool(64, 1024, 100_000, 1)
	tracked := make([]*row.Batch, len(plain))
	for i, p := range plain {
		pos := row.NewPositions(p.Len(), ":")
		for j := range p.Changes {
			pos.Mark(j+1, "in.csv", int64(j+1))
		}
		t := *p
		t.Origin = pos
		tracked[i] = &t
	}
	for _, bc := range []struct {
		name string
		pool []*row.Batch
	}{{"none", plain}, {"origin", tracked}} {
		b.Run(bc.name, func(b *testing.B) {
			c := &Calc{
				Filter: func(r row.Row) (bool, error) { return r[2].Int64() > 500, nil },
				Project: []func(row.Row) (row.Value, error){
					func(r row.Row) (row.Value, error) { return r[0], nil },
					func(r row.Row) (row.Value, error) { return row.BigIntValue(r[2].Int64() * 2), nil },
				},
			}
			em := newBatchEmitter(1024)
			b.ReportAllocs()
			rows := 0
			for i := 0; b.Loop(); i++ {
				in := bc.pool[i%len(bc.pool)]
				em.begin(in)
				if err := c.Process(in, em); err != nil {
					b.Fatal(err)
				}
				em.take()
				rows += in.Len()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}

package joinop

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// BenchmarkTemporalJoin: 1M orders over 1,000 keys, time rising 1 ms an
// order, a new version of every key each 1,000 orders and a watermark
// after every batch of 1,024 orders (5 ms behind), into a discarding
// emitter. One op is the whole run.
func BenchmarkTemporalJoin(b *testing.B) {
	const total, nkeys, batch = 1_000_000, 1_000, 1024
	orders := make([]*row.Batch, 0, total/batch)
	for i := 0; i < total/batch; i++ {
		bt := &row.Batch{Changes: make([]row.Change, batch)}
		for j := range batch {
			n := int64(i*batch + j)
			bt.Changes[j] = row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(n % nkeys), row.TimestampValue(n * 1000), row.BigIntValue(n)}}
		}
		orders = append(orders, bt)
	}
	versions := func(at int64) *row.Batch {
		bt := &row.Batch{Changes: make([]row.Change, nkeys)}
		for k := range nkeys {
			bt.Changes[k] = row.Change{Kind: row.UpdateAfter, Row: row.Row{row.BigIntValue(int64(k)), row.TimestampValue(at), row.BigIntValue(at)}}
		}
		return bt
	}
	b.ReportAllocs()
	var rows int64
	heap0, mallocs0 := optest.MemNow()
	cpu0 := optest.CPUNow()
	b.ResetTimer()
	var j *TemporalJoin
	for range b.N {
		j = NewTemporalJoin(TemporalJoinSpec{LeftKeys: []int{0}, RightKeys: []int{0}, LeftTime: 1, RightTime: 1, LeftWidth: 3, RightWidth: 3})
		out := &optest.Discard{}
		next := int64(0)
		for i, bt := range orders {
			end := int64((i+1)*batch) * 1000
			for ; next <= end; next += nkeys * 1000 {
				if err := j.ProcessInput(1, versions(next), out); err != nil {
					b.Fatal(err)
				}
			}
			if err := j.ProcessInput(0, bt, out); err != nil {
				b.Fatal(err)
			}
			if err := j.Watermark(end-5000, out); err != nil {
				b.Fatal(err)
			}
		}
		if err := j.Watermark(operator.MaxWatermark, out); err != nil {
			b.Fatal(err)
		}
		if want := int64(total / batch * batch); out.N != want {
			b.Fatalf("joined %d orders, want every one of %d (each key has a version from time 0)", out.N, want)
		}
		rows += total / batch * batch
	}
	b.StopTimer()
	optest.ReportRun(b, rows, cpu0, heap0, mallocs0, 0, []any{j, orders})
}

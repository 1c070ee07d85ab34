package joinop

import (
	"fmt"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// benchBatches cuts n rows made by mk into batches of size rows.
func benchBatches(n, size int, mk func(i int64) row.Row) []*row.Batch {
	var out []*row.Batch
	for at := 0; at < n; at += size {
		bt := &row.Batch{Changes: make([]row.Change, 0, size)}
		for i := at; i < min(at+size, n); i++ {
			bt.Changes = append(bt.Changes, row.Change{Kind: row.Insert, Row: mk(int64(i))})
		}
		out = append(out, bt)
	}
	return out
}

// BenchmarkJoin: 100,000 customers [id, name] on the right, then 1M
// orders [id, cust] in batches of 1,024 on the left, each joining one
// customer, into a discarding emitter. "inner" is the append-only inner
// join the planner makes of two insert-only inputs (its key by bytes;
// "inner-typed" with the columns' types, its key by value); "left-ttl" a left
// join whose sides keep identities and ages (a state TTL on a clock that
// stands still, so every batch ticks and sweeps and nothing expires).
// One op is the whole run.
func BenchmarkJoin(b *testing.B) {
	const orders, customers, batch = 1_000_000, 100_000, 1024
	right := benchBatches(customers, batch, func(i int64) row.Row {
		return row.Row{row.BigIntValue(i), row.StringValue("customer")}
	})
	left := benchBatches(orders, batch, func(i int64) row.Row {
		return row.Row{row.BigIntValue(i), row.BigIntValue(i % customers)}
	})
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		name string
		spec JoinSpec
		ttl  bool
	}{
		{"inner", JoinSpec{Kind: InnerJoin, LeftKeys: []int{1}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
			LeftAppendOnly: true, RightAppendOnly: true}, false},
		// The types the planner gives: the BIGINT key held by value.
		{"inner-typed", JoinSpec{Kind: InnerJoin, LeftKeys: []int{1}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
			LeftAppendOnly: true, RightAppendOnly: true,
			LeftTypes: []row.TypeID{row.BigInt, row.BigInt}, RightTypes: []row.TypeID{row.BigInt, row.String}}, false},
		{"left-ttl", JoinSpec{Kind: LeftJoin, LeftKeys: []int{1}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var rows int64
			heap0, mallocs0 := optest.MemNow()
			cpu0 := optest.CPUNow()
			var j *Join
			for range b.N {
				j = NewJoin(c.spec)
				if c.ttl {
					j.SetStateTTL(operator.StateTTL{TTL: time.Hour, Now: func() time.Time { return now }})
				}
				out := &optest.Discard{}
				for side, bts := range [][]*row.Batch{right, left} {
					for _, bt := range bts {
						if err := j.ProcessInput(1-side, bt, out); err != nil {
							b.Fatal(err)
						}
					}
				}
				if out.N != orders {
					b.Fatalf("joined %d orders, want every one of %d (each has its customer)", out.N, orders)
				}
				rows += orders + customers
			}
			b.StopTimer()
			optest.ReportRun(b, rows, cpu0, heap0, mallocs0, 0, []any{j, left, right})
		})
	}
}

// BenchmarkIntervalJoin: two streams a and b of 500,000 rows [k, ts, id]
// each, a row a millisecond over 50,000 keys (a key's rows are 50 s
// apart), joined on k with a.ts BETWEEN b.ts - 10 s AND b.ts + 5 s:
// batches of 1,024 from each in turn, then a watermark 1 ms behind them,
// into a discarding emitter. Every row joins the other stream's row of
// the same time, and every row sets and later fires its key's cleanup
// timer: the timer heap holds some 20,000 timers throughout. One op is
// the whole run.
func BenchmarkIntervalJoin(b *testing.B) {
	const total, nkeys, batch = 500_000, 50_000, 1024
	mk := func(i int64) row.Row {
		return row.Row{row.BigIntValue(i % nkeys), row.TimestampValue(i * 1000), row.BigIntValue(i)}
	}
	streams := [2][]*row.Batch{benchBatches(total, batch, mk), benchBatches(total, batch, mk)}
	spec := IntervalJoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
		LeftTime: 1, RightTime: 1, Lower: -10_000_000, Upper: 5_000_000}
	b.ReportAllocs()
	var rows int64
	heap0, mallocs0 := optest.MemNow()
	cpu0 := optest.CPUNow()
	b.ResetTimer()
	var j *IntervalJoin
	for range b.N {
		j = NewIntervalJoin(spec)
		out := &optest.Discard{}
		for i := range streams[0] {
			for side := range 2 {
				if err := j.ProcessInput(side, streams[side][i], out); err != nil {
					b.Fatal(err)
				}
			}
			last := streams[0][i].Changes[len(streams[0][i].Changes)-1].Row[1].Micros()
			if err := j.Watermark(last-1000, out); err != nil {
				b.Fatal(err)
			}
		}
		if err := j.Watermark(operator.MaxWatermark, out); err != nil {
			b.Fatal(err)
		}
		if out.N != total || j.StateEntries() != 0 {
			b.Fatalf("joined %d rows, want %d; %d rows left cached, want none", out.N, total, j.StateEntries())
		}
		rows += 2 * total
	}
	b.StopTimer()
	optest.ReportRun(b, rows, cpu0, heap0, mallocs0, 0, []any{j, streams})
}

// BenchmarkJoinState: 2M orders [id, cust] in batches of 1,024 against
// 1k or 1M customers [id, name], each order's customer at random (a
// multiplicative scramble), the key by bytes (no types) or by value
// (the planner's types): a state in the caches against one of a
// million keys, where each change's reads miss (readAhead). One op is
// the whole run; cpu-s/op its CPU.
func BenchmarkJoinState(b *testing.B) {
	const orders, batch = 2_000_000, 1024
	for _, customers := range []int{1000, 1_000_000} {
		right := benchBatches(customers, batch, func(i int64) row.Row {
			return row.Row{row.BigIntValue(i), row.StringValue("customer")}
		})
		left := benchBatches(orders, batch, func(i int64) row.Row {
			return row.Row{row.BigIntValue(i), row.BigIntValue(i * 2654435761 % int64(customers))}
		})
		for _, typed := range []bool{false, true} {
			spec := JoinSpec{Kind: InnerJoin, LeftKeys: []int{1}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
				LeftAppendOnly: true, RightAppendOnly: true}
			name := fmt.Sprintf("keys-%d/by-bytes", customers)
			if typed {
				spec.LeftTypes, spec.RightTypes = []row.TypeID{row.BigInt, row.BigInt}, []row.TypeID{row.BigInt, row.String}
				name = fmt.Sprintf("keys-%d/by-value", customers)
			}
			b.Run(name, func(b *testing.B) {
				cpu0 := optest.CPUNow()
				for range b.N {
					j := NewJoin(spec)
					out := &optest.Discard{}
					for side, bts := range [][]*row.Batch{right, left} {
						for _, bt := range bts {
							if err := j.ProcessInput(1-side, bt, out); err != nil {
								b.Fatal(err)
							}
						}
					}
				}
				b.ReportMetric(float64(optest.CPUNow()-cpu0)/1e9/float64(b.N), "cpu-s/op")
			})
		}
	}
}

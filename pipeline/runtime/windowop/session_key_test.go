package windowop

import (
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

const second = optest.Minute / 60

// TestSessionKeysNotKept: a session's key is the set's key table's bytes,
// with no string of its own, so that a session that opens and fires (a
// key seen once in a gap: M-session's every row) allocates nothing once
// the set's memory is warm; a STRING key decoded from those bytes into
// an output row is copied, so the row keeps its value after the table
// reuses the bytes for other keys.
func TestSessionKeysNotKept(t *testing.T) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}}
	const perBatch = 256
	for _, tc := range []struct {
		name string
		key  func(i int) any
	}{
		{"bigint", func(i int) any { return i % 7000 }},
		{"short string", func(i int) any { return fmt.Sprintf("k%d", i%7000) }},
		{"long string", func(i int) any { return fmt.Sprintf("a key longer than an entry %d", i%7000) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := optest.Must(NewSessionAgg(0, 5*second, []int{1}, aggs, WindowOptions{}))
			// Rows 1 ms apart, keys 7000 rows apart: each its own session,
			// fired when the watermark, 1 s behind, passes its end.
			n := 0
			batch := func() *row.Batch {
				b := &row.Batch{}
				for range perBatch {
					b.Append(row.Insert, optest.Change(row.Insert, row.TimestampValue(int64(n)*1000), tc.key(n), n).Row)
					n++
				}
				return b
			}
			step := func(b *row.Batch, out interface{ Emit(row.Kind, row.Row) }) {
				if err := g.Process(b, out); err != nil {
					t.Fatal(err)
				}
				if err := g.Watermark(b.Changes[len(b.Changes)-1].Row[0].Micros()-second, out); err != nil {
					t.Fatal(err)
				}
			}
			// Rows out: their lines at the emit, and the rows themselves,
			// formatted again after the key table has held other keys.
			out := &optest.Out{}
			for range 80 {
				step(batch(), out)
			}
			if len(out.Rows) < 10000 {
				t.Fatalf("%d sessions fired, want over 10000", len(out.Rows))
			}
			for i, c := range out.Rows {
				if got := c.String(); got != out.Lines[i] {
					t.Fatalf("row %d is %s after later sessions, was %s when emitted", i, got, out.Lines[i])
				}
			}
			if tc.name != "bigint" {
				return // a STRING key's value is a copy: one allocation per row out
			}
			const runs = 20
			pool := make([]*row.Batch, runs+1)
			for i := range pool {
				pool[i] = batch()
			}
			discard := &carveDiscard{}
			next := 0
			allocs := testing.AllocsPerRun(runs, func() {
				step(pool[next], discard)
				next++
			})
			if perRow := allocs / perBatch; perRow > 0.01 {
				t.Errorf("%.3f allocations a row, want none", perRow)
			}
		})
	}
}

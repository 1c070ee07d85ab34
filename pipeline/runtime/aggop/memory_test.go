package aggop

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestAggStateBytes: GROUP BY and DISTINCT report the memory of their
// state (which max_state_bytes holds them to) within a factor of what
// it takes, on the heap and mapped: 200000 keys.
func TestAggStateBytes(t *testing.T) {
	const keys = 200_000
	fill := func(process func(*row.Batch) error) func() {
		return func() {
			for from := 0; from < keys; from += 1000 {
				b := &row.Batch{}
				for k := from; k < from+1000; k++ {
					b.Append(row.Insert, row.Row{row.BigIntValue(int64(k)), row.BigIntValue(int64(k * 3))})
				}
				if err := process(b); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	t.Run("group by", func(t *testing.T) {
		g := optest.Must(NewGroupAgg([]int{0}, []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 1, ArgType: optest.TBigInt}}, GroupAggOptions{}))
		optest.CheckStateBytes(t, g, fill(func(b *row.Batch) error { return g.Process(b, &optest.Discard{}) }))
	})
	t.Run("distinct", func(t *testing.T) {
		d := NewDistinct()
		optest.CheckStateBytes(t, d, fill(func(b *row.Batch) error { return d.Process(b, &optest.Discard{}) }))
	})
}

package joinop

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestTimeJoinStateBytes: the interval, temporal, regular and window joins report
// the memory of their state within a factor of the heap it takes: 20000
// keys, a row of each side per key, held before any watermark.
func TestTimeJoinStateBytes(t *testing.T) {
	const keys = 20000
	type join interface {
		operator.StateMemory
		ProcessInput(input int, in *row.Batch, out operator.Emitter) error
	}
	fill := func(op join, mk func(k int, side int) row.Row) func() {
		return func() {
			for side := range 2 {
				for from := 0; from < keys; from += 1000 {
					b := &row.Batch{}
					for k := from; k < from+1000; k++ {
						b.Append(row.Insert, mk(k, side))
					}
					if err := op.ProcessInput(side, b, &optest.Discard{}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	// [key, time, value]; the window join's [key, window_start, window_end, value].
	timed := func(k, side int) row.Row {
		return row.Row{row.BigIntValue(int64(k)), row.TimestampValue(int64(1000 + side)), row.BigIntValue(int64(k * 3))}
	}
	windowed := func(k, side int) row.Row {
		return row.Row{row.BigIntValue(int64(k)), row.TimestampValue(0), row.TimestampValue(60_000_000), row.BigIntValue(int64(k + side))}
	}
	t.Run("interval", func(t *testing.T) {
		op := NewIntervalJoin(ijSpec(InnerJoin))
		optest.CheckStateBytes(t, op, fill(op, timed))
	})
	t.Run("temporal", func(t *testing.T) {
		op := NewTemporalJoin(TemporalJoinSpec{LeftKeys: []int{0}, RightKeys: []int{0}, LeftTime: 1, RightTime: 1, LeftWidth: 3, RightWidth: 3})
		optest.CheckStateBytes(t, op, fill(op, timed))
	})
	t.Run("regular", func(t *testing.T) {
		op := NewJoin(JoinSpec{Kind: LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3})
		optest.CheckStateBytes(t, op, fill(op, timed))
	})
	t.Run("window", func(t *testing.T) {
		op := NewWindowJoin(wjSpec(InnerJoin))
		optest.CheckStateBytes(t, op, fill(op, windowed))
	})
}

package windowop

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/rankop"
)

// TestWindowStateBytes: every window operator reports the memory of its
// state (operator.StateMemory, which max_state_bytes holds it to), within
// a factor of the heap that state takes: 20000 keys, each with a row in
// an open window, held until a watermark that never comes.
func TestWindowStateBytes(t *testing.T) {
	const keys = 20000
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}}
	// rows: [ts, key, v, window_end]
	batches := func() []*row.Batch {
		var out []*row.Batch
		for from := 0; from < keys; from += 1000 {
			b := &row.Batch{}
			for k := from; k < from+1000; k++ {
				b.Append(row.Insert, row.Row{row.TimestampValue(hhmm("08:00") + int64(k)), row.BigIntValue(int64(k)), row.BigIntValue(int64(k * 3)), row.TimestampValue(hhmm("09:00"))})
			}
			out = append(out, b)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		mk   func() interface {
			operator.Operator
			operator.StateMemory
		}
	}{
		{"tumble", func() interface {
			operator.Operator
			operator.StateMemory
		} {
			return optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, Size: 60 * optest.Minute}, []int{1}, aggs, WindowOptions{}))
		}},
		{"session", func() interface {
			operator.Operator
			operator.StateMemory
		} {
			return optest.Must(NewSessionAgg(0, optest.Minute, []int{1}, aggs, WindowOptions{}))
		}},
		{"session table", func() interface {
			operator.Operator
			operator.StateMemory
		} {
			return optest.Must(NewSessionTable(WindowTable{Spec: WindowSpec{Kind: Session, Gap: optest.Minute}, Keys: []int{1}}))
		}},
		{"over", func() interface {
			operator.Operator
			operator.StateMemory
		} {
			return optest.Must(NewOverAgg(OverSpec{Keys: []int{1}, Preceding: Unbounded, Aggs: aggs}, WindowOptions{}))
		}},
		{"window rank", func() interface {
			operator.Operator
			operator.StateMemory
		} {
			return optest.Must(NewWindowRank(WindowRankSpec{EndCol: 3, Rank: rankop.RankSpec{Partition: []int{1}, Order: []rankop.SortKey{{Col: 2}}, Start: 1, End: 3, Kind: rankop.RowNumber, Strategy: rankop.AppendFast}}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := tc.mk()
			optest.CheckStateBytes(t, op, func() {
				for _, b := range batches() {
					if err := op.Process(b, &optest.Discard{}); err != nil {
						t.Fatal(err)
					}
				}
			})
			if op.StateEntries() < keys {
				t.Errorf("%d state entries, want at least %d", op.StateEntries(), keys)
			}
		})
	}
}

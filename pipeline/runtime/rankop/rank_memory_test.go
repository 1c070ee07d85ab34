package rankop

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestTopNStateBytes: both Top-N operators and deduplication report the
// memory of their state within a factor of what it takes: 20000
// partitions (keys) of two rows each.
func TestTopNStateBytes(t *testing.T) {
	const parts = 20000
	fill := func(op operator.Operator) func() {
		return func() {
			for from := 0; from < parts; from += 1000 {
				b := &row.Batch{}
				for k := from; k < from+1000; k++ {
					for j := range 2 {
						b.Append(row.Insert, row.Row{row.BigIntValue(int64(k)), row.BigIntValue(int64(j)), row.BigIntValue(int64(k*7 + j))})
					}
				}
				if err := op.Process(b, &optest.Discard{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	spec := RankSpec{Partition: []int{0}, Order: []SortKey{{Col: 2, Desc: true}}, Start: 1, End: 3, Kind: RowNumber, Strategy: AppendFast}
	t.Run("append", func(t *testing.T) {
		op := NewTopN(spec)
		optest.CheckStateBytes(t, op, fill(op))
	})
	t.Run("retract", func(t *testing.T) {
		s := spec
		s.Strategy = Retract
		op := NewTopN(s)
		optest.CheckStateBytes(t, op, fill(op))
	})
	t.Run("dedup", func(t *testing.T) {
		op := NewDedup(DedupSpec{Key: []int{0}, TimeCol: 1, KeepLast: true})
		optest.CheckStateBytes(t, op, fill(op))
	})
	t.Run("update", func(t *testing.T) {
		s := spec
		s.Strategy, s.RowKey = UpdateFast, []int{0, 1}
		op := optest.Must(NewUpdatableTopN(s))
		optest.CheckStateBytes(t, op, fill(op))
	})
}

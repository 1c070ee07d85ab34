package windowop

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/rankop"
)

// TestChangeErrorsNameTheRecord: a change an operator refuses is named by
// the operator, the record it came from and its place in the batch.
func TestChangeErrorsNameTheRecord(t *testing.T) {
	count := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}
	tumble := WindowSpec{Kind: Tumble, Size: optest.Minute}
	rank := WindowRankSpec{Rank: rankop.RankSpec{Partition: []int{1}, Order: []rankop.SortKey{{Col: 0}}, Start: 1, End: 1, Kind: rankop.RowNumber}, EndCol: 0}
	for _, tt := range []struct {
		name string
		op   operator.Operator
	}{
		{"window aggregate", optest.Must(NewWindowAgg(tumble, []int{1}, count, WindowOptions{}))},
		{"over aggregate", optest.Must(NewOverAgg(OverSpec{Keys: []int{1}, Rows: true, Preceding: Unbounded, Aggs: count}, WindowOptions{}))},
		{"session window aggregate", optest.Must(NewSessionAgg(0, optest.Minute, []int{1}, count, WindowOptions{}))},
		{"session table", optest.Must(NewSessionTable(WindowTable{Spec: WindowSpec{Kind: Session, Gap: optest.Minute}, Keys: []int{1}}))},
		{"window table", &WindowTable{Spec: tumble}},
		{"window rank", optest.Must(NewWindowRank(rank))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := optest.Batch(optest.Change(row.Insert, row.TimestampValue(0), "k"), optest.Change(row.Delete, row.TimestampValue(0), "k"))
			in.Origin = row.Sequence{Prefix: "in:", First: 7}
			err := tt.op.Process(in, &optest.Out{})
			want := tt.name + ": in:8: change 1: input planned as insert-only carries a -D change"
			if err == nil || err.Error() != want {
				t.Fatalf("Process = %v, want %q", err, want)
			}
		})
	}
}

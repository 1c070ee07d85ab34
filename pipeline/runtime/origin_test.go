package runtime

import (
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestOperatorsCarryPositions: the output batches of a filter (split
// across batches by the emitter's size) and of a group aggregate name the
// source record of each change; a window's results, fired by a
// watermark, name none.
func TestOperatorsCarryPositions(t *testing.T) {
	in := row.NewBatch(6, 2)
	pos := row.NewPositions(6, ":")
	in.Origin = pos
	for i := range 6 {
		r := in.NewRow()
		r[0], r[1] = row.StringValue(fmt.Sprint("k", i%2)), row.BigIntValue(int64(i))
		in.Append(row.Insert, r)
		pos.Mark(in.Len(), "in.csv", int64(10+i)) // line 10 + i
	}
	keepOdd := func(r row.Row) (bool, error) { return r[1].Int64()%2 == 1, nil }
	tests := []struct {
		name string
		op   Operator
		// want: the position of each output change, in order.
		want []string
	}{
		{"filter", &Calc{Filter: keepOdd}, []string{"in.csv:11", "in.csv:13", "in.csv:15"}},
		{"group aggregate", NewGroupAgg([]int{0}, []AggCall{{Func: CountStar, Arg: -1}}, GroupAggOptions{InsertOnly: true}),
			// +I k0, +I k1, then -U/+U of each key per row.
			[]string{"in.csv:10", "in.csv:11", "in.csv:12", "in.csv:12", "in.csv:13", "in.csv:13", "in.csv:14", "in.csv:14", "in.csv:15", "in.csv:15"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			em := newBatchEmitter(2)
			em.begin(in)
			if err := tt.op.Process(in, em); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range em.take() {
				if b.Origin == nil {
					t.Fatalf("output batch %v has no origin", b)
				}
				for i := range b.Changes {
					got = append(got, b.Origin.Position(i))
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("positions %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("window fired by a watermark", func(t *testing.T) {
		em := newBatchEmitter(2)
		em.begin(nil)
		em.Emit(row.Insert, row.Row{row.BigIntValue(1)})
		for _, b := range em.take() {
			if b.Origin != nil {
				t.Errorf("a result of no input batch has origin %v", b.Origin)
			}
		}
	})
}

package windowop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestNullEventTimeIsDropped: a row whose event time is NULL (an outer
// join pads the other side's time attribute with NULL) belongs to no
// window. As in Flink's window operators, which drop it and count it
// (numNullRowTimeRecordsDropped), every window operator drops it and
// counts it in Dropped, and emits what it emits without the row; the
// job goes on.
func TestNullEventTimeIsDropped(t *testing.T) {
	count := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}
	type op interface {
		operator.Operator
		operator.Counters
	}
	for _, tc := range []struct {
		name string
		mk   func() op
	}{
		{"tumble", func() op {
			return optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, Size: optest.Minute}, []int{1}, count, WindowOptions{}))
		}},
		{"session", func() op { return optest.Must(NewSessionAgg(0, optest.Minute, []int{1}, count, WindowOptions{})) }},
		{"session table", func() op {
			return optest.Must(NewSessionTable(WindowTable{Spec: WindowSpec{Kind: Session, Gap: optest.Minute}, Keys: []int{1}}))
		}},
		{"over", func() op {
			return optest.Must(NewOverAgg(OverSpec{Keys: []int{1}, Preceding: Unbounded, Aggs: count}, WindowOptions{}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(withNull bool) ([]string, op) {
				g := tc.mk()
				out := &optest.Out{}
				rows := []row.Change{optest.Change(row.Insert, row.TimestampValue(hhmm("08:00")), "a")}
				if withNull {
					rows = append(rows, optest.Change(row.Insert, nil, "a"))
				}
				rows = append(rows, optest.Change(row.Insert, row.TimestampValue(hhmm("08:00")+1000), "a"))
				if err := g.Process(optest.Batch(rows...), out); err != nil {
					t.Fatalf("Process: %v", err)
				}
				if err := g.Watermark(hhmm("09:00"), out); err != nil {
					t.Fatalf("Watermark: %v", err)
				}
				return out.Lines, g
			}
			want, _ := run(false)
			got, g := run(true)
			if !slices.Equal(got, want) || len(want) == 0 {
				t.Errorf("with a NULL-time row emitted %q, want %q as without it", got, want)
			}
			if n, why := g.Dropped(); n != 1 || why == "" {
				t.Errorf("Dropped() = %d, %q; want the NULL-time row counted", n, why)
			}
		})
	}
}

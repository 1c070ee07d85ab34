package windowop

import (
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestNullEventTime: a row whose event time is NULL (an outer join pads
// the other side's time attribute with NULL) belongs to no window. What
// happens to it is what Flink 2.3 does with an outer interval join's
// padded time column: the SESSION table function and the OVER aggregate
// drop it and count it (Dropped) and emit what they emit without it, the
// job going on; the window aggregates fail the job, as Flink's do
// ("RowTime field should not be null", conformance/cases/
// state-window-null-rowtime-*), with an error that says why and what to
// do.
func TestNullEventTime(t *testing.T) {
	count := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}
	type op interface {
		operator.Operator
		operator.Counters
	}
	for _, tc := range []struct {
		name  string
		mk    func() op
		fails bool
	}{
		{"tumble", func() op {
			return optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, Size: optest.Minute}, []int{1}, count, WindowOptions{}))
		}, true},
		{"session", func() op { return optest.Must(NewSessionAgg(0, optest.Minute, []int{1}, count, WindowOptions{})) }, true},
		{"session table", func() op {
			return optest.Must(NewSessionTable(WindowTable{Spec: WindowSpec{Kind: Session, Gap: optest.Minute}, Keys: []int{1}}))
		}, false},
		{"over", func() op {
			return optest.Must(NewOverAgg(OverSpec{Keys: []int{1}, Preceding: Unbounded, Aggs: count}, WindowOptions{}))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(withNull bool) ([]string, op, error) {
				g := tc.mk()
				out := &optest.Out{}
				rows := []row.Change{optest.Change(row.Insert, row.TimestampValue(hhmm("08:00")), "a")}
				if withNull {
					rows = append(rows, optest.Change(row.Insert, nil, "a"))
				}
				rows = append(rows, optest.Change(row.Insert, row.TimestampValue(hhmm("08:00")+1000), "a"))
				if err := g.Process(optest.Batch(rows...), out); err != nil {
					return nil, g, err
				}
				if err := g.Watermark(hhmm("09:00"), out); err != nil {
					t.Fatalf("Watermark: %v", err)
				}
				return out.Lines, g, nil
			}
			want, _, err := run(false)
			if err != nil {
				t.Fatal(err)
			}
			got, g, err := run(true)
			if tc.fails {
				if err == nil || !strings.Contains(err.Error(), "event time is NULL") || !strings.Contains(err.Error(), "IS NOT NULL") {
					t.Fatalf("Process = %v, want the job to fail saying the event time is NULL and what to do", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Process: %v", err)
			}
			if !slices.Equal(got, want) || len(want) == 0 {
				t.Errorf("with a NULL-time row emitted %q, want %q as without it", got, want)
			}
			if n, why := g.Dropped(); n != 1 || why == "" {
				t.Errorf("Dropped() = %d, %q; want the NULL-time row counted", n, why)
			}
		})
	}
}

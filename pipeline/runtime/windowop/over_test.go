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

// overStep is a row (key, "hh:mm" event time on 2020-04-15, value) or,
// with key "", a watermark at the time.
type overStep = sessionStep

// runOver feeds steps ([ts, key, v] rows) to an OVER aggregate,
// snapshotting and restoring into a fresh operator after step
// restoreAfter (-1: never), and returns what it emitted, rows shown as
// "hh:mm key v results...", with "-- wm" lines before each watermark's
// output, and the late count.
func runOver(t *testing.T, spec OverSpec, opt WindowOptions, steps []overStep, restoreAfter int) ([]string, int64) {
	t.Helper()
	mk := func() *OverAgg { return optest.Must(NewOverAgg(spec, opt)) }
	g := mk()
	out := &optest.Out{}
	var log []string
	flush := func(what string) {
		if lines := out.Take(); len(lines) > 0 {
			log = append(log, "-- "+what)
			for _, l := range lines {
				log = append(log, strings.ReplaceAll(l, "2020-04-15T", ""))
			}
		}
	}
	for i, s := range steps {
		if s.key == "" {
			if err := g.Watermark(hhmm(s.at), out); err != nil {
				t.Fatal(err)
			}
			flush("wm " + s.at)
		} else {
			c := optest.Change(row.Insert, row.TimestampValue(hhmm(s.at)), s.key, s.v)
			if err := g.Process(optest.Batch(c), out); err != nil {
				t.Fatal(err)
			}
			if len(out.Lines) > 0 {
				t.Fatalf("output on a row: %q", out.Lines)
			}
		}
		if i == restoreAfter {
			state, err := g.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			g = mk()
			if err := g.Restore(state); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := g.Watermark(operator.MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	flush("end")
	if g.queue.Len() != 0 {
		t.Fatalf("%d rows left waiting at the end", g.queue.Len())
	}
	n, _ := g.Dropped()
	return log, n
}

var (
	overSum   = aggop.AggCall{Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}
	overCount = aggop.AggCall{Func: aggop.CountStar, Arg: -1}
	overMax   = aggop.AggCall{Func: aggop.Max, Arg: 2, ArgType: optest.TBigInt}
	overFirst = aggop.AggCall{Func: aggop.FirstValue, Arg: 2, ArgType: optest.TBigInt}
	overLast  = aggop.AggCall{Func: aggop.LastValue, Arg: 2, ArgType: optest.TBigInt}
)

func TestOverAgg(t *testing.T) {
	tests := []struct {
		name  string
		spec  OverSpec
		steps []overStep
		want  []string
		late  int64
	}{{
		name: "ROWS 1 PRECEDING: equal times in arrival order, each seeing those before it",
		spec: OverSpec{Keys: []int{1}, Rows: true, Preceding: 1, Aggs: []aggop.AggCall{overSum, overCount, overMax}},
		steps: []overStep{{"a", "08:00", 5}, {"a", "08:01", 1}, {"b", "08:01", 7}, {"a", "08:01", 2},
			wmStep("08:01"), {"a", "08:03", 4}, wmStep("08:02")},
		want: []string{
			"-- wm 08:01", "+I[08:00, a, 5, 5, 1, 5]", "+I[08:01, a, 1, 6, 2, 5]", "+I[08:01, b, 7, 7, 1, 7]", "+I[08:01, a, 2, 3, 2, 2]",
			"-- end", "+I[08:03, a, 4, 6, 2, 4]",
		},
	}, {
		// A bounded frame drops a row at or below the time of its
		// partition's last emitted row (Flink's lastTriggeringTs): a and
		// 08:03, a at 08:04; b at 08:03 is behind the watermark but b has
		// emitted nothing yet, so it counts, at the next watermark.
		name: "rows arriving out of order are emitted in event-time order; a row at or behind its partition's last emitted time is late",
		spec: OverSpec{Keys: []int{1}, Rows: true, Preceding: 2, Aggs: []aggop.AggCall{overSum, overFirst, overLast}},
		steps: []overStep{{"a", "08:05", 5}, {"a", "08:02", 2}, {"a", "08:04", 4}, wmStep("08:04"),
			{"a", "08:03", 3}, {"a", "08:04", 40}, {"b", "08:03", 7}, {"a", "08:06", 6}},
		want: []string{
			"-- wm 08:04", "+I[08:02, a, 2, 2, 2, 2]", "+I[08:04, a, 4, 6, 2, 4]",
			"-- end", "+I[08:03, b, 7, 7, 7, 7]", "+I[08:05, a, 5, 11, 2, 5]", "+I[08:06, a, 6, 15, 4, 6]",
		},
		late: 2,
	}, {
		name: "RANGE 2 minutes: rows of equal time are peers; the frame starts at ts - 2 min inclusive",
		spec: OverSpec{Keys: []int{1}, Preceding: 2 * optest.Minute, Aggs: []aggop.AggCall{overSum, overCount}},
		steps: []overStep{{"a", "08:00", 1}, {"a", "08:01", 2}, {"a", "08:02", 4}, {"a", "08:02", 8},
			{"a", "08:03", 16}, {"a", "08:05", 32}, {"b", "08:02", 64}},
		want: []string{
			"-- end", "+I[08:00, a, 1, 1, 1]", "+I[08:01, a, 2, 3, 2]",
			"+I[08:02, a, 4, 15, 4]", "+I[08:02, a, 8, 15, 4]", "+I[08:02, b, 64, 64, 1]",
			"+I[08:03, a, 16, 30, 4]", "+I[08:05, a, 32, 48, 2]",
		},
	}, {
		// An unbounded frame drops a row at or below the watermark (the
		// one at 08:01 after the watermark 08:01).
		name: "RANGE UNBOUNDED: a running total, peers together",
		spec: OverSpec{Preceding: Unbounded, Aggs: []aggop.AggCall{overSum, overMax}},
		steps: []overStep{{"a", "08:00", 1}, {"b", "08:01", 2}, {"a", "08:01", 4}, wmStep("08:01"), {"a", "08:01", 100},
			{"a", "08:02", 8}},
		want: []string{
			"-- wm 08:01", "+I[08:00, a, 1, 1, 1]", "+I[08:01, b, 2, 7, 4]", "+I[08:01, a, 4, 7, 4]",
			"-- end", "+I[08:02, a, 8, 15, 8]",
		},
		late: 1,
	}, {
		name: "ROWS UNBOUNDED with LAG(v), LAG(v, 2, v)",
		spec: OverSpec{Keys: []int{1}, Rows: true, Preceding: Unbounded, Aggs: []aggop.AggCall{overCount},
			Funcs: []RowFunc{{Arg: 2, Offset: 1, Default: -1}, {Arg: 2, Offset: 2, Default: 2}}},
		steps: []overStep{{"a", "08:00", 1}, {"a", "08:01", 2}, {"b", "08:01", 9}, {"a", "08:02", 3}, {"a", "08:03", 4}},
		want: []string{
			"-- end", "+I[08:00, a, 1, 1, null, 1]", "+I[08:01, a, 2, 2, 1, 2]", "+I[08:01, b, 9, 1, null, 9]",
			"+I[08:02, a, 3, 3, 2, 1]", "+I[08:03, a, 4, 4, 3, 2]",
		},
	}, {
		// Flink's RowTimeRangeBoundedPrecedingFunction registers a
		// cleanup timer at ts + 1.5 * 2 min + 1 ms, a new one whenever the
		// current one is before ts + 2 min + 1 ms. A superseded timer
		// (08:03.001, from the row at 08:00) still fires and moves the
		// last triggering time, so the row at 08:03 is late though the
		// partition emitted only up to 08:02; the current one (08:05.001)
		// clears the partition, so the row at 08:04, behind the watermark,
		// is taken and counts alone.
		name: "RANGE 2 minutes: the cleanup timers move the last triggering time and clear the partition",
		spec: OverSpec{Keys: []int{1}, Preceding: 2 * optest.Minute, Aggs: []aggop.AggCall{overCount}},
		steps: []overStep{{"a", "08:00", 1}, {"a", "08:02", 2}, wmStep("08:04"), {"a", "08:03", 3},
			wmStep("08:10"), {"a", "08:04", 4}},
		want: []string{
			"-- wm 08:04", "+I[08:00, a, 1, 1]", "+I[08:02, a, 2, 2]",
			"-- end", "+I[08:04, a, 4, 1]",
		},
		late: 1,
	}, {
		name:  "MAX over a sliding frame forgets a retracted maximum",
		spec:  OverSpec{Rows: true, Preceding: 1, Aggs: []aggop.AggCall{overMax}},
		steps: []overStep{{"a", "08:00", 9}, {"a", "08:01", 1}, {"a", "08:02", 2}, {"a", "08:03", 0}},
		want:  []string{"-- end", "+I[08:00, a, 9, 9]", "+I[08:01, a, 1, 9]", "+I[08:02, a, 2, 2]", "+I[08:03, a, 0, 2]"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for restore := -1; restore < len(tt.steps); restore++ {
				got, late := runOver(t, tt.spec, WindowOptions{}, tt.steps, restore)
				if !slices.Equal(got, tt.want) || late != tt.late {
					t.Fatalf("restore after step %d: got (late %d)\n%s\nwant (late %d)\n%s", restore, late, strings.Join(got, "\n"), tt.late, strings.Join(tt.want, "\n"))
				}
			}
		})
	}
}

// TestOverAggBatch: in batch mode no row is late.
func TestOverAggBatch(t *testing.T) {
	spec := OverSpec{Rows: true, Preceding: Unbounded, Aggs: []aggop.AggCall{overSum}}
	steps := []overStep{{"a", "08:05", 5}, wmStep("08:30"), {"a", "08:01", 1}}
	got, late := runOver(t, spec, WindowOptions{Batch: true}, steps, -1)
	want := []string{"-- end", "+I[08:01, a, 1, 1]", "+I[08:05, a, 5, 6]"}
	if !slices.Equal(got, want) || late != 0 {
		t.Fatalf("got (late %d)\n%s\nwant\n%s", late, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestOverAggErrors(t *testing.T) {
	if _, err := NewOverAgg(OverSpec{Rows: true, Preceding: -5}, WindowOptions{}); err == nil || !strings.Contains(err.Error(), "bad window") {
		t.Fatalf("negative preceding: %v", err)
	}
	g := optest.Must(NewOverAgg(OverSpec{Rows: true, Preceding: 1, Aggs: []aggop.AggCall{overCount}}, WindowOptions{}))
	err := g.Process(optest.Batch(optest.Change(row.UpdateAfter, row.TimestampValue(hhmm("08:00")))), &optest.Out{})
	if err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Fatalf("a +U: %v", err)
	}
	if err := g.Restore([]byte{9}); err == nil {
		t.Fatal("a bad state version restored")
	}
}

// A snapshot of a bounded RANGE frame taken before the cleanup timers
// were kept (version 3) still restores: each partition's last emitted
// time is its last triggering time, as it was then, and it has no timer.
func TestOverAggRestoresRangeWithoutCleanupTimers(t *testing.T) {
	spec := OverSpec{Keys: []int{1}, Preceding: 2 * optest.Minute, Aggs: []aggop.AggCall{overCount}}
	g := optest.Must(NewOverAgg(spec, WindowOptions{}))
	out := &optest.Out{}
	for _, s := range []overStep{{"a", "08:00", 1}, {"a", "08:02", 2}} {
		if err := g.Process(optest.Batch(optest.Change(row.Insert, row.TimestampValue(hhmm(s.at)), s.key, s.v)), out); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Watermark(hhmm("08:02"), out); err != nil {
		t.Fatal(err)
	}
	snap, err := g.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if snap[0] != overStateVersion+overCleanupShift {
		t.Fatalf("version %d, want %d", snap[0], overStateVersion+overCleanupShift)
	}
	parts := []*overPart{g.parts[g.st.Keys[0]]}
	old := slices.Clone(snap[:len(snap)-len(g.appendCleanup(nil, parts))])
	old[0] = overStateVersion
	r := optest.Must(NewOverAgg(spec, WindowOptions{}))
	if err := r.Restore(old); err != nil {
		t.Fatalf("version 3: %v", err)
	}
	rows := []overStep{{"a", "08:02", 3}, {"a", "08:03", 4}}
	for _, s := range rows {
		if err := r.Process(optest.Batch(optest.Change(row.Insert, row.TimestampValue(hhmm(s.at)), s.key, s.v)), out); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := r.Dropped(); n != 1 {
		t.Errorf("%d late rows, want 1 (the one at the last emitted time, 08:02)", n)
	}
	out.Take()
	if err := r.Watermark(hhmm("08:03"), out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.Take(), []string{"+I[2020-04-15T08:03, a, 4, 2]"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

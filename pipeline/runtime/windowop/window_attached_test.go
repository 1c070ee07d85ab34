package windowop

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// attachedRow is a row a window join emitted: [k, window_start,
// window_end, v].
func attachedRow(k string, start, end string, v int) row.Change {
	return optest.Change(row.Insert, k, row.TimestampValue(wmAt(start)), row.TimestampValue(wmAt(end)), v)
}

// TestWindowAggAttached: over rows that carry their window (a window
// join's output), each row counts in that window only, whatever the
// spec would assign to its window_end, and the window fires once the
// watermark reaches its end.
func TestWindowAggAttached(t *testing.T) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 3, ArgType: row.Type{ID: row.BigInt}}}
	// Keys: k, then window_start; the time column is window_end.
	newAgg := func(spec WindowSpec, ltz bool) *WindowAgg {
		spec.TimeCol = 2
		return optest.Must(NewWindowAgg(spec, []int{0, 1}, aggs, WindowOptions{Attached: true, AttachedLTZ: ltz}))
	}
	t.Run("hop windows are not assigned again", func(t *testing.T) {
		// HOP 10 min every 5 min: re-assigning window_end 08:10 would put
		// the row in [08:05, 08:15) and [08:10, 08:20) too.
		g := newAgg(WindowSpec{Kind: Hop, Size: 10 * optest.Minute, Slide: 5 * optest.Minute}, false)
		runWindowSteps(t, g, []windowStep{
			{rows: []row.Change{
				attachedRow("a", "08:00:00", "08:10:00", 1),
				attachedRow("a", "08:05:00", "08:15:00", 2),
				attachedRow("b", "08:00:00", "08:10:00", 4),
				attachedRow("a", "08:00:00", "08:10:00", 8),
			}},
			{wm: wmAt("08:09:59")},
			{wm: wmAt("08:10:00"), want: []string{
				"+I[a, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 2, 9]",
				"+I[b, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 1, 4]",
			}},
			{rows: []row.Change{attachedRow("a", "08:00:00", "08:10:00", 16)}}, // late
			{wm: operator.MaxWatermark, want: []string{"+I[a, 2020-04-15T08:05, 2020-04-15T08:15, 2020-04-15T08:14:59.999, 1, 2]"}},
		})
		if n, _ := g.Dropped(); n != 1 {
			t.Errorf("dropped %d rows, want the late one", n)
		}
	})
	t.Run("cumulate windows of one cycle stay apart", func(t *testing.T) {
		g := newAgg(WindowSpec{Kind: Cumulate, Size: 10 * optest.Minute, Step: 5 * optest.Minute}, true)
		runWindowSteps(t, g, []windowStep{
			{rows: []row.Change{
				attachedRow("a", "08:00:00", "08:05:00", 1),
				attachedRow("a", "08:00:00", "08:10:00", 1),
				attachedRow("a", "08:00:00", "08:10:00", 2),
			}},
			{wm: wmAt("08:05:00"), want: []string{"+I[a, 2020-04-15T08:00, 2020-04-15T08:05, 2020-04-15T08:04:59.999Z, 1, 1]"}},
			{wm: wmAt("08:10:00"), want: []string{"+I[a, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999Z, 2, 3]"}},
		})
	})
	t.Run("restores open windows", func(t *testing.T) {
		spec := WindowSpec{Kind: Tumble, Size: 10 * optest.Minute}
		g := newAgg(spec, false)
		out := &optest.Out{}
		if err := g.Process(optest.Batch(attachedRow("a", "08:00:00", "08:10:00", 5), attachedRow("a", "08:10:00", "08:20:00", 6)), out); err != nil {
			t.Fatal(err)
		}
		snap, err := g.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		h := newAgg(spec, false)
		if err := h.Restore(snap); err != nil {
			t.Fatal(err)
		}
		runWindowSteps(t, h, []windowStep{
			{rows: []row.Change{attachedRow("a", "08:00:00", "08:10:00", 7)}},
			{wm: operator.MaxWatermark, want: []string{
				"+I[a, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 2, 12]",
				"+I[a, 2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 1, 6]",
			}},
		})
	})
}

// TestWindowAggKeepsNoInputRow checks what ReleasesInput promises: once
// Process returned, the batch's rows may be overwritten (their slab
// given to the next batch) and the windows still emit what they were
// given: STRING keys and a STRING MAX, in batch mode and streaming.
func TestWindowAggKeepsNoInputRow(t *testing.T) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Max, Arg: 2, ArgType: row.Type{ID: row.String}}}
	spec := WindowSpec{Kind: Hop, TimeCol: 0, Size: 2 * optest.Minute, Slide: optest.Minute}
	run := func(batch, clobber bool) []string {
		g := optest.Must(NewWindowAgg(spec, []int{1}, aggs, WindowOptions{Batch: batch}))
		if !g.ReleasesInput() {
			t.Fatal("ReleasesInput is false")
		}
		out := &optest.Out{}
		// The strings point into one block, as a decoder's do, which
		// the next batch's bytes overwrite.
		block := make([]byte, 64)
		for i := range 40 {
			n := copy(block, fmt.Sprintf("key-%d", i%3))
			m := copy(block[n:], fmt.Sprintf("value %02d", (i*7)%40))
			name, val := unsafe.String(&block[0], n), unsafe.String(&block[n], m)
			b := optest.Batch(row.Change{Kind: row.Insert, Row: row.Row{row.TimestampValue(int64(i) * optest.Minute / 4), row.StringValue(name), row.StringValue(val)}})
			if err := g.Process(b, out); err != nil {
				t.Fatal(err)
			}
			if clobber {
				for _, c := range b.Changes {
					for j := range c.Row {
						c.Row[j] = row.StringValue("clobbered")
					}
				}
				copy(block, "################################")
			}
		}
		if err := g.Watermark(operator.MaxWatermark, out); err != nil {
			t.Fatal(err)
		}
		return out.Take()
	}
	for _, batch := range []bool{true, false} {
		want := run(batch, false)
		if got := run(batch, true); !slices.Equal(got, want) || len(want) == 0 {
			t.Fatalf("batch %v: rows overwritten after Process change the output\n%q\nwant\n%q", batch, got, want)
		}
		for _, l := range want {
			if strings.Contains(l, "clobbered") || strings.Contains(l, "#") {
				t.Fatalf("batch %v: %s", batch, l)
			}
		}
	}
}

package windowop

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// bids is Flink's Bid table of the window TVF docs: bidtime, price, item.
var bids = []row.Change{
	optest.Change(row.Insert, row.TimestampValue(optest.TS("2020-04-15 08:05:00")), optest.Dec(400, 2), "C"),
	optest.Change(row.Insert, row.TimestampValue(optest.TS("2020-04-15 08:07:00")), optest.Dec(200, 2), "A"),
	optest.Change(row.Insert, row.TimestampValue(optest.TS("2020-04-15 08:09:00")), optest.Dec(500, 2), "D"),
	optest.Change(row.Insert, row.TimestampValue(optest.TS("2020-04-15 08:11:00")), optest.Dec(300, 2), "B"),
	optest.Change(row.Insert, row.TimestampValue(optest.TS("2020-04-15 08:13:00")), optest.Dec(100, 2), "E"),
	optest.Change(row.Insert, row.TimestampValue(optest.TS("2020-04-15 08:17:00")), optest.Dec(600, 2), "F"),
}

// runBids feeds the Bid rows one at a time, each followed by the Bid
// table's watermark (bidtime - 1 s), then the final watermark, and
// returns the output with "-- wm" lines marking the watermarks that fired
// something.
func runBids(t *testing.T, spec WindowSpec, keys []int, aggs []aggop.AggCall, in []row.Change) []string {
	t.Helper()
	g := optest.Must(NewWindowAgg(spec, keys, aggs, WindowOptions{}))
	out := &optest.Out{}
	var log []string
	watermark := func(wm int64) {
		if err := g.Watermark(wm, out); err != nil {
			t.Fatal(err)
		}
		if lines := out.Take(); len(lines) > 0 {
			name := "max"
			if wm != operator.MaxWatermark {
				name = row.TimestampValue(wm).String()
			}
			log = append(log, "-- wm "+name)
			log = append(log, lines...)
		}
	}
	for _, c := range in {
		if err := g.Process(optest.Batch(c), out); err != nil {
			t.Fatal(err)
		}
		if len(out.Lines) > 0 {
			t.Fatalf("output before a watermark: %q", out.Lines)
		}
		watermark(c.Row[0].Micros() - 1_000_000)
	}
	watermark(operator.MaxWatermark)
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	if len(out.Lines) > 0 {
		t.Fatalf("Finish after the final watermark emitted %q", out.Lines)
	}
	if len(g.slices) != 0 || len(g.pending) != 0 || len(g.cycles) != 0 || len(g.st.Free) != int(g.st.Slots) {
		t.Fatalf("state left after the final watermark: %d windows, %d cycles, %d of %d slots in use",
			len(g.slices), len(g.cycles), int(g.st.Slots)-len(g.st.Free), g.st.Slots)
	}
	return log
}

var sumPrice = []aggop.AggCall{{Func: aggop.Sum, Arg: 1, ArgType: optest.TDec(10, 2)}}

// TestWindowBidDocs reproduces the aggregates of Flink's window TVF docs.
func TestWindowBidDocs(t *testing.T) {
	tests := []struct {
		name string
		spec WindowSpec
		want []string
	}{{
		name: "TUMBLE 10 min",
		spec: WindowSpec{Kind: Tumble, Size: 10 * optest.Minute},
		want: []string{
			"-- wm 2020-04-15T08:10:59",
			"+I[2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 11.00]",
			"-- wm max",
			"+I[2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 10.00]",
		},
	}, {
		name: "TUMBLE 10 min offset 1 min",
		spec: WindowSpec{Kind: Tumble, Size: 10 * optest.Minute, Offset: optest.Minute},
		want: []string{
			"-- wm 2020-04-15T08:12:59",
			"+I[2020-04-15T08:01, 2020-04-15T08:11, 2020-04-15T08:10:59.999, 11.00]",
			"-- wm max",
			"+I[2020-04-15T08:11, 2020-04-15T08:21, 2020-04-15T08:20:59.999, 10.00]",
		},
	}, {
		name: "HOP slide 5 min size 10 min",
		spec: WindowSpec{Kind: Hop, Size: 10 * optest.Minute, Slide: 5 * optest.Minute},
		want: []string{
			"-- wm 2020-04-15T08:10:59",
			"+I[2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 11.00]",
			"-- wm 2020-04-15T08:16:59",
			"+I[2020-04-15T08:05, 2020-04-15T08:15, 2020-04-15T08:14:59.999, 15.00]",
			"-- wm max",
			"+I[2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 10.00]",
			"+I[2020-04-15T08:15, 2020-04-15T08:25, 2020-04-15T08:24:59.999, 6.00]",
		},
	}, {
		name: "CUMULATE step 2 min size 10 min",
		spec: WindowSpec{Kind: Cumulate, Size: 10 * optest.Minute, Step: 2 * optest.Minute},
		want: []string{
			"-- wm 2020-04-15T08:06:59",
			"+I[2020-04-15T08:00, 2020-04-15T08:06, 2020-04-15T08:05:59.999, 4.00]",
			"-- wm 2020-04-15T08:08:59",
			"+I[2020-04-15T08:00, 2020-04-15T08:08, 2020-04-15T08:07:59.999, 6.00]",
			"-- wm 2020-04-15T08:10:59",
			"+I[2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 11.00]",
			"-- wm 2020-04-15T08:12:59",
			"+I[2020-04-15T08:10, 2020-04-15T08:12, 2020-04-15T08:11:59.999, 3.00]",
			"-- wm 2020-04-15T08:16:59",
			"+I[2020-04-15T08:10, 2020-04-15T08:14, 2020-04-15T08:13:59.999, 4.00]",
			"+I[2020-04-15T08:10, 2020-04-15T08:16, 2020-04-15T08:15:59.999, 4.00]",
			"-- wm max",
			"+I[2020-04-15T08:10, 2020-04-15T08:18, 2020-04-15T08:17:59.999, 10.00]",
			"+I[2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 10.00]",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runBids(t, tt.spec, nil, sumPrice, bids); !slices.Equal(got, tt.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestWindowKeysAndAggregates(t *testing.T) {
	// Group by the first letter class: A-C vs D-F, via a key column.
	in := make([]row.Change, len(bids))
	for i, c := range bids {
		class := "low"
		if c.Row[2].Str() > "C" {
			class = "high"
		}
		in[i] = row.Change{Kind: row.Insert, Row: append(c.Row.Clone(), row.StringValue(class))}
	}
	aggs := []aggop.AggCall{
		{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Max, Arg: 2, ArgType: optest.TString},
		{Func: aggop.Avg, Arg: 1, ArgType: optest.TDec(10, 2)}, {Func: aggop.CountDistinct, Arg: 3, ArgType: optest.TString},
	}
	got := runBids(t, WindowSpec{Kind: Cumulate, Size: 10 * optest.Minute, Step: 5 * optest.Minute}, []int{3}, aggs, in)
	want := []string{
		"-- wm 2020-04-15T08:10:59",
		"+I[low, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 2, C, 3.000000, 1]",
		"+I[high, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 1, D, 5.000000, 1]",
		"-- wm 2020-04-15T08:16:59",
		"+I[low, 2020-04-15T08:10, 2020-04-15T08:15, 2020-04-15T08:14:59.999, 1, B, 3.000000, 1]",
		"+I[high, 2020-04-15T08:10, 2020-04-15T08:15, 2020-04-15T08:14:59.999, 1, E, 1.000000, 1]",
		"-- wm max",
		"+I[low, 2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 1, B, 3.000000, 1]",
		"+I[high, 2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 2, F, 3.500000, 1]",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// windowStep is one call of a window test: rows to process, or a
// watermark (when rows is nil), and the output it must give.
type windowStep struct {
	rows []row.Change
	wm   int64
	want []string
}

func runWindowSteps(t *testing.T, g *WindowAgg, steps []windowStep) {
	t.Helper()
	out := &optest.Out{}
	for i, s := range steps {
		var err error
		if s.rows != nil {
			err = g.Process(optest.Batch(s.rows...), out)
		} else {
			err = g.Watermark(s.wm, out)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := out.Take(); !slices.Equal(got, s.want) {
			t.Fatalf("step %d:\ngot  %q\nwant %q", i, got, s.want)
		}
	}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	if got := out.Take(); len(got) > 0 {
		t.Fatalf("Finish emitted %q", got)
	}
}

func at(s string, key string) row.Change {
	return optest.Change(row.Insert, row.TimestampValue(optest.TS("2020-04-15 "+s)), key)
}

func wmAt(s string) int64 { return optest.TS("2020-04-15 " + s) }

func TestWindowLateRowsAndOrder(t *testing.T) {
	count := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}
	t.Run("tumble drops rows of fired windows", func(t *testing.T) {
		g := optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, Size: 10 * optest.Minute}, []int{1}, count, WindowOptions{}))
		runWindowSteps(t, g, []windowStep{
			{rows: []row.Change{at("08:05:00", "a")}},
			{wm: wmAt("08:09:59"), want: nil},
			{wm: wmAt("08:10:00"), want: []string{"+I[a, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 1]"}},
			{rows: []row.Change{at("08:09:59", "a"), at("08:10:00", "a"), at("08:00:00", "b")}},
			{wm: wmAt("08:05:00")}, // a watermark going back changes nothing
			{rows: []row.Change{at("08:09:00", "a")}},
			{wm: operator.MaxWatermark, want: []string{"+I[a, 2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 1]"}},
		})
		if n, reason := g.Dropped(); n != 3 || reason != "late" {
			t.Errorf("Dropped() = %d, %q; want 3, late", n, reason)
		}
	})
	t.Run("hop keeps a row for its open windows", func(t *testing.T) {
		g := optest.Must(NewWindowAgg(WindowSpec{Kind: Hop, Size: 10 * optest.Minute, Slide: 5 * optest.Minute}, nil, count, WindowOptions{}))
		runWindowSteps(t, g, []windowStep{
			{rows: []row.Change{at("08:01:00", "a")}},
			{wm: wmAt("08:10:00"), want: []string{
				"+I[2020-04-15T07:55, 2020-04-15T08:05, 2020-04-15T08:04:59.999, 1]",
				"+I[2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 1]",
			}},
			{rows: []row.Change{at("08:07:00", "a"), at("08:03:00", "a")}},
			{wm: operator.MaxWatermark, want: []string{"+I[2020-04-15T08:05, 2020-04-15T08:15, 2020-04-15T08:14:59.999, 1]"}},
		})
		if n, _ := g.Dropped(); n != 1 {
			t.Errorf("dropped %d, want 1", n)
		}
	})
	t.Run("cumulate puts a row of a fired slice into the windows left", func(t *testing.T) {
		g := optest.Must(NewWindowAgg(WindowSpec{Kind: Cumulate, Size: 10 * optest.Minute, Step: 2 * optest.Minute}, nil, count, WindowOptions{}))
		runWindowSteps(t, g, []windowStep{
			{rows: []row.Change{at("08:01:00", "a")}},
			{wm: wmAt("08:05:00"), want: []string{
				"+I[2020-04-15T08:00, 2020-04-15T08:02, 2020-04-15T08:01:59.999, 1]",
				"+I[2020-04-15T08:00, 2020-04-15T08:04, 2020-04-15T08:03:59.999, 1]",
			}},
			{rows: []row.Change{at("08:03:00", "a"), at("08:07:00", "a")}},
			{wm: wmAt("08:10:00"), want: []string{
				"+I[2020-04-15T08:00, 2020-04-15T08:06, 2020-04-15T08:05:59.999, 2]",
				"+I[2020-04-15T08:00, 2020-04-15T08:08, 2020-04-15T08:07:59.999, 3]",
				"+I[2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 3]",
			}},
			{rows: []row.Change{at("08:09:00", "a"), at("08:15:00", "b")}},
			// A cycle first seen after some of its windows fired starts
			// with the first open one.
			{wm: wmAt("08:13:00")},
			{rows: []row.Change{at("08:11:00", "c")}},
			{wm: wmAt("08:16:00"), want: []string{
				"+I[2020-04-15T08:10, 2020-04-15T08:14, 2020-04-15T08:13:59.999, 1]",
				"+I[2020-04-15T08:10, 2020-04-15T08:16, 2020-04-15T08:15:59.999, 2]",
			}},
			{wm: operator.MaxWatermark, want: []string{
				"+I[2020-04-15T08:10, 2020-04-15T08:18, 2020-04-15T08:17:59.999, 2]",
				"+I[2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 2]",
			}},
		})
		if n, _ := g.Dropped(); n != 1 {
			t.Errorf("dropped %d, want 1", n)
		}
	})
	t.Run("one watermark fires windows in end order, keys in first-seen order", func(t *testing.T) {
		g := optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, Size: optest.Minute}, []int{1}, count, WindowOptions{}))
		runWindowSteps(t, g, []windowStep{
			{rows: []row.Change{at("00:02:30", "b"), at("00:00:10", "b"), at("00:01:00", "a"), at("00:00:20", "a"), at("00:00:30", "b")}},
			{wm: wmAt("00:02:00"), want: []string{
				"+I[b, 2020-04-15T00:00, 2020-04-15T00:01, 2020-04-15T00:00:59.999, 2]",
				"+I[a, 2020-04-15T00:00, 2020-04-15T00:01, 2020-04-15T00:00:59.999, 1]",
				"+I[a, 2020-04-15T00:01, 2020-04-15T00:02, 2020-04-15T00:01:59.999, 1]",
			}},
			{wm: operator.MaxWatermark, want: []string{"+I[b, 2020-04-15T00:02, 2020-04-15T00:03, 2020-04-15T00:02:59.999, 1]"}},
		})
	})
	t.Run("batch mode has no late rows and emits at the end", func(t *testing.T) {
		g := optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, Size: 10 * optest.Minute}, nil, count, WindowOptions{Batch: true}))
		runWindowSteps(t, g, []windowStep{
			{rows: []row.Change{at("08:15:00", "a")}},
			{wm: wmAt("08:30:00")},
			{rows: []row.Change{at("08:01:00", "a"), at("08:11:00", "a")}},
			{wm: operator.MaxWatermark, want: []string{
				"+I[2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 1]",
				"+I[2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 2]",
			}},
		})
	})
}

func TestWindowFinishWithoutFinalWatermark(t *testing.T) {
	g := optest.Must(NewWindowAgg(WindowSpec{Kind: Hop, Size: 2 * optest.Minute, Slide: optest.Minute}, nil, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}, WindowOptions{}))
	out := &optest.Out{}
	if err := g.Process(optest.Batch(at("08:00:30", "a")), out); err != nil {
		t.Fatal(err)
	}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"+I[2020-04-15T07:59, 2020-04-15T08:01, 2020-04-15T08:00:59.999, 1]",
		"+I[2020-04-15T08:00, 2020-04-15T08:02, 2020-04-15T08:01:59.999, 1]",
	}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestWindowStartOffsets(t *testing.T) {
	// Flink's window TVF docs: a row at 2021-06-30 00:00:04 in a 10 minute
	// TUMBLE with each offset.
	row := time.Date(2021, 6, 30, 0, 0, 4, 0, time.UTC).UnixMicro()
	for _, tt := range []struct {
		offset int64
		start  string
	}{
		{-16, "2021-06-29 23:54:00"}, {-6, "2021-06-29 23:54:00"}, {-4, "2021-06-29 23:56:00"},
		{0, "2021-06-30 00:00:00"}, {4, "2021-06-29 23:54:00"}, {6, "2021-06-29 23:56:00"}, {16, "2021-06-29 23:56:00"},
	} {
		got := time.UnixMicro(windowStart(row, tt.offset*optest.Minute, 10*optest.Minute)).UTC().Format("2006-01-02 15:04:05")
		if got != tt.start {
			t.Errorf("offset %d min: start %s, want %s", tt.offset, got, tt.start)
		}
	}
	if got := windowStart(-1, 0, 10); got != -10 {
		t.Errorf("windowStart(-1, 0, 10) = %d, want -10", got)
	}
}

func TestWindowSpecValidate(t *testing.T) {
	for _, tt := range []struct {
		spec WindowSpec
		want string
	}{
		{WindowSpec{Kind: Tumble}, "TUMBLE window size must be positive"},
		{WindowSpec{Kind: Tumble, Size: 10 * optest.Minute, Offset: 16 * optest.Minute}, "offset 16m0s must be smaller than its size 10m0s"},
		{WindowSpec{Kind: Hop, Size: 5 * optest.Minute, Slide: 2 * optest.Minute}, "HOP window size 5m0s must be an integral multiple of its slide 2m0s"},
		{WindowSpec{Kind: Hop, Size: 5 * optest.Minute}, "HOP window slide and size must be positive"},
		{WindowSpec{Kind: Cumulate, Size: 5 * optest.Minute, Step: 2 * optest.Minute}, "CUMULATE window size 5m0s must be an integral multiple of its step 2m0s"},
		{WindowSpec{Kind: Cumulate, Size: -1, Step: 1}, "must be positive"},
		{WindowSpec{Kind: Tumble, Size: 1 << 62}, "out of range"},
		{WindowSpec{Kind: Tumble, Size: 1, TimeCol: -1}, "time column -1"},
		{WindowSpec{Kind: WindowKind(7), Size: 1}, "unknown window kind"},
	} {
		err := tt.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: Validate = %v, want %q", tt.spec, err, tt.want)
		}
		if _, err := NewWindowAgg(tt.spec, nil, nil, WindowOptions{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: NewWindowAgg = %v, want the validation error", tt.spec, err)
		}
	}
}

func TestWindowInputErrors(t *testing.T) {
	spec := WindowSpec{Kind: Tumble, Size: optest.Minute}
	count := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}
	for _, tt := range []struct {
		name string
		in   []row.Change
		want string
	}{
		{"update", []row.Change{optest.Change(row.UpdateAfter, row.TimestampValue(0))}, "insert-only carries a +U change"},
		{"null time", []row.Change{optest.Change(row.Insert, nil)}, "event time is NULL"},
		{"time type", []row.Change{optest.Change(row.Insert, 5)}, "has type BIGINT, want TIMESTAMP"},
		{"mixed time types", []row.Change{optest.Change(row.Insert, row.TimestampValue(0)), optest.Change(row.Insert, row.TimestampLTZValue(0))}, "TIMESTAMP_LTZ after TIMESTAMP"},
		{"time range", []row.Change{optest.Change(row.Insert, row.TimestampValue(1<<62))}, "out of range"},
		{"short row", []row.Change{{Kind: row.Insert, Row: row.Row{}}}, "row has 0 columns, want at least 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := optest.Must(NewWindowAgg(spec, nil, count, WindowOptions{}))
			err := g.Process(optest.Batch(tt.in...), &optest.Out{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Process = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestWindowColumns(t *testing.T) {
	got := fmt.Sprint(WindowColumns(row.Type{ID: row.TimestampLTZ, Precision: 6}))
	want := "[{window_start TIMESTAMP(3) NOT NULL} {window_end TIMESTAMP(3) NOT NULL} {window_time TIMESTAMP_LTZ(3) NOT NULL}]"
	if got != want {
		t.Errorf("WindowColumns(LTZ) = %s, want %s", got, want)
	}
	if got := WindowColumns(row.Type{ID: row.Timestamp, Precision: 3})[2].Type.String(); got != "TIMESTAMP(3) NOT NULL" {
		t.Errorf("window_time over TIMESTAMP: %s", got)
	}
}

// TestWindowTimeZone mirrors Flink's time zone docs: a TUMBLE over a
// TIMESTAMP_LTZ attribute is aligned to the session zone's wall clock.
func TestWindowTimeZone(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	in := []row.Change{}
	for _, r := range []struct {
		item  string
		price float64
		ms    int64
	}{
		{"A", 1.1, 1618495260000}, {"B", 1.2, 1618495320000}, {"A", 1.8, 1618495380000},
		{"B", 2.5, 1618495440000}, {"C", 3.8, 1618495500000}, {"C", 3.8, 1618495860000},
	} {
		in = append(in, optest.Change(row.Insert, row.TimestampLTZValue(r.ms*1000), r.item, r.price))
	}
	aggs := []aggop.AggCall{{Func: aggop.Max, Arg: 2, ArgType: optest.TDouble}}
	for _, tt := range []struct {
		zone *time.Location
		want []string
	}{
		{nil, []string{
			"+I[A, 2021-04-15T14:00, 2021-04-15T14:10, 2021-04-15T14:09:59.999Z, 1.8]",
			"+I[B, 2021-04-15T14:00, 2021-04-15T14:10, 2021-04-15T14:09:59.999Z, 2.5]",
			"+I[C, 2021-04-15T14:00, 2021-04-15T14:10, 2021-04-15T14:09:59.999Z, 3.8]",
		}},
		{shanghai, []string{
			"+I[A, 2021-04-15T22:00, 2021-04-15T22:10, 2021-04-15T14:09:59.999Z, 1.8]",
			"+I[B, 2021-04-15T22:00, 2021-04-15T22:10, 2021-04-15T14:09:59.999Z, 2.5]",
			"+I[C, 2021-04-15T22:00, 2021-04-15T22:10, 2021-04-15T14:09:59.999Z, 3.8]",
		}},
	} {
		g := optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, Size: 10 * optest.Minute}, []int{1}, aggs, WindowOptions{Zone: tt.zone}))
		out := &optest.Out{}
		if err := g.Process(optest.Batch(in...), out); err != nil {
			t.Fatal(err)
		}
		// The watermark is an instant: 14:10Z closes the window in both zones.
		if err := g.Watermark(1618495800000*1000, out); err != nil {
			t.Fatal(err)
		}
		if got := out.Take(); !slices.Equal(got, tt.want) {
			t.Errorf("zone %v:\ngot  %q\nwant %q", tt.zone, got, tt.want)
		}
	}

	// A one-day window starts at local midnight.
	g := optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, Size: 1440 * optest.Minute}, nil, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}, WindowOptions{Zone: shanghai}))
	out := &optest.Out{}
	instant := time.Date(2021, 4, 15, 17, 0, 0, 0, time.UTC).UnixMicro() // 01:00 on the 16th in Shanghai
	if err := g.Process(optest.Batch(optest.Change(row.Insert, row.TimestampLTZValue(instant))), out); err != nil {
		t.Fatal(err)
	}
	if err := g.Watermark(time.Date(2021, 4, 16, 15, 59, 59, 0, time.UTC).UnixMicro(), out); err != nil || len(out.Lines) > 0 {
		t.Fatalf("fired %q (%v) before local midnight", out.Lines, err)
	}
	if err := g.Watermark(time.Date(2021, 4, 16, 16, 0, 0, 0, time.UTC).UnixMicro(), out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.Take(), []string{"+I[2021-04-16T00:00, 2021-04-17T00:00, 2021-04-16T15:59:59.999Z, 1]"}; !slices.Equal(got, want) {
		t.Errorf("day window: got %q, want %q", got, want)
	}
}

// TestWindowFireTimeDaylightSaving checks Flink's toEpochMillsForTimer
// cases for Los Angeles: the later instant of a repeated hour, and the
// instant after a skipped one.
func TestWindowFireTimeDaylightSaving(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	g := optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, Size: 60 * optest.Minute}, nil, nil, WindowOptions{Zone: la}))
	g.timeID = row.TimestampLTZ
	for _, tt := range []struct {
		local string
		ms    int64
	}{
		{"2021-11-07 00:00:00", 1636268400000},
		{"2021-11-07 01:00:00", 1636275600000}, // repeated: the second one
		{"2021-11-07 02:00:00", 1636279200000},
		{"2021-03-14 01:00:00", 1615712400000},
		{"2021-03-14 02:00:00", 1615716000000}, // skipped: 03:00 PDT
		{"2021-03-14 04:00:00", 1615719600000},
	} {
		if got := g.fireTime(optest.TS(tt.local)); got != tt.ms*1000 {
			t.Errorf("fireTime(%s) = %s, want %s", tt.local, time.UnixMicro(got).UTC(), time.UnixMilli(tt.ms).UTC())
		}
	}
}

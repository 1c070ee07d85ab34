package windowop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/rankop"
)

func TestWindowsOf(t *testing.T) {
	const m = 60_000_000
	for _, tc := range []struct {
		spec WindowSpec
		ts   int64
		want [][2]int64
	}{
		{WindowSpec{Kind: Tumble, Size: 10 * m}, 12 * m, [][2]int64{{10 * m, 20 * m}}},
		{WindowSpec{Kind: Tumble, Size: 10 * m}, -1, [][2]int64{{-10 * m, 0}}},
		{WindowSpec{Kind: Hop, Size: 10 * m, Slide: 5 * m}, 12 * m, [][2]int64{{5 * m, 15 * m}, {10 * m, 20 * m}}},
		{WindowSpec{Kind: Hop, Size: 10 * m, Slide: 5 * m}, 10 * m, [][2]int64{{5 * m, 15 * m}, {10 * m, 20 * m}}},
		{WindowSpec{Kind: Cumulate, Size: 10 * m, Step: 5 * m}, 3 * m, [][2]int64{{0, 5 * m}, {0, 10 * m}}},
		{WindowSpec{Kind: Cumulate, Size: 10 * m, Step: 5 * m}, 7 * m, [][2]int64{{0, 10 * m}}},
	} {
		var got [][2]int64
		windowsOf(tc.spec, tc.ts, func(s, e int64) { got = append(got, [2]int64{s, e}) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v at %d: got %v, want %v", tc.spec.Kind, tc.ts, got, tc.want)
		}
	}
}

// TestWindowTopN assigns rows to 10 s tumbling windows and keeps the top 2
// per category and window: nothing before the watermark, insert-only at
// the window's end, a late row dropped, the open window checkpointed.
func TestWindowTopN(t *testing.T) {
	assign := &WindowTable{Spec: WindowSpec{Kind: Tumble, TimeCol: 2, Size: 10_000_000}, LTZ: true}
	// Assigned rows: [cat, item, ts, window_start, window_end, window_time, amount]... the
	// amount is column 1's number here: rank by item DESC for brevity.
	spec := WindowRankSpec{Rank: rankop.RankSpec{Partition: []int{0, 3, 4}, Order: []rankop.SortKey{{Col: 1, Desc: true}}, Start: 1, End: 2, Kind: rankop.RowNumber, OutputRank: true}, EndCol: 4}
	wr := optest.Must(NewWindowRank(spec))
	var mid, out optest.Out
	feed := func(op *WindowRank, cs ...row.Change) {
		t.Helper()
		if err := assign.Process(optest.Batch(cs...), &mid); err != nil {
			t.Fatal(err)
		}
		if err := op.Process(optest.Batch(mid.Changes()...), &out); err != nil {
			t.Fatal(err)
		}
	}
	feed(wr, optest.Ins("a", 3, optest.LTZSec(1)), optest.Ins("a", 9, optest.LTZSec(2)), optest.Ins("a", 5, optest.LTZSec(3)), optest.Ins("b", 1, optest.LTZSec(4)), optest.Ins("a", 7, optest.LTZSec(12)))
	if got := out.Take(); got != nil {
		t.Fatalf("emitted %q before the watermark", got)
	}
	if err := wr.Watermark(10_000_000, &out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"+I[a, 9, 1970-01-01T00:00:02Z, 1970-01-01T00:00, 1970-01-01T00:00:10, 1970-01-01T00:00:09.999Z, 1]",
		"+I[a, 5, 1970-01-01T00:00:03Z, 1970-01-01T00:00, 1970-01-01T00:00:10, 1970-01-01T00:00:09.999Z, 2]",
		"+I[b, 1, 1970-01-01T00:00:04Z, 1970-01-01T00:00, 1970-01-01T00:00:10, 1970-01-01T00:00:09.999Z, 1]",
	}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Errorf("first window:\n got %q\nwant %q", got, want)
	}
	feed(wr, optest.Ins("a", 99, optest.LTZSec(5))) // its window has fired
	if n, _ := wr.Dropped(); n != 1 {
		t.Errorf("dropped %d, want 1 late row", n)
	}
	if wr.StateEntries() != 1 {
		t.Errorf("state entries %d, want the one row of the open window", wr.StateEntries())
	}
	snap, err := wr.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r := optest.Must(NewWindowRank(spec))
	if err := r.Restore(snap); err != nil {
		t.Fatal(err)
	}
	feed(r, optest.Ins("a", 8, optest.LTZSec(15)), optest.Ins("a", 1, optest.LTZSec(16)), optest.Ins("a", 2, optest.LTZSec(1)))
	if err := r.Watermark(operator.MaxWatermark, &out); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"+I[a, 8, 1970-01-01T00:00:15Z, 1970-01-01T00:00:10, 1970-01-01T00:00:20, 1970-01-01T00:00:19.999Z, 1]",
		"+I[a, 7, 1970-01-01T00:00:12Z, 1970-01-01T00:00:10, 1970-01-01T00:00:20, 1970-01-01T00:00:19.999Z, 2]",
	}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Errorf("second window after restore:\n got %q\nwant %q", got, want)
	}
	if n, _ := r.Dropped(); n != 2 || r.StateEntries() != 0 {
		t.Errorf("dropped %d (want 2), state %d (want 0: fired windows are freed)", n, r.StateEntries())
	}
}

// TestWindowDedupKeepsLast: of rows with the same time the later wins.
func TestWindowDedupKeepsLast(t *testing.T) {
	spec := WindowRankSpec{Rank: rankop.RankSpec{Partition: []int{0, 3}, Order: []rankop.SortKey{{Col: 2, Desc: true}}, Start: 1, End: 1, Kind: rankop.RowNumber}, EndCol: 3, LastWins: true}
	wr := optest.Must(NewWindowRank(spec))
	var out optest.Out
	end := row.TimestampValue(10_000_000)
	if err := wr.Process(optest.Batch(optest.Ins("a", "p", optest.LTZSec(2), end), optest.Ins("a", "q", optest.LTZSec(5), end), optest.Ins("a", "r", optest.LTZSec(5), end), optest.Ins("a", "s", optest.LTZSec(1), end)), &out); err != nil {
		t.Fatal(err)
	}
	if err := wr.Watermark(operator.MaxWatermark, &out); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[a, r, 1970-01-01T00:00:05Z, 1970-01-01T00:00:10]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

package windowop

import (
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/rankop"
)

func loadZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	return loc
}

func ltzAt(y int, mo time.Month, d, h, mi int) row.Value {
	return row.TimestampLTZValue(time.Date(y, mo, d, h, mi, 0, 0, time.UTC).UnixMicro())
}

// TestWindowTableZone: a window TVF over a TIMESTAMP_LTZ in a session
// zone aligns its windows to the zone's wall clock, writes window_start
// and window_end as that wall clock and window_time as the instant before
// its last millisecond's on that clock; Los Angeles's repeated hour of
// 2021-11-07 is one window, whose window_time is the earlier 01:59:59.999
// (recorded on Flink 2.3: itcase29-dst-tvf-hour).
func TestWindowTableZone(t *testing.T) {
	shanghai, la := loadZone(t, "Asia/Shanghai"), loadZone(t, "America/Los_Angeles")
	for _, tt := range []struct {
		zone *time.Location
		size int64
		at   row.Value
		want []string
	}{
		// 01:00 on the 16th in Shanghai.
		{shanghai, 1440 * optest.Minute, ltzAt(2021, 4, 15, 17, 0), []string{"+I[2021-04-15T17:00:00Z, 2021-04-16T00:00, 2021-04-17T00:00, 2021-04-16T15:59:59.999Z]"}},
		{nil, 1440 * optest.Minute, ltzAt(2021, 4, 15, 17, 0), []string{"+I[2021-04-15T17:00:00Z, 2021-04-15T00:00, 2021-04-16T00:00, 2021-04-15T23:59:59.999Z]"}},
		// 01:15 PDT and 01:10 PST: the same local hour.
		{la, 60 * optest.Minute, ltzAt(2021, 11, 7, 8, 15), []string{"+I[2021-11-07T08:15:00Z, 2021-11-07T01:00, 2021-11-07T02:00, 2021-11-07T08:59:59.999Z]"}},
		{la, 60 * optest.Minute, ltzAt(2021, 11, 7, 9, 10), []string{"+I[2021-11-07T09:10:00Z, 2021-11-07T01:00, 2021-11-07T02:00, 2021-11-07T08:59:59.999Z]"}},
		// 01:30 PST before the skipped hour of 2021-03-14: 01:59:59.999 PST.
		{la, 60 * optest.Minute, ltzAt(2021, 3, 14, 9, 30), []string{"+I[2021-03-14T09:30:00Z, 2021-03-14T01:00, 2021-03-14T02:00, 2021-03-14T09:59:59.999Z]"}},
	} {
		w := &WindowTable{Spec: WindowSpec{Kind: Tumble, Size: tt.size}, LTZ: true, Zone: tt.zone}
		var out optest.Out
		if err := w.Process(optest.Batch(optest.Change(row.Insert, tt.at)), &out); err != nil {
			t.Fatal(err)
		}
		if got := out.Take(); !slices.Equal(got, tt.want) {
			t.Errorf("zone %v, %v:\n got %q\nwant %q", tt.zone, tt.at, got, tt.want)
		}
	}
}

// TestWindowRankZone: a window Top-N over windows of a session zone fires
// a window when the watermark passes the instant its (wall clock) end
// stands for, not the same wall clock read as UTC.
func TestWindowRankZone(t *testing.T) {
	shanghai := loadZone(t, "Asia/Shanghai")
	assign := &WindowTable{Spec: WindowSpec{Kind: Tumble, Size: 1440 * optest.Minute}, LTZ: true, Zone: shanghai}
	// [ts, window_start, window_end, window_time]: one partition a window.
	spec := WindowRankSpec{Rank: rankop.RankSpec{Partition: []int{1, 2}, Order: []rankop.SortKey{{Col: 0}}, Start: 1, End: 1, Kind: rankop.RowNumber}, EndCol: 2, Zone: shanghai}
	wr := optest.Must(NewWindowRank(spec))
	var mid, out optest.Out
	if err := assign.Process(optest.Batch(optest.Change(row.Insert, ltzAt(2021, 4, 15, 17, 0))), &mid); err != nil {
		t.Fatal(err)
	}
	if err := wr.Process(optest.Batch(mid.Changes()...), &out); err != nil {
		t.Fatal(err)
	}
	// Local midnight of the 17th is 16:00 UTC on the 16th.
	if err := wr.Watermark(time.Date(2021, 4, 16, 15, 59, 59, 0, time.UTC).UnixMicro(), &out); err != nil || out.Lines != nil {
		t.Fatalf("fired %q (%v) before the window's end", out.Lines, err)
	}
	if err := wr.Watermark(time.Date(2021, 4, 16, 16, 0, 0, 0, time.UTC).UnixMicro(), &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.Take(), []string{"+I[2021-04-15T17:00:00Z, 2021-04-16T00:00, 2021-04-17T00:00, 2021-04-16T15:59:59.999Z]"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestWindowAggTimeDaylightSaving: a window aggregate's window_time in
// Los Angeles's repeated hour is the earlier instant of the window's last
// millisecond, while the window fires at the later one (Flink 2.3:
// itcase29-dst-tumble-hour).
func TestWindowAggTimeDaylightSaving(t *testing.T) {
	la := loadZone(t, "America/Los_Angeles")
	g := optest.Must(NewWindowAgg(WindowSpec{Kind: Tumble, Size: 60 * optest.Minute}, nil, nil, WindowOptions{Zone: la}))
	var out optest.Out
	if err := g.Process(optest.Batch(optest.Change(row.Insert, ltzAt(2021, 11, 7, 9, 10))), &out); err != nil {
		t.Fatal(err)
	}
	// 09:00Z is the second 01:00: the window [01:00, 02:00) is still open.
	if err := g.Watermark(time.Date(2021, 11, 7, 9, 30, 0, 0, time.UTC).UnixMicro(), &out); err != nil || out.Lines != nil {
		t.Fatalf("fired %q (%v) in the repeated hour", out.Lines, err)
	}
	if err := g.Watermark(time.Date(2021, 11, 7, 10, 0, 0, 0, time.UTC).UnixMicro(), &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.Take(), []string{"+I[2021-11-07T01:00, 2021-11-07T02:00, 2021-11-07T08:59:59.999Z]"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestSessionZoneWallClock: sessions over a TIMESTAMP_LTZ in a Zone are
// merged on its wall clock, as Flink 2.3 does (itcase29-dst-session):
// 01:30 PST and 03:00 PDT of 2021-03-14 are 30 minutes apart but 90 on
// the clock, two sessions of a one-hour gap; and a session fires once the
// watermark passes the instant its end stands for.
func TestSessionZoneWallClock(t *testing.T) {
	la := loadZone(t, "America/Los_Angeles")
	g := optest.Must(NewSessionAgg(0, 60*optest.Minute, nil, nil, WindowOptions{Zone: la}))
	var out optest.Out
	if err := g.Process(optest.Batch(optest.Change(row.Insert, ltzAt(2021, 3, 14, 9, 30)), optest.Change(row.Insert, ltzAt(2021, 3, 14, 10, 0))), &out); err != nil {
		t.Fatal(err)
	}
	// 02:30 on the clock is 03:30 PDT, 10:30Z: the first session is open
	// until then.
	if err := g.Watermark(time.Date(2021, 3, 14, 10, 29, 0, 0, time.UTC).UnixMicro(), &out); err != nil || out.Lines != nil {
		t.Fatalf("fired %q (%v) before the session's end", out.Lines, err)
	}
	if err := g.Finish(&out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"+I[2021-03-14T01:30, 2021-03-14T02:30, 2021-03-14T10:29:59.999Z]",
		"+I[2021-03-14T03:00, 2021-03-14T04:00, 2021-03-14T10:59:59.999Z]",
	}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

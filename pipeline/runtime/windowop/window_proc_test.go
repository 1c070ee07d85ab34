package windowop

import (
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// procClockAt is a test clock: ms milliseconds after 2023-11-14 22:13:20
// UTC, a whole ten seconds.
type procClockAt struct{ ms int64 }

func (c *procClockAt) now() time.Time { return time.UnixMilli(1_700_000_000_000 + c.ms) }

// pt is a row of key k whose processing-time column holds a time far
// from the clock's, so that a window of it would show it was read.
func pt(k string) row.Change { return optest.Ins(k, optest.LTZSec(-1_000_000)) }

var countProc = []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}

func newProc(t *testing.T, w WindowSpec, c *procClockAt) *ProcWindowAgg {
	t.Helper()
	w.TimeCol = 1
	g, err := NewProcWindowAgg(w, []int{0}, countProc, WindowOptions{}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func procStep(t *testing.T, g *ProcWindowAgg, out *optest.Out, rows ...row.Change) {
	t.Helper()
	if err := g.Process(optest.Batch(rows...), out); err != nil {
		t.Fatal(err)
	}
}

func wantLines(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestProcWindowTumbleFiresByClock(t *testing.T) {
	c := &procClockAt{}
	g := newProc(t, WindowSpec{Kind: Tumble, Size: 10_000_000}, c)
	out := &optest.Out{}
	procStep(t, g, out, pt("a"), pt("b"), pt("a"))
	c.ms = 9_000
	procStep(t, g, out, pt("a"))
	// A watermark, even the final one, fires nothing: the clock does.
	if err := g.Watermark(operator.MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	c.ms = 9_998
	if err := g.Flush(out); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "before the window's last millisecond", out.Take())
	c.ms = 9_999
	if err := g.Flush(out); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "at the window's timer (end - 1 ms)", out.Take(),
		"+I[a, 2023-11-14T22:13:20, 2023-11-14T22:13:30, 2023-11-14T22:13:29.999Z, 3]",
		"+I[b, 2023-11-14T22:13:20, 2023-11-14T22:13:30, 2023-11-14T22:13:29.999Z, 1]")
	// A row in a window's last millisecond counts in it, and the window
	// fires in the same batch.
	c.ms = 19_999
	procStep(t, g, out, pt("c"))
	wantLines(t, "a row at the timer", out.Take(),
		"+I[c, 2023-11-14T22:13:30, 2023-11-14T22:13:40, 2023-11-14T22:13:39.999Z, 1]")
	// A batch after a window's end fires it before its own rows count.
	c.ms = 21_000
	procStep(t, g, out, pt("d"))
	c.ms = 35_000
	procStep(t, g, out, pt("d"))
	wantLines(t, "a later batch", out.Take(),
		"+I[d, 2023-11-14T22:13:40, 2023-11-14T22:13:50, 2023-11-14T22:13:49.999Z, 1]")
	if n, _ := g.Dropped(); n != 0 {
		t.Errorf("Dropped() = %d, want 0: no row is late on processing time", n)
	}
	// The end of a bounded input drops the open window, as Flink drops
	// timers not yet due.
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "Finish", out.Take())
}

func TestProcWindowHopAndCumulate(t *testing.T) {
	c := &procClockAt{}
	hop := newProc(t, WindowSpec{Kind: Hop, Size: 10_000_000, Slide: 5_000_000}, c)
	cum := newProc(t, WindowSpec{Kind: Cumulate, Size: 10_000_000, Step: 5_000_000}, c)
	hout, cout := &optest.Out{}, &optest.Out{}
	c.ms = 1_000
	procStep(t, hop, hout, pt("a"))
	procStep(t, cum, cout, pt("a"))
	c.ms = 6_000
	procStep(t, hop, hout, pt("a"))
	procStep(t, cum, cout, pt("a"))
	wantLines(t, "hop at 6 s", hout.Take(),
		"+I[a, 2023-11-14T22:13:15, 2023-11-14T22:13:25, 2023-11-14T22:13:24.999Z, 1]")
	wantLines(t, "cumulate at 6 s", cout.Take(),
		"+I[a, 2023-11-14T22:13:20, 2023-11-14T22:13:25, 2023-11-14T22:13:24.999Z, 1]")
	c.ms = 10_000
	if err := hop.Flush(hout); err != nil {
		t.Fatal(err)
	}
	if err := cum.Flush(cout); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "hop at 10 s", hout.Take(),
		"+I[a, 2023-11-14T22:13:20, 2023-11-14T22:13:30, 2023-11-14T22:13:29.999Z, 2]")
	wantLines(t, "cumulate at 10 s", cout.Take(),
		"+I[a, 2023-11-14T22:13:20, 2023-11-14T22:13:30, 2023-11-14T22:13:29.999Z, 2]")
}

// TestProcWindowSnapshotRestore: the open windows survive a restore and
// fire by the new operator's clock, at once when it has passed their end.
func TestProcWindowSnapshotRestore(t *testing.T) {
	c := &procClockAt{ms: 2_000}
	g := newProc(t, WindowSpec{Kind: Tumble, Size: 10_000_000}, c)
	out := &optest.Out{}
	procStep(t, g, out, pt("a"), pt("a"))
	c.ms = 12_000
	procStep(t, g, out, pt("b"))
	wantLines(t, "before the snapshot", out.Take(),
		"+I[a, 2023-11-14T22:13:20, 2023-11-14T22:13:30, 2023-11-14T22:13:29.999Z, 2]")
	snap, err := g.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	c2 := &procClockAt{ms: 15_000}
	r := newProc(t, WindowSpec{Kind: Tumble, Size: 10_000_000}, c2)
	if err := r.Restore(snap); err != nil {
		t.Fatal(err)
	}
	procStep(t, r, out, pt("b"))
	wantLines(t, "restored, before the end", out.Take())
	c2.ms = 45_000
	if err := r.Flush(out); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "restored, clock past the end", out.Take(),
		"+I[b, 2023-11-14T22:13:30, 2023-11-14T22:13:40, 2023-11-14T22:13:39.999Z, 2]")
	if n := r.StateEntries(); n != 0 {
		t.Errorf("StateEntries() = %d after every window fired, want 0", n)
	}
}

func TestProcWindowRefusesSession(t *testing.T) {
	c := &procClockAt{}
	if _, err := NewProcWindowAgg(WindowSpec{Kind: Session, Gap: 1_000_000, TimeCol: 1}, nil, countProc, WindowOptions{}, c.now); err == nil {
		t.Error("a processing-time SESSION window was built; want an error")
	}
}

func TestProcWindowRefusesUpdates(t *testing.T) {
	c := &procClockAt{}
	g := newProc(t, WindowSpec{Kind: Tumble, Size: 10_000_000}, c)
	if err := g.Process(optest.Batch(optest.Del("a", optest.LTZSec(0))), &optest.Out{}); err == nil {
		t.Error("a -D change was counted; want an error (the input is planned insert-only)")
	}
}

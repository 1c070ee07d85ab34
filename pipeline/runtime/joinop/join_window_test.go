package joinop

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A window-join step: a row [key, window_start, window_end, value] of a
// side (0 left, 1 right) in the window starting at at ms (10 ms long) or,
// with side -1, a watermark at at ms; want is what the join emits for it.
type wjStep struct {
	side int
	key  any
	at   int64
	val  string
	want []string
}

func wjSpec(kind JoinKind) WindowJoinSpec {
	return WindowJoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 4, RightWidth: 4,
		LeftStart: 1, LeftEnd: 2, RightStart: 1, RightEnd: 2}
}

func wjRow(key any, at int64, val string) row.Row {
	k := row.NullValue
	if key != nil {
		k = row.BigIntValue(int64(key.(int)))
	}
	return row.Row{k, row.TimestampValue(at * 1000), row.TimestampValue(at*1000 + 10_000), row.StringValue(val)}
}

// wjCollector prints [k start val | k start val], times in ms.
type wjCollector struct{ got []string }

func (c *wjCollector) Emit(k row.Kind, r row.Row) {
	side := func(r row.Row) string {
		if r[0].IsNull() && r[1].IsNull() {
			return "null"
		}
		return fmt.Sprintf("%s %d %s", r[0], r[1].Micros()/1000, r[3])
	}
	if len(r) == 4 { // a semi or anti join's left row
		c.got = append(c.got, k.String()+"["+side(r)+"]")
		return
	}
	c.got = append(c.got, k.String()+"["+side(r[:4])+" | "+side(r[4:])+"]")
}

func stepWJ(t *testing.T, j *WindowJoin, i int, s wjStep) []string {
	t.Helper()
	var c wjCollector
	var err error
	if s.side < 0 {
		wm := s.at
		if wm != operator.MaxWatermark {
			wm *= 1000
		}
		err = j.Watermark(wm, &c)
	} else {
		b := &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: wjRow(s.key, s.at, s.val)}}}
		err = j.ProcessInput(s.side, b, &c)
	}
	if err != nil {
		t.Fatalf("step %d: %v", i, err)
	}
	slices.Sort(c.got)
	return c.got
}

func wjWM(at int64, want ...string) wjStep { return wjStep{side: -1, at: at, want: want} }

// wjStream is rows of two windows ([0, 10) and [10, 20)) on both sides,
// a late row, and NULL keys.
func wjStream() []wjStep {
	return []wjStep{
		{0, 1, 0, "a", nil},
		{1, 1, 0, "x", nil},
		{1, 1, 0, "y", nil},
		{0, 2, 0, "b", nil},
		{1, 3, 0, "z", nil},
		{0, nil, 0, "n", nil},
		{1, nil, 0, "m", nil},
		{0, 1, 10, "c", nil},
		{1, 1, 10, "w", nil},
		// Only the first window's end is reached.
		wjWM(10),
		// Late: [0, 10) has fired.
		{0, 1, 0, "late", nil},
		{1, 2, 10, "v", nil},
		wjWM(operator.MaxWatermark),
	}
}

func TestWindowJoinSemantics(t *testing.T) {
	// What the two watermarks of wjStream emit, by kind.
	cases := []struct {
		kind         JoinKind
		nullAware    bool
		first, final []string
	}{
		{InnerJoin, false, []string{"+I[1 0 a | 1 0 x]", "+I[1 0 a | 1 0 y]"}, []string{"+I[1 10 c | 1 10 w]"}},
		{LeftJoin, false,
			[]string{"+I[1 0 a | 1 0 x]", "+I[1 0 a | 1 0 y]", "+I[2 0 b | null]", "+I[null 0 n | null]"},
			[]string{"+I[1 10 c | 1 10 w]"}},
		{RightJoin, false,
			[]string{"+I[1 0 a | 1 0 x]", "+I[1 0 a | 1 0 y]", "+I[null | 3 0 z]", "+I[null | null 0 m]"},
			[]string{"+I[1 10 c | 1 10 w]", "+I[null | 2 10 v]"}},
		{FullJoin, false,
			[]string{"+I[1 0 a | 1 0 x]", "+I[1 0 a | 1 0 y]", "+I[2 0 b | null]", "+I[null 0 n | null]", "+I[null | 3 0 z]", "+I[null | null 0 m]"},
			[]string{"+I[1 10 c | 1 10 w]", "+I[null | 2 10 v]"}},
		// EXISTS: a matches; c matches w.
		{SemiJoin, false, []string{"+I[1 0 a]"}, []string{"+I[1 10 c]"}},
		// NOT EXISTS: b and the NULL key n have no match.
		{AntiJoin, false, []string{"+I[2 0 b]", "+I[null 0 n]"}, nil},
		// NOT IN: the right NULL key m makes every left row of its window
		// not NOT IN.
		{AntiJoin, true, nil, nil},
	}
	for _, tc := range cases {
		name := tc.kind.String()
		if tc.nullAware {
			name += "NullAware"
		}
		t.Run(name, func(t *testing.T) {
			spec := wjSpec(tc.kind)
			spec.NullAware = tc.nullAware
			j := NewWindowJoin(spec)
			for i, s := range wjStream() {
				got := stepWJ(t, j, i, s)
				want := s.want
				switch {
				case s.side < 0 && s.at == 10:
					want = tc.first
				case s.side < 0:
					want = tc.final
				}
				want = slices.Sorted(slices.Values(want))
				if !slices.Equal(got, want) {
					t.Errorf("step %d (%+v): got %q, want %q", i, s, got, want)
				}
				if s.at == 0 && s.side >= 0 && s.val != "late" && j.StateEntries() == 0 {
					t.Errorf("step %d: the row is not held", i)
				}
			}
			if n, why := j.Dropped(); n != 1 || why != "late" {
				t.Errorf("dropped %d %q, want 1 late", n, why)
			}
			if j.StateEntries() != 0 {
				t.Errorf("%d rows held after the final watermark", j.StateEntries())
			}
		})
	}
}

func TestWindowJoinResidualAndWindows(t *testing.T) {
	spec := wjSpec(LeftJoin)
	// ON ... AND l.val < r.val
	spec.Residual = func(r row.Row) (bool, error) { return r[3].String() < r[7].String(), nil }
	j := NewWindowJoin(spec)
	// A HOP-like pair of overlapping windows: [0, 10) and [5, 15) hold
	// different rows though their ends overlap; only the same window
	// (start and end) joins.
	b := &row.Batch{Changes: []row.Change{
		{Kind: row.Insert, Row: wjRow(1, 0, "b")},
		{Kind: row.Insert, Row: wjRow(1, 5, "b")},
	}}
	if err := j.ProcessInput(0, b, &wjCollector{}); err != nil {
		t.Fatal(err)
	}
	b = &row.Batch{Changes: []row.Change{
		{Kind: row.Insert, Row: wjRow(1, 0, "a")},
		{Kind: row.Insert, Row: wjRow(1, 0, "c")},
	}}
	if err := j.ProcessInput(1, b, &wjCollector{}); err != nil {
		t.Fatal(err)
	}
	var c wjCollector
	if err := j.Watermark(15_000, &c); err != nil {
		t.Fatal(err)
	}
	// Windows fire in end order; the residual drops b<a but keeps b<c.
	want := []string{"+I[1 0 b | 1 0 c]", "+I[1 5 b | null]"}
	if !slices.Equal(c.got, want) {
		t.Errorf("got %q, want %q", c.got, want)
	}
}

func TestWindowJoinRefusesUpdates(t *testing.T) {
	j := NewWindowJoin(wjSpec(InnerJoin))
	b := &row.Batch{Changes: []row.Change{{Kind: row.Delete, Row: wjRow(1, 0, "a")}}}
	if err := j.ProcessInput(0, b, &wjCollector{}); err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Errorf("a -D: got %v, want an insert-only error", err)
	}
}

func TestWindowJoinBatchFiresAtEnd(t *testing.T) {
	spec := wjSpec(InnerJoin)
	spec.Batch = true
	j := NewWindowJoin(spec)
	for i, s := range []wjStep{{0, 1, 0, "a", nil}, wjWM(100), {1, 1, 0, "x", nil}} {
		stepWJ(t, j, i, s)
	}
	var c wjCollector
	if err := j.Finish(&c); err != nil {
		t.Fatal(err)
	}
	if want := []string{"+I[1 0 a | 1 0 x]"}; !slices.Equal(c.got, want) {
		t.Errorf("got %q, want %q", c.got, want)
	}
}

func TestWindowJoinSnapshotRestore(t *testing.T) {
	steps := wjStream()
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin, SemiJoin, AntiJoin} {
		ref := NewWindowJoin(wjSpec(kind))
		var want [][]string
		for i, s := range steps {
			want = append(want, stepWJ(t, ref, i, s))
		}
		for cut := range steps {
			j := NewWindowJoin(wjSpec(kind))
			for i := range cut {
				stepWJ(t, j, i, steps[i])
			}
			snap, err := j.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			r := NewWindowJoin(wjSpec(kind))
			if err := r.Restore(snap); err != nil {
				t.Fatalf("kind %v cut %d: restore: %v", kind, cut, err)
			}
			if r.StateEntries() != j.StateEntries() {
				t.Errorf("kind %v cut %d: restored %d rows, want %d", kind, cut, r.StateEntries(), j.StateEntries())
			}
			for i := cut; i < len(steps); i++ {
				if got := stepWJ(t, r, i, steps[i]); !slices.Equal(got, want[i]) {
					t.Fatalf("kind %v cut %d step %d: got %q, want %q", kind, cut, i, got, want[i])
				}
			}
			if n, _ := r.Dropped(); n != 1 {
				t.Errorf("kind %v cut %d: %d late rows counted, want 1", kind, cut, n)
			}
		}
	}
}

func TestWindowJoinRestoreRejectsBadState(t *testing.T) {
	j := NewWindowJoin(wjSpec(InnerJoin))
	for i, s := range []wjStep{{0, 1, 0, "a", nil}, {1, 2, 0, "b", nil}} {
		stepWJ(t, j, i, s)
	}
	snap, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{nil, {9}, snap[:len(snap)-1], append(slices.Clone(snap), 0)} {
		if err := NewWindowJoin(wjSpec(InnerJoin)).Restore(bad); err == nil {
			t.Errorf("restore of %d bytes: no error", len(bad))
		}
	}
	other := wjSpec(InnerJoin)
	other.RightWidth = 5
	if err := NewWindowJoin(other).Restore(snap); err == nil {
		t.Error("restore into a wider right side: no error")
	}
}

func TestWindowJoinNullAwareAnti(t *testing.T) {
	spec := wjSpec(AntiJoin)
	spec.NullAware = true
	// x NOT IN (...) AND l.val < r.val: only right rows passing the
	// residual count.
	spec.Residual = func(r row.Row) (bool, error) { return r[3].String() < r[7].String(), nil }
	j := NewWindowJoin(spec)
	for i, s := range []wjStep{
		{0, 1, 0, "b", nil},   // matched by 1/c
		{0, 2, 0, "b", nil},   // matched by the NULL key's c
		{0, nil, 0, "b", nil}, // matched by any right row passing the residual
		{0, 3, 0, "z", nil},   // no right row has a greater value
		{1, 1, 0, "c", nil},
		{1, nil, 0, "c", nil},
		{1, 3, 0, "a", nil},
	} {
		stepWJ(t, j, i, s)
	}
	var c wjCollector
	if err := j.Watermark(10_000, &c); err != nil {
		t.Fatal(err)
	}
	if want := []string{"+I[3 0 z]"}; !slices.Equal(c.got, want) {
		t.Errorf("got %q, want %q", c.got, want)
	}
	if j.StateEntries() != 0 {
		t.Errorf("%d rows held after the window fired", j.StateEntries())
	}
}

// TestWindowJoinFiresAtLastMilli: as Flink's WindowJoinOperator, a window
// fires when the watermark reaches its last millisecond (its timer at
// windowEnd - 1), and a row for it is late from then: dropped, counted
// and reported (late_rows).
func TestWindowJoinFiresAtLastMilli(t *testing.T) {
	j := NewWindowJoin(wjSpec(FullJoin))
	var late []int
	j.ReportLate(func(i int) { late = append(late, i) })
	in := func(side int, rows ...row.Row) []string {
		t.Helper()
		b := &row.Batch{}
		for _, r := range rows {
			b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
		}
		var c wjCollector
		if err := j.ProcessInput(side, b, &c); err != nil {
			t.Fatal(err)
		}
		return c.got
	}
	wm := func(at int64) []string {
		t.Helper()
		var c wjCollector
		if err := j.Watermark(at, &c); err != nil {
			t.Fatal(err)
		}
		return c.got
	}
	in(0, wjRow(1, 0, "a"))
	// [0 ms, 10 ms): its last millisecond starts at 9 ms.
	if got := wm(8_999); len(got) != 0 {
		t.Errorf("watermark 8.999 ms fired %q, want nothing before the last millisecond", got)
	}
	in(1, wjRow(1, 0, "x"))
	if got, want := wm(9_000), []string{"+I[1 0 a | 1 0 x]"}; !slices.Equal(got, want) {
		t.Errorf("watermark 9 ms: got %q, want %q", got, want)
	}
	// Rows 0 and 2 of the batch are for the fired window; row 1 is not.
	if got := in(1, wjRow(2, 0, "late"), wjRow(2, 10, "y"), wjRow(3, 0, "late2")); len(got) != 0 {
		t.Errorf("late rows emitted %q", got)
	}
	if !slices.Equal(late, []int{0, 2}) {
		t.Errorf("reported late %v, want [0 2]", late)
	}
	if n, why := j.Dropped(); n != 2 || why != "late" {
		t.Errorf("dropped %d %q, want 2 late", n, why)
	}
	if got, want := wm(operator.MaxWatermark), []string{"+I[null | 2 10 y]"}; !slices.Equal(got, want) {
		t.Errorf("final watermark: got %q, want %q", got, want)
	}
}

// TestWindowJoinEndInstant: with EndInstant (windows of a session zone)
// a window fires, and its rows turn late, at the instant its end stands
// for, here 5 ms before the end as written.
func TestWindowJoinEndInstant(t *testing.T) {
	spec := wjSpec(InnerJoin)
	spec.EndInstant = func(end int64) int64 { return end - 5_000 }
	j := NewWindowJoin(spec)
	for i, s := range []wjStep{
		{0, 1, 0, "a", nil},
		{1, 1, 0, "x", nil},
		wjWM(3),
		wjWM(4, "+I[1 0 a | 1 0 x]"),
		{1, 1, 0, "late", nil},
		wjWM(operator.MaxWatermark),
	} {
		if got := stepWJ(t, j, i, s); !slices.Equal(got, s.want) {
			t.Errorf("step %d: got %q, want %q", i, got, s.want)
		}
	}
	if n, _ := j.Dropped(); n != 1 {
		t.Errorf("dropped %d, want the late row", n)
	}
}

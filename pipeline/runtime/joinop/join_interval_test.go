package joinop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// An interval-join step: a row on a side (0 left, 1 right) or, with side
// -1, a watermark; want is what the join emits for it, in any order (a
// key's cache is a map, so rows matched by one arrival come unordered).
type ijStep struct {
	side int
	key  any
	at   int64
	val  string
	want []string
}

// ijSpec joins l.ts BETWEEN r.ts - 10 AND r.ts + 5 (µs) on column 0 of
// rows [key, time, value].
func ijSpec(kind JoinKind) IntervalJoinSpec {
	return IntervalJoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
		LeftTime: 1, RightTime: 1, Lower: -10, Upper: 5}
}

// ijRowOf is temporalRow with a NULL time for at < 0.
func ijRowOf(key any, at int64, val string) row.Row {
	r := temporalRow(key, max(at, 0), val)
	if at < 0 {
		r[1] = row.NullValue
	}
	return r
}

// stepIJ runs one step and returns its output sorted.
func stepIJ(t *testing.T, j *IntervalJoin, i int, s ijStep) []string {
	t.Helper()
	var c temporalCollector
	if err := applyIJ(j, s, &c); err != nil {
		t.Fatalf("step %d: %v", i, err)
	}
	slices.Sort(c.got)
	return c.got
}

// applyIJ gives the join the step's row or watermark, its output to out.
func applyIJ(j *IntervalJoin, s ijStep, out operator.Emitter) error {
	if s.side < 0 {
		return j.Watermark(s.at, out)
	}
	return j.ProcessInput(s.side, ijBatch(ijRowOf(s.key, s.at, s.val)), out)
}

func runIJ(t *testing.T, j *IntervalJoin, steps []ijStep) {
	t.Helper()
	for i, s := range steps {
		want := slices.Clone(s.want)
		slices.Sort(want)
		if got := stepIJ(t, j, i, s); !slices.Equal(got, want) {
			t.Errorf("step %d (%+v): got %q, want %q", i, s, got, want)
		}
	}
}

func ijWM(at int64, want ...string) ijStep { return ijStep{side: -1, at: at, want: want} }

func TestIntervalJoinSemantics(t *testing.T) {
	const (
		l100  = "+I[1 100 a | 1 103 x]"
		l100p = "+I[1 100 a | null null null]"
	)
	cases := []struct {
		name  string
		kind  JoinKind
		steps []ijStep
		// state is StateEntries after the last step.
		state int64
	}{
		{"inner: bounds are inclusive, other keys and NULL keys never match", InnerJoin, []ijStep{
			{0, 1, 100, "a", nil},
			{1, 1, 103, "x", []string{l100}},
			{1, 1, 95, "edge", []string{"+I[1 100 a | 1 95 edge]"}}, // l = r + 5, the upper bound
			{1, 1, 94, "out", nil},                                  // l = r + 6
			{1, 1, 110, "in", []string{"+I[1 100 a | 1 110 in]"}},   // l = r - 10, the lower bound
			{1, 1, 111, "out2", nil},                                // l = r - 11
			{1, 2, 100, "k2", nil},
			{0, nil, 100, "n", nil},
			{1, nil, 100, "n", nil},
		}, 9},
		{"inner: the watermark clears the state, a late row joins nothing", InnerJoin, []ijStep{
			{0, 1, 100, "a", nil},
			{1, 1, 103, "x", []string{l100}},
			ijWM(1000),
			{0, 1, 100, "late", nil},
			{1, 1, 100, "late", nil},
		}, 0},
		{"left: unmatched row padded once the watermark passes its cleanup", LeftJoin, []ijStep{
			{0, 1, 100, "a", nil},
			// cleanup timer at 100 + 10 + (10+5)/2 + 1 = 118, as Flink's
			ijWM(117),
			ijWM(118, l100p),
			ijWM(1000),
		}, 0},
		{"left: a matched row is not padded; a NULL key row is", LeftJoin, []ijStep{
			{0, 1, 100, "a", nil},
			{1, 1, 103, "x", []string{l100}},
			{0, nil, 100, "n", nil},
			ijWM(1000, "+I[null 100 n | null null null]"),
		}, 0},
		{"left: a late row is padded at once, a NULL time too", LeftJoin, []ijStep{
			ijWM(1000),
			{0, 1, 100, "late", []string{"+I[1 100 late | null null null]"}},
			{1, 1, 100, "late", nil},
			{0, 1, -1, "nt", []string{"+I[1 null nt | null null null]"}},
			{1, 1, -1, "nt", nil},
		}, 0},
		// Flink's TimeIntervalJoin drops no row as late: a row behind the
		// watermark joins the other side's rows still cached, and is
		// cached itself while its upper bound is above the watermark.
		{"left: a late row still joins the cached rows and waits while its bound is open", LeftJoin, []ijStep{
			{0, 1, 100, "a", nil},
			ijWM(104),
			{1, 1, 100, "r", []string{"+I[1 100 a | 1 100 r]"}},
			{0, 1, 96, "b", []string{"+I[1 96 b | 1 100 r]"}},
			{0, 1, 89, "c", []string{"+I[1 89 c | null null null]"}}, // 89 + 10 <= 104: padded at once
			ijWM(1000),
		}, 0},
		{"right and full pad their outer sides", FullJoin, []ijStep{
			{0, 1, 100, "a", nil},
			{1, 2, 200, "r", nil},
			{1, 1, 103, "x", []string{l100}},
			ijWM(1000, "+I[null null null | 2 200 r]"),
		}, 0},
		{"right: the left side is not padded", RightJoin, []ijStep{
			{0, 1, 100, "a", nil},
			{1, 2, 200, "r", nil},
			ijWM(1000, "+I[null null null | 2 200 r]"),
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := NewIntervalJoin(ijSpec(tc.kind))
			runIJ(t, j, tc.steps)
			if got := j.StateEntries(); got != tc.state {
				t.Errorf("state entries %d, want %d", got, tc.state)
			}
		})
	}
}

func TestIntervalJoinCountsNullTimes(t *testing.T) {
	j := NewIntervalJoin(ijSpec(InnerJoin))
	runIJ(t, j, []ijStep{{0, 1, -1, "a", nil}, {1, 1, -1, "b", nil}, {0, 1, 5, "c", nil}})
	if n, _ := j.Dropped(); n != 2 {
		t.Errorf("dropped %d, want 2", n)
	}
	if got := j.HoldWatermark(100); got != 90 {
		t.Errorf("held watermark %d, want 100 - max(10, 5)", got)
	}
}

// ijStream is a stream over three keys (one NULL), both sides, late rows
// and watermarks, so that every cut point has state in flight.
func ijStream() []ijStep {
	var s []ijStep
	keys := []any{1, 2, nil}
	for i := range 60 {
		at := int64(i*4 + (i%5)*3)
		s = append(s, ijStep{side: i % 2, key: keys[i%3], at: at, val: string(rune('a' + i%26))})
		if i%7 == 6 {
			s = append(s, ijWM(at-15))
		}
		if i%11 == 10 {
			s = append(s, ijStep{side: (i + 1) % 2, key: 1, at: at - 40, val: "late"})
		}
	}
	return append(s, ijWM(operator.MaxWatermark-1))
}

// Restoring a snapshot into a new operator and continuing gives what an
// uninterrupted run gives, at every cut point and for every kind.
func TestIntervalJoinSnapshotRestore(t *testing.T) {
	steps := ijStream()
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin} {
		ref := NewIntervalJoin(ijSpec(kind))
		var want [][]string
		total := 0
		for i, s := range steps {
			out := stepIJ(t, ref, i, s)
			want = append(want, out)
			total += len(out)
		}
		if total == 0 {
			t.Fatalf("kind %v: the stream emits nothing", kind)
		}
		for cut := range steps {
			j := NewIntervalJoin(ijSpec(kind))
			for i := range cut {
				stepIJ(t, j, i, steps[i])
			}
			snap, err := j.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			r := NewIntervalJoin(ijSpec(kind))
			if err := r.Restore(snap); err != nil {
				t.Fatalf("kind %v cut %d: restore: %v", kind, cut, err)
			}
			if r.StateEntries() != j.StateEntries() {
				t.Errorf("kind %v cut %d: restored %d entries, want %d", kind, cut, r.StateEntries(), j.StateEntries())
			}
			for i := cut; i < len(steps); i++ {
				if got := stepIJ(t, r, i, steps[i]); !slices.Equal(got, want[i]) {
					t.Fatalf("kind %v cut %d step %d: got %q, want %q", kind, cut, i, got, want[i])
				}
			}
			if r.StateEntries() != 0 {
				t.Errorf("kind %v cut %d: %d entries left after the last watermark", kind, cut, r.StateEntries())
			}
		}
	}
}

func TestIntervalJoinRestoreRejectsBadState(t *testing.T) {
	j := NewIntervalJoin(ijSpec(InnerJoin))
	runIJ(t, j, []ijStep{{0, 1, 100, "a", nil}, {1, 2, 100, "b", nil}})
	snap, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{nil, {9}, snap[:len(snap)-1], append(slices.Clone(snap), 0)} {
		if err := NewIntervalJoin(ijSpec(InnerJoin)).Restore(bad); err == nil {
			t.Errorf("restore of %d bytes: no error", len(bad))
		}
	}
	// A row of another width is refused (a changed query reusing state).
	other := ijSpec(InnerJoin)
	other.LeftWidth = 4
	if err := NewIntervalJoin(other).Restore(snap); err == nil {
		t.Error("restore into a wider left side: no error")
	}
}

// TestIntervalJoinLayoutKeepsSnapshot holds a join whose cached rows are
// in their columns' typed layout to one that tags every value (no
// types): the same output and, at every step, the same snapshot bytes,
// so that checkpoints written before the layout restore.
func TestIntervalJoinLayoutKeepsSnapshot(t *testing.T) {
	steps := ijStream()
	r0 := ijRowOf(1, 0, "a")
	types := []row.TypeID{r0[0].Type(), r0[1].Type(), r0[2].Type()}
	for _, kind := range []JoinKind{InnerJoin, FullJoin} {
		typed := ijSpec(kind)
		typed.LeftTypes, typed.RightTypes = types, types
		a, b := NewIntervalJoin(typed), NewIntervalJoin(ijSpec(kind))
		for i, s := range steps {
			if got, want := stepIJ(t, a, i, s), stepIJ(t, b, i, s); !slices.Equal(got, want) {
				t.Fatalf("kind %v step %d: typed layout emits %q, tagged %q", kind, i, got, want)
			}
			sa, err := a.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			sb, err := b.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sa, sb) {
				t.Fatalf("kind %v step %d: snapshots differ:\n%x\n%x", kind, i, sa, sb)
			}
		}
	}
}

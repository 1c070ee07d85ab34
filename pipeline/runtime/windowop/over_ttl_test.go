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

// overTTLStep is, at clock second at, a row (key, "hh:mm" event time,
// v), a watermark (key "", event time wm), a quiet sweep (sweep) or a
// snapshot restored into a fresh operator (restore); then the rows it
// must emit and, when entries >= 0, the state entries after it.
type overTTLStep struct {
	at      int64
	key, ts string
	v       int
	sweep   bool
	restore bool
	want    []string
	entries int64
}

// TestOverAggStateTTL: SUM, COUNT, LAG and ROW_NUMBER over an unbounded ROWS frame
// per key, with table.exec.state.ttl = 10 s: a partition lives until 10 s
// after its last input row, then its next row starts from empty state.
func TestOverAggStateTTL(t *testing.T) {
	spec := OverSpec{Keys: []int{1}, Rows: true, Preceding: Unbounded, Aggs: []aggop.AggCall{overSum, overCount},
		Funcs: []RowFunc{{Arg: 2, Offset: 1, Default: -1}, {Kind: RowNumber}}}
	in := func(at int64, key, ts string, v int, want ...string) overTTLStep {
		return overTTLStep{at: at, key: key, ts: ts, v: v, want: want, entries: -1}
	}
	wm := func(at int64, ts string, entries int64, want ...string) overTTLStep {
		return overTTLStep{at: at, ts: ts, want: want, entries: entries}
	}
	tests := []struct {
		name  string
		steps []overTTLStep
	}{{
		name: "a partition written within the TTL goes on; one idle for the TTL restarts",
		steps: []overTTLStep{
			in(0, "a", "08:00", 5), wm(1, "08:01", 1, "+I[08:00, a, 5, 5, 1, null, 1]"),
			// Written at 0, alive until 10.
			in(9, "a", "08:02", 1), wm(9, "08:03", 1, "+I[08:02, a, 1, 6, 2, 5, 2]"),
			// Written at 9, expired at 19: SUM, COUNT and LAG start again.
			in(19, "a", "08:04", 2), wm(19, "08:05", 1, "+I[08:04, a, 2, 2, 1, null, 1]"),
		},
	}, {
		name: "a quiet sweep frees idle partitions but keeps one whose rows wait for the watermark",
		steps: []overTTLStep{
			in(0, "a", "08:00", 5), wm(0, "08:01", 1, "+I[08:00, a, 5, 5, 1, null, 1]"),
			in(5, "b", "08:02", 7),
			// a (written at 0) goes; b's row still waits: b stays, given
			// another 10 s from 20.
			{at: 20, sweep: true, entries: 2},
			wm(21, "08:03", 1, "+I[08:02, b, 7, 7, 1, null, 1]"),
			{at: 29, sweep: true, entries: 1},
			{at: 30, sweep: true, entries: 0},
			in(31, "b", "08:04", 1), wm(31, "08:05", 1, "+I[08:04, b, 1, 1, 1, null, 1]"),
		},
	}, {
		name: "a restored run keeps the partitions' ages",
		steps: []overTTLStep{
			in(0, "a", "08:00", 5), in(6, "b", "08:00", 1),
			wm(6, "08:01", 2, "+I[08:00, a, 5, 5, 1, null, 1]", "+I[08:00, b, 1, 1, 1, null, 1]"),
			{at: 7, restore: true, entries: 2},
			// a was written at 0 (expired at 10), b at 6 (alive until 16).
			in(12, "a", "08:02", 2), in(12, "b", "08:02", 3),
			wm(12, "08:03", 2, "+I[08:02, a, 2, 2, 1, null, 1]", "+I[08:02, b, 3, 4, 2, 1, 2]"),
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := optest.NewFakeClock()
			mk := func() *OverAgg {
				g := optest.Must(NewOverAgg(spec, WindowOptions{}))
				g.SetStateTTL(operator.StateTTL{TTL: optest.TTL10s, Now: clock.Now})
				return g
			}
			g := mk()
			out := &optest.Out{}
			for i, s := range tc.steps {
				clock.Set(s.at)
				var err error
				switch {
				case s.restore:
					var state []byte
					if state, err = g.Snapshot(); err == nil {
						g = mk()
						err = g.Restore(state)
					}
				case s.sweep:
					g.Sweep()
				case s.key == "":
					err = g.Watermark(hhmm(s.ts), out)
				default:
					err = g.Process(optest.Batch(optest.Change(row.Insert, row.TimestampValue(hhmm(s.ts)), s.key, s.v)), out)
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				got := out.Take()
				for j := range got {
					got[j] = strings.ReplaceAll(got[j], "2020-04-15T", "")
				}
				if !slices.Equal(got, s.want) {
					t.Errorf("step %d (t=%ds): got %q, want %q", i, s.at, got, s.want)
				}
				if n := g.StateEntries(); s.entries >= 0 && n != s.entries {
					t.Errorf("step %d (t=%ds): %d state entries, want %d", i, s.at, n, s.entries)
				}
			}
		})
	}
}

// TestOverAggStateTTLSnapshotVersions: a snapshot without times (no TTL,
// or an older run) restores under a TTL with the restore time as every
// partition's last write; one with times restores without a TTL.
func TestOverAggStateTTLSnapshotVersions(t *testing.T) {
	spec := OverSpec{Keys: []int{1}, Rows: true, Preceding: Unbounded, Aggs: []aggop.AggCall{overCount}}
	clock := optest.NewFakeClock()
	feed := func(g *OverAgg, key string, hm string) []string {
		t.Helper()
		out := &optest.Out{}
		if err := g.Process(optest.Batch(optest.Change(row.Insert, row.TimestampValue(hhmm(hm)), key, 1)), out); err != nil {
			t.Fatal(err)
		}
		if err := g.Watermark(hhmm(hm)+1, out); err != nil {
			t.Fatal(err)
		}
		return out.Take()
	}
	plain := optest.Must(NewOverAgg(spec, WindowOptions{}))
	feed(plain, "a", "08:00")
	state, err := plain.Snapshot()
	if err != nil || state[0] != overStateVersion {
		t.Fatalf("snapshot without a TTL: version %d, %v", state[0], err)
	}
	clock.Set(100)
	timed := optest.Must(NewOverAgg(spec, WindowOptions{}))
	timed.SetStateTTL(operator.StateTTL{TTL: optest.TTL10s, Now: clock.Now})
	if err := timed.Restore(state); err != nil {
		t.Fatal(err)
	}
	clock.Set(109)
	if got := feed(timed, "a", "08:01"); !slices.Equal(got, []string{"+I[2020-04-15T08:01, a, 1, 2]"}) {
		t.Errorf("within the TTL of the restore: %q", got)
	}
	state, err = timed.Snapshot()
	if err != nil || state[0] != overTTLStateVersion {
		t.Fatalf("snapshot with a TTL: version %d, %v", state[0], err)
	}
	again := optest.Must(NewOverAgg(spec, WindowOptions{}))
	if err := again.Restore(state); err != nil {
		t.Fatal(err)
	}
	if got := feed(again, "a", "08:02"); !slices.Equal(got, []string{"+I[2020-04-15T08:02, a, 1, 3]"}) {
		t.Errorf("restored without a TTL: %q", got)
	}
	state[0] = 9
	if err := again.Restore(state); err == nil || !strings.Contains(err.Error(), "state version 9") {
		t.Errorf("unknown version: %v", err)
	}
}

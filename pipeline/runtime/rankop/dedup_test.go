package rankop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

func TestDedupChangelog(t *testing.T) {
	// Event times out of order: a(3) a(1) a(5) a(5) b(2) a(2).
	in := []row.Change{
		optest.Ins("a", "p", optest.LTZSec(3)), optest.Ins("a", "q", optest.LTZSec(1)), optest.Ins("a", "r", optest.LTZSec(5)),
		optest.Ins("a", "s", optest.LTZSec(5)), optest.Ins("b", "t", optest.LTZSec(2)), optest.Ins("a", "u", optest.LTZSec(2)),
	}
	tests := []struct {
		name string
		spec DedupSpec
		want [][]string
	}{
		{"proctime keep first", DedupSpec{Key: []int{0}, TimeCol: 2}, [][]string{
			{"+I[a, p, 1970-01-01T00:00:03Z]"}, nil, nil, nil, {"+I[b, t, 1970-01-01T00:00:02Z]"}, nil,
		}},
		{"proctime keep last", DedupSpec{Key: []int{0}, TimeCol: 2, KeepLast: true}, [][]string{
			{"+I[a, p, 1970-01-01T00:00:03Z]"},
			{"-U[a, p, 1970-01-01T00:00:03Z]", "+U[a, q, 1970-01-01T00:00:01Z]"},
			{"-U[a, q, 1970-01-01T00:00:01Z]", "+U[a, r, 1970-01-01T00:00:05Z]"},
			{"-U[a, r, 1970-01-01T00:00:05Z]", "+U[a, s, 1970-01-01T00:00:05Z]"},
			{"+I[b, t, 1970-01-01T00:00:02Z]"},
			{"-U[a, s, 1970-01-01T00:00:05Z]", "+U[a, u, 1970-01-01T00:00:02Z]"},
		}},
		// The latest row wins; a tie goes to the later arrival.
		{"rowtime keep last", DedupSpec{Key: []int{0}, TimeCol: 2, RowTime: true, KeepLast: true}, [][]string{
			{"+I[a, p, 1970-01-01T00:00:03Z]"},
			nil,
			{"-U[a, p, 1970-01-01T00:00:03Z]", "+U[a, r, 1970-01-01T00:00:05Z]"},
			{"-U[a, r, 1970-01-01T00:00:05Z]", "+U[a, s, 1970-01-01T00:00:05Z]"},
			{"+I[b, t, 1970-01-01T00:00:02Z]"},
			nil,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDedup(tc.spec)
			var out optest.Out
			for i, c := range in {
				if err := d.Process(optest.Batch(c), &out); err != nil {
					t.Fatal(err)
				}
				if got := out.Take(); !slices.Equal(got, tc.want[i]) {
					t.Errorf("after %s: got %q, want %q", c, got, tc.want[i])
				}
			}
			if d.StateEntries() != 2 {
				t.Errorf("state entries %d, want 2", d.StateEntries())
			}
			// Restored from a snapshot, the operator goes on the same way.
			snap, err := d.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			r := NewDedup(tc.spec)
			if err := r.Restore(snap); err != nil {
				t.Fatal(err)
			}
			next := optest.Ins("a", "v", optest.LTZSec(0))
			var o1, o2 optest.Out
			if err := d.Process(optest.Batch(next), &o1); err != nil {
				t.Fatal(err)
			}
			if err := r.Process(optest.Batch(next), &o2); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o1.Take(), o2.Take()) || r.StateEntries() != 2 {
				t.Error("restored operator differs")
			}
		})
	}
}

func TestDedupBatch(t *testing.T) {
	d := NewDedup(DedupSpec{Key: []int{0}, TimeCol: 2, RowTime: true, KeepLast: true, Batch: true})
	var out optest.Out
	if err := d.Process(optest.Batch(optest.Ins("b", "x", optest.LTZSec(1)), optest.Ins("a", "y", optest.LTZSec(4)), optest.Ins("b", "z", optest.LTZSec(3)), optest.Ins("a", "w", optest.LTZSec(2))), &out); err != nil {
		t.Fatal(err)
	}
	if got := out.Take(); got != nil {
		t.Fatalf("emitted %q before the end", got)
	}
	snap, _ := d.Snapshot()
	r := NewDedup(d.spec)
	if err := r.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(&out); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[b, z, 1970-01-01T00:00:03Z]", "+I[a, y, 1970-01-01T00:00:04Z]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if err := d.Process(optest.Batch(optest.Del("a", "y", optest.LTZSec(4))), &out); err == nil {
		t.Error("a -D was accepted")
	}
}

// TestDedupKeepFirstOnEventTime: rows wait for the watermark, the earliest
// per key wins, late rows are dropped and counted, and the waiting state
// survives a checkpoint.
func TestDedupKeepFirstOnEventTime(t *testing.T) {
	spec := DedupSpec{Key: []int{0}, TimeCol: 2, RowTime: true}
	d := NewDedup(spec)
	var out optest.Out
	step := func(d *Dedup, wm int64, cs ...row.Change) []string {
		t.Helper()
		if err := d.Process(optest.Batch(cs...), &out); err != nil {
			t.Fatal(err)
		}
		if wm != 0 {
			if err := d.Watermark(wm, &out); err != nil {
				t.Fatal(err)
			}
		}
		return out.Take()
	}
	if got := step(d, 0, optest.Ins("a", "p", optest.LTZSec(3)), optest.Ins("a", "q", optest.LTZSec(1)), optest.Ins("a", "r", optest.LTZSec(5)), optest.Ins("b", "t", optest.LTZSec(2))); got != nil {
		t.Fatalf("emitted %q before the watermark", got)
	}
	want := []string{"+I[a, q, 1970-01-01T00:00:01Z]", "+I[b, t, 1970-01-01T00:00:02Z]"}
	if got := step(d, 2_000_000); !slices.Equal(got, want) {
		t.Errorf("watermark 2s: got %q, want %q", got, want)
	}
	// c at 1s and a at 0s are late; a at 4s comes after a's result.
	if got := step(d, 0, optest.Ins("c", "u", optest.LTZSec(1)), optest.Ins("a", "v", optest.LTZSec(0)), optest.Ins("a", "w", optest.LTZSec(4)), optest.Ins("c", "x", optest.LTZSec(6)), optest.Ins("c", "y", optest.LTZSec(5))); got != nil {
		t.Fatalf("emitted %q", got)
	}
	if n, why := d.Dropped(); n != 2 || why != "late" {
		t.Errorf("dropped %d %s, want 2 late", n, why)
	}
	snap, err := d.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r := NewDedup(spec)
	if err := r.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if r.StateEntries() != 3 {
		t.Errorf("restored %d entries, want 3 (a and b done, c waiting)", r.StateEntries())
	}
	if got := step(r, 0, optest.Ins("b", "z", optest.LTZSec(3))); got != nil {
		t.Errorf("a key already emitted emitted again: %q", got)
	}
	want = []string{"+I[c, y, 1970-01-01T00:00:05Z]"}
	if got := step(r, operator.MaxWatermark); !slices.Equal(got, want) {
		t.Errorf("final watermark: got %q, want %q", got, want)
	}
}

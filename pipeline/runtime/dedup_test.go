package runtime

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

func ltzSec(sec int64) row.Value { return row.TimestampLTZValue(sec * 1_000_000) }

func TestDedupChangelog(t *testing.T) {
	// Event times out of order: a(3) a(1) a(5) a(5) b(2) a(2).
	in := []row.Change{
		ins("a", "p", ltzSec(3)), ins("a", "q", ltzSec(1)), ins("a", "r", ltzSec(5)),
		ins("a", "s", ltzSec(5)), ins("b", "t", ltzSec(2)), ins("a", "u", ltzSec(2)),
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
		// Event time: the earliest row wins, whenever it arrives.
		{"rowtime keep first", DedupSpec{Key: []int{0}, TimeCol: 2, RowTime: true}, [][]string{
			{"+I[a, p, 1970-01-01T00:00:03Z]"},
			{"-U[a, p, 1970-01-01T00:00:03Z]", "+U[a, q, 1970-01-01T00:00:01Z]"},
			nil, nil,
			{"+I[b, t, 1970-01-01T00:00:02Z]"},
			nil,
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
			var out aggOut
			for i, c := range in {
				if err := d.Process(aggBatch(c), &out); err != nil {
					t.Fatal(err)
				}
				if got := out.take(); !slices.Equal(got, tc.want[i]) {
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
			next := ins("a", "v", ltzSec(0))
			var o1, o2 aggOut
			if err := d.Process(aggBatch(next), &o1); err != nil {
				t.Fatal(err)
			}
			if err := r.Process(aggBatch(next), &o2); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o1.take(), o2.take()) || r.StateEntries() != 2 {
				t.Error("restored operator differs")
			}
		})
	}
}

func TestDedupBatch(t *testing.T) {
	d := NewDedup(DedupSpec{Key: []int{0}, TimeCol: 2, RowTime: true, KeepLast: true, Batch: true})
	var out aggOut
	if err := d.Process(aggBatch(ins("b", "x", ltzSec(1)), ins("a", "y", ltzSec(4)), ins("b", "z", ltzSec(3)), ins("a", "w", ltzSec(2))), &out); err != nil {
		t.Fatal(err)
	}
	if got := out.take(); got != nil {
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
	if got := out.take(); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if err := d.Process(aggBatch(del("a", "y", ltzSec(4))), &out); err == nil {
		t.Error("a -D was accepted")
	}
}

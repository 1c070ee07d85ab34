package rankop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestNormalizeChangelog feeds an upsert changelog (a -D carrying the
// key alone, a repeated row, a -D of an unknown key) and checks the
// whole changelog it becomes, also after a snapshot and restore midway.
func TestNormalizeChangelog(t *testing.T) {
	in := []row.Change{
		optest.Change(row.Insert, 1, "a", 10),
		optest.Change(row.UpdateAfter, 2, "b", 20),
		optest.Change(row.UpdateAfter, 1, "a", 11),
		optest.Change(row.UpdateAfter, 1, "a", 11), // the same row again
		optest.Change(row.Delete, 1, nil, nil),     // the key alone
		optest.Change(row.Delete, 9, nil, nil),     // never seen
		optest.Change(row.UpdateAfter, 1, "c", 12),
		optest.Change(row.UpdateBefore, 2, nil, nil),
	}
	want := [][]string{
		{"+I[1, a, 10]"},
		{"+I[2, b, 20]"},
		{"-U[1, a, 10]", "+U[1, a, 11]"},
		nil,
		{"-D[1, a, 11]"},
		nil,
		{"+I[1, c, 12]"},
		{"-D[2, b, 20]"},
	}
	for cut := range len(in) + 1 {
		n := NewNormalize([]int{0})
		var out optest.Out
		for i, c := range in {
			if i == cut {
				snap, err := n.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				n = NewNormalize([]int{0})
				if err := n.Restore(snap); err != nil {
					t.Fatalf("cut %d: %v", cut, err)
				}
			}
			if err := n.Process(optest.Batch(c), &out); err != nil {
				t.Fatal(err)
			}
			if got := out.Take(); !slices.Equal(got, want[i]) {
				t.Fatalf("cut %d, after %s: got %q, want %q", cut, c, got, want[i])
			}
		}
		if n.StateEntries() != 1 {
			t.Errorf("cut %d: state entries %d, want 1", cut, n.StateEntries())
		}
	}
	if err := NewNormalize([]int{0}).Restore([]byte{7}); err == nil {
		t.Error("a snapshot of another version restored")
	}
}

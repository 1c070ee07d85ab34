package aggop_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// setOpSteps: rows (a, side) of both inputs, with retractions; side 0 is
// the left input.
var setOpSteps = []row.Change{
	optest.Ins("x", int32(0)),
	optest.Ins("x", int32(0)),
	optest.Ins(nil, int32(0)),
	optest.Ins("x", int32(1)),
	optest.Ins(nil, int32(1)),
	optest.Ins("y", int32(1)),
	optest.Ins("x", int32(1)),
	optest.Ins("x", int32(1)),
	optest.Change(row.UpdateBefore, "x", int32(1)),
	optest.Change(row.Delete, "x", int32(0)),
	optest.Change(row.Delete, nil, int32(1)),
	optest.Ins("y", int32(0)),
}

// TestSetOpChanges checks each operation's changelog over setOpSteps,
// restoring a fresh operator from a snapshot before every step: the
// output must be the same as without (and as written here).
func TestSetOpChanges(t *testing.T) {
	want := map[aggop.SetOpKind]string{
		aggop.Intersect: "+I[x] +I[null] -D[null] +I[y]",
		// left x x NULL; right x NULL y x x; then right x-1, left x-1, right NULL-1, left y.
		aggop.IntersectAll: "+I[x] +I[null] +I[x] -D[x] -D[null] +I[y]",
		aggop.Except:       "+I[x] +I[null] -D[x] -D[null] +I[null]",
		aggop.ExceptAll:    "+I[x] +I[x] +I[null] -D[x] -D[null] -D[x] +I[null]",
	}
	for kind, w := range want {
		for _, restore := range []bool{false, true} {
			op, err := aggop.NewSetOp(kind, 1, false)
			if err != nil {
				t.Fatal(err)
			}
			var out optest.Out
			for _, c := range setOpSteps {
				if restore {
					snap, err := op.Snapshot()
					if err != nil {
						t.Fatal(err)
					}
					op, _ = aggop.NewSetOp(kind, 1, false)
					if err := op.Restore(snap); err != nil {
						t.Fatalf("%s: restore: %v", kind, err)
					}
				}
				if err := op.Process(optest.Batch(c), &out); err != nil {
					t.Fatal(err)
				}
			}
			if got := strings.Join(out.Lines, " "); got != w {
				t.Errorf("%s (restore at every step %v): got %s, want %s", kind, restore, got, w)
			}
		}
	}
}

// TestSetOpBatch: in batch mode the final multiplicities come at the end.
func TestSetOpBatch(t *testing.T) {
	want := map[aggop.SetOpKind][]string{
		aggop.Intersect:    {"+I[x]", "+I[y]"},
		aggop.IntersectAll: {"+I[x]", "+I[y]"},
		aggop.Except:       {"+I[null]"},
		aggop.ExceptAll:    {"+I[null]"},
	}
	for kind, w := range want {
		op, _ := aggop.NewSetOp(kind, 1, true)
		var out optest.Out
		if err := op.Process(optest.Batch(setOpSteps...), &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Lines) != 0 {
			t.Errorf("%s emitted before the end: %v", kind, out.Lines)
		}
		if err := op.Finish(&out); err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(slices.Values(out.Lines))
		if !slices.Equal(got, w) {
			t.Errorf("%s: got %v, want %v", kind, got, w)
		}
	}
}

func TestSetOpRestoreRefusesDamage(t *testing.T) {
	op, _ := aggop.NewSetOp(aggop.Intersect, 1, false)
	var out optest.Out
	if err := op.Process(optest.Batch(setOpSteps[:4]...), &out); err != nil {
		t.Fatal(err)
	}
	snap, _ := op.Snapshot()
	for _, bad := range [][]byte{nil, {9}, snap[:len(snap)-1]} {
		fresh, _ := aggop.NewSetOp(aggop.Intersect, 1, false)
		if err := fresh.Restore(bad); err == nil {
			t.Errorf("restore of %x: no error", bad)
		}
	}
	two, _ := aggop.NewSetOp(aggop.Intersect, 2, false)
	if err := two.Restore(snap); err == nil {
		t.Error("restore into another width: no error")
	}
}

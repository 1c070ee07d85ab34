package rankop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestSort: a batch ORDER BY emits every row at the end, in the keys'
// order (ASC or DESC, NULLs where each key puts them, several keys),
// rows of equal keys in arrival order; the rows held survive a snapshot
// and restore; a change other than an insert is refused.
func TestSort(t *testing.T) {
	in := []row.Change{
		optest.Ins(1, "b", 2.5), optest.Ins(2, nil, 1.0), optest.Ins(3, "a", nil),
		optest.Ins(4, "b", -1.0), optest.Ins(5, "a", 2.5), optest.Ins(6, nil, nil), optest.Ins(7, "b", 2.5),
	}
	for _, tc := range []struct {
		name string
		keys []SortKey
		want []int64 // the ids, in order
	}{
		{"asc nulls first", []SortKey{{Col: 1, NullsFirst: true}}, []int64{2, 6, 3, 5, 1, 4, 7}},
		{"desc nulls last", []SortKey{{Col: 1, Desc: true}}, []int64{1, 4, 7, 3, 5, 2, 6}},
		{"two keys", []SortKey{{Col: 1, NullsFirst: true}, {Col: 2, Desc: true}}, []int64{2, 6, 5, 3, 1, 7, 4}},
		{"double, nulls last", []SortKey{{Col: 2}}, []int64{4, 2, 1, 5, 7, 3, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, restore := range []bool{false, true} {
				op := NewSort(tc.keys)
				out := &optest.Out{}
				if err := op.Process(optest.Batch(in[:4]...), out); err != nil {
					t.Fatal(err)
				}
				if restore {
					snap, err := op.Snapshot()
					if err != nil {
						t.Fatal(err)
					}
					op = NewSort(tc.keys)
					if err := op.Restore(snap); err != nil {
						t.Fatal(err)
					}
				}
				if err := op.Process(optest.Batch(in[4:]...), out); err != nil {
					t.Fatal(err)
				}
				if len(out.Lines) != 0 || op.StateEntries() != 7 || op.StateBytes() <= 0 {
					t.Fatalf("before the end: %d lines, %d entries, %d bytes", len(out.Lines), op.StateEntries(), op.StateBytes())
				}
				if err := op.Finish(out); err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, r := range out.Rows {
					got = append(got, r.Row[0].Int64())
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("restore %v: ids %v, want %v\n%v", restore, got, tc.want, out.Lines)
				}
				if op.StateEntries() != 0 {
					t.Errorf("%d rows held after the end", op.StateEntries())
				}
			}
		})
	}
	if err := NewSort(nil).Process(optest.Batch(optest.Del(1, "a", 1.0)), &optest.Out{}); err == nil {
		t.Error("a -D in a batch input: no error")
	}
	if err := NewSort(nil).Restore([]byte{9}); err == nil {
		t.Error("a snapshot of another version: no error")
	}
}

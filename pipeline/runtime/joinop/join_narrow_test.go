package joinop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// A join whose rows the planner narrowed restores a snapshot of the
// join over whole rows (written before the narrowing): the saved rows,
// stored and held, are cut to the columns it keeps, and it goes on as
// the whole join would have, its output the same columns. Batch (a hash
// join: right rows in the probe table, then left rows probed) and
// streaming (both sides stored, LEFT: a padded row retracted).
func TestNarrowedJoinRestoresWholeRows(t *testing.T) {
	for _, batch := range []bool{false, true} {
		// Whole rows: left (k, pad, a), right (k, x, pad); the join
		// emits left a and right x: [2, 4].
		whole := JoinSpec{Kind: LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
			LeftAppendOnly: batch, RightAppendOnly: batch, Batch: batch, RightFirst: batch, Output: []int{2, 4}}
		// Narrowed: left (k, a), right (k, x).
		narrow := JoinSpec{Kind: LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
			LeftAppendOnly: batch, RightAppendOnly: batch, Batch: batch, RightFirst: batch, Output: []int{1, 3},
			Narrowed: [2][]int{{0, 2}, {0, 1}}, WholeWidth: [2]int{3, 3}}
		w := NewJoin(whole)
		feed := func(j *Join, side int, c row.Change) []string {
			out := &optest.Out{}
			if err := j.ProcessInput(side, &row.Batch{Changes: []row.Change{c}}, out); err != nil {
				t.Fatal(err)
			}
			got := out.Take()
			slices.Sort(got)
			return got
		}
		feed(w, 1, optest.Ins(1, "x1", "p"))
		feed(w, 1, optest.Ins(2, "x2", "p"))
		if !batch {
			feed(w, 0, optest.Ins(3, "p", "a3"))
		}
		snap, err := w.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		n := NewJoin(narrow)
		if err := n.Restore(snap); err != nil {
			t.Fatalf("batch %v: %v", batch, err)
		}
		steps := []struct {
			side        int
			whole, narr row.Change
		}{
			{0, optest.Ins(1, "p", "a1"), optest.Ins(1, "a1")},
			{0, optest.Ins(9, "p", "a9"), optest.Ins(9, "a9")},
		}
		if !batch {
			steps = append(steps, struct {
				side        int
				whole, narr row.Change
			}{1, optest.Ins(3, "x3", "p"), optest.Ins(3, "x3")})
		}
		for i, s := range steps {
			want, got := feed(w, s.side, s.whole), feed(n, s.side, s.narr)
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("batch %v, step %d: narrowed %q, whole %q", batch, i, got, want)
			}
		}
		wo, no := &optest.Out{}, &optest.Out{}
		if batch {
			if err := w.Finish(wo); err != nil {
				t.Fatal(err)
			}
			if err := n.Finish(no); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := no.Take(), wo.Take(); !slices.Equal(got, want) {
			t.Errorf("batch %v, finish: narrowed %q, whole %q", batch, got, want)
		}
	}
}

// A filter the planner moved below the join (JoinSpec.LeftKeep) reads
// the input's whole rows, columns a narrowed join drops among them: a
// restored row of whole width is filtered as saved, then cut.
func TestNarrowedJoinFiltersWholeRowsAsSaved(t *testing.T) {
	padSet := func(r row.Row) (bool, error) { return !r[1].IsNull(), nil }
	whole := JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3, Output: []int{2, 4}}
	narrow := JoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2, Output: []int{1, 3},
		Narrowed: [2][]int{{0, 2}, {0, 1}}, WholeWidth: [2]int{3, 3}, LeftKeep: padSet}
	w := NewJoin(whole)
	for _, c := range []row.Change{optest.Ins(1, "p", "a1"), optest.Ins(1, nil, "dropped")} {
		if err := w.ProcessInput(0, &row.Batch{Changes: []row.Change{c}}, &optest.Out{}); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := w.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	n := NewJoin(narrow)
	if err := n.Restore(snap); err != nil {
		t.Fatal(err)
	}
	out := &optest.Out{}
	if err := n.ProcessInput(1, &row.Batch{Changes: []row.Change{optest.Ins(1, "x1")}}, out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.Take(), []string{"+I[a1, x1]"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

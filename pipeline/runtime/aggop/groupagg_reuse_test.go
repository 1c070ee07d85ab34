package aggop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestGroupAggReusesTheResultsBefore: a change to the group the change
// before changed takes its -U from the results that change emitted
// (nextOf), not from the store again; a change to another group, a new
// group, a group deleted or a new batch asks the store. The changes are
// Flink's either way: the -U is what the +U before it was.
func TestGroupAggReusesTheResultsBefore(t *testing.T) {
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 1, ArgType: optest.TBigInt}, {Func: CountDistinct, Arg: 1, ArgType: optest.TBigInt}}
	g := optest.Must(NewGroupAgg([]int{0}, aggs, GroupAggOptions{}))
	out := &optest.Out{}
	steps := []struct {
		in       []row.Change
		want     []string
		nextOfOf string // the group whose slot nextOf holds after, "" for none
	}{
		{[]row.Change{optest.Ins("a", 1), optest.Ins("a", 2)},
			[]string{"+I[a, 1, 1, 1]", "-U[a, 1, 1, 1]", "+U[a, 2, 3, 2]"}, "a"},
		{[]row.Change{optest.Ins("a", 2), optest.Ins("b", 5)},
			[]string{"-U[a, 2, 3, 2]", "+U[a, 3, 5, 2]", "+I[b, 1, 5, 1]"}, "b"},
		{[]row.Change{optest.Ins("a", 4), optest.UB("b", 5)},
			[]string{"-U[a, 3, 5, 2]", "+U[a, 4, 9, 3]", "-D[b, 1, 5, 1]"}, ""},
		{[]row.Change{optest.UB("a", 4), optest.UA("a", 7), optest.Ins("c", 1), optest.UB("a", 7)},
			[]string{"-U[a, 4, 9, 3]", "+U[a, 3, 5, 2]", "-U[a, 3, 5, 2]", "+U[a, 4, 12, 3]", "+I[c, 1, 1, 1]", "-U[a, 4, 12, 3]", "+U[a, 3, 5, 2]"}, "a"},
	}
	for i, s := range steps {
		if err := g.Process(optest.Batch(s.in...), out); err != nil {
			t.Fatal(err)
		}
		if got := out.Take(); !slices.Equal(got, s.want) {
			t.Fatalf("step %d: %q, want %q", i, got, s.want)
		}
		want := int32(-1)
		if s.nextOfOf != "" {
			id, ok := g.index.Find(g.appendKey(nil, row.Row{row.StringValue(s.nextOfOf)}))
			if !ok {
				t.Fatalf("step %d: no group %s", i, s.nextOfOf)
			}
			want = id
		}
		if g.nextOf != want {
			t.Fatalf("step %d: nextOf %d, want %d (group %q)", i, g.nextOf, want, s.nextOfOf)
		}
	}
}

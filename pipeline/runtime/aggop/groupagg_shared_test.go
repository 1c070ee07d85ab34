package aggop

import (
	"fmt"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestGroupAggSharedArgRestoresPerAggregateState: the state of a GROUP BY
// whose input had a column per aggregate ([k, v, v, w] for MAX(v),
// MIN(v), MAX(w)) restores into one whose aggregates over v share a
// column ([k, v, w], StateCols [0, 1, 1, 2]) while v widens from INT to
// BIGINT and w stays INT: WidenColumns names the state's columns, and
// the restored operator goes on as one that read every row as BIGINT.
func TestGroupAggSharedArgRestoresPerAggregateState(t *testing.T) {
	old := optest.Must(NewGroupAgg([]int{0}, []AggCall{
		{Func: Max, Arg: 1, ArgType: optest.TInt},
		{Func: Min, Arg: 2, ArgType: optest.TInt},
		{Func: Max, Arg: 3, ArgType: optest.TInt},
	}, GroupAggOptions{}))
	if err := old.Process(optest.Batch(
		optest.Ins("a", int32(5), int32(5), int32(7)),
		optest.Ins("a", int32(2), int32(2), int32(9)),
		optest.Ins("b", int32(4), int32(4), int32(1)),
	), &optest.Out{}); err != nil {
		t.Fatal(err)
	}
	snap, err := old.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	shared := func() *GroupAgg {
		return optest.Must(NewGroupAgg([]int{0}, []AggCall{
			{Func: Max, Arg: 1, ArgType: optest.TBigInt},
			{Func: Min, Arg: 1, ArgType: optest.TBigInt},
			{Func: Max, Arg: 2, ArgType: optest.TInt},
		}, GroupAggOptions{StateCols: []int{0, 1, 1, 2}}))
	}
	g := shared()
	g.WidenRestore(map[row.TypeID]row.TypeID{row.Int: row.BigInt})
	g.WidenColumns([]row.TypeID{row.Null, row.BigInt, row.BigInt, row.Null})
	if err := g.Restore(snap); err != nil {
		t.Fatal(err)
	}
	more := []row.Change{
		optest.Ins("a", 1, int32(8)),
		optest.Del("a", 5, int32(7)),
		optest.Ins("b", 6, int32(3)),
	}
	got := &optest.Out{}
	if err := g.Process(optest.Batch(more...), got); err != nil {
		t.Fatal(err)
	}

	ref := shared()
	if err := ref.Process(optest.Batch(
		optest.Ins("a", 5, int32(7)),
		optest.Ins("a", 2, int32(9)),
		optest.Ins("b", 4, int32(1)),
	), &optest.Out{}); err != nil {
		t.Fatal(err)
	}
	want := &optest.Out{}
	if err := ref.Process(optest.Batch(more...), want); err != nil {
		t.Fatal(err)
	}
	if g, w := typed(got), typed(want); len(w) == 0 || !slices.Equal(g, w) {
		t.Fatalf("after the restore:\n got %q\nwant %q", g, w)
	}
}

// typed is o's changes, each value with its type: a BIGINT and an INT
// print alike.
func typed(o *optest.Out) []string {
	var out []string
	for _, c := range o.Rows {
		s := c.Kind.String()
		for _, v := range c.Row {
			s += fmt.Sprintf(" %s:%s", v, v.Type())
		}
		out = append(out, s)
	}
	return out
}

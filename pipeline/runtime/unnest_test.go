package runtime

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

func strArray(xs ...string) row.Value {
	vs := make([]row.Value, len(xs))
	for i, x := range xs {
		vs[i] = row.StringValue(x)
	}
	return row.ArrayValue(vs)
}

// TestUnnest: one output row per element with the input row's kind, ROW
// elements spread into their fields, a MAP into key and value, the
// ordinality appended, NULL and empty arrays joining nothing, a failure
// going to Reject.
func TestUnnest(t *testing.T) {
	col1 := func(r row.Row) (row.Value, error) { return r[1], nil }
	pair := row.StructValue([]row.Value{row.IntValue(1), row.StringValue("x")})
	for _, tc := range []struct {
		name string
		u    *Unnest
		in   []row.Change
		want []string
	}{
		{"array keeps kinds", &Unnest{Of: col1}, []row.Change{
			{Kind: row.Insert, Row: row.Row{row.IntValue(1), strArray("a", "b")}},
			{Kind: row.UpdateBefore, Row: row.Row{row.IntValue(1), strArray("a", "b")}},
			{Kind: row.UpdateAfter, Row: row.Row{row.IntValue(1), strArray("c")}},
			{Kind: row.Delete, Row: row.Row{row.IntValue(1), strArray("c")}},
			{Kind: row.Insert, Row: row.Row{row.IntValue(2), row.NullValue}},
			{Kind: row.Insert, Row: row.Row{row.IntValue(3), strArray()}},
		}, []string{"+I[1, [a, b], a]", "+I[1, [a, b], b]", "-U[1, [a, b], a]", "-U[1, [a, b], b]", "+U[1, [c], c]", "-D[1, [c], c]"}},
		{"rows and ordinality", &Unnest{Of: col1, Fields: 2, Ordinality: true}, []row.Change{
			{Kind: row.Insert, Row: row.Row{row.IntValue(1), row.ArrayValue([]row.Value{pair, row.NullValue})}},
		}, []string{"+I[1, [+I[1, x], null], 1, x, 1]", "+I[1, [+I[1, x], null], null, null, 2]"}},
		{"left join keeps NULL and empty arrays, NULL padded, with their kinds", &Unnest{Of: col1, Left: true, Ordinality: true}, []row.Change{
			{Kind: row.Insert, Row: row.Row{row.IntValue(1), strArray("a")}},
			{Kind: row.Insert, Row: row.Row{row.IntValue(2), row.NullValue}},
			{Kind: row.UpdateBefore, Row: row.Row{row.IntValue(3), strArray()}},
			{Kind: row.UpdateAfter, Row: row.Row{row.IntValue(3), strArray("b")}},
		}, []string{"+I[1, [a], a, 1]", "+I[2, null, null, null]", "-U[3, [], null, null]", "+U[3, [b], b, 1]"}},
		{"left join of an empty map", &Unnest{Of: col1, Map: true, Left: true}, []row.Change{
			{Kind: row.Insert, Row: row.Row{row.IntValue(1), row.MapValue(nil, nil)}},
		}, []string{"+I[1, {}, null, null]"}},
		{"map", &Unnest{Of: col1, Map: true, Ordinality: true}, []row.Change{
			{Kind: row.Insert, Row: row.Row{row.IntValue(1), row.MapValue([]row.Value{row.StringValue("k"), row.StringValue("j")}, []row.Value{row.IntValue(5), row.NullValue})}},
		}, []string{"+I[1, {k=5, j=null}, k, 5, 1]", "+I[1, {k=5, j=null}, j, null, 2]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &optest.Out{}
			if err := tc.u.Process(optest.Batch(tc.in...), out); err != nil {
				t.Fatal(err)
			}
			if got := out.Take(); !slices.Equal(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	boom := errors.New("boom")
	var rejected []string
	u := &Unnest{Of: func(row.Row) (row.Value, error) { return row.NullValue, boom }}
	if err := u.Process(optest.Batch(row.Change{Kind: row.Insert, Row: row.Row{row.IntValue(1)}}), &optest.Out{}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("without Reject: %v", err)
	}
	u.Reject = func(b connector.BadRecord) error { rejected = append(rejected, b.Err.Error()); return nil }
	if err := u.Process(optest.Batch(row.Change{Kind: row.Insert, Row: row.Row{row.IntValue(1)}}), &optest.Out{}); err != nil || len(rejected) != 1 {
		t.Fatalf("with Reject: %v, %q", err, rejected)
	}
}

// TestCompositeKeysSurviveSnapshot: a GROUP BY on an ARRAY key and a
// LAST_VALUE of a MAP are snapshotted and restored with their values.
func TestCompositeKeysSurviveSnapshot(t *testing.T) {
	mt := row.MapOf(row.Of(row.String), row.Of(row.Int))
	m := func(v int32) row.Value {
		return row.MapValue([]row.Value{row.StringValue("v")}, []row.Value{row.IntValue(v)})
	}
	fresh := func() operator.Operator {
		return optest.Must(aggop.NewGroupAgg([]int{0}, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.LastValue, Arg: 1, ArgType: mt}}, aggop.GroupAggOptions{InsertOnly: true}))
	}
	a := fresh()
	out := &optest.Out{}
	first := []row.Change{{Kind: row.Insert, Row: row.Row{strArray("x", "y"), m(1)}}, {Kind: row.Insert, Row: row.Row{strArray("x"), m(2)}}}
	optest.Drive(t, a, []optest.Step{{Batch: first}}, out)
	out.Take()
	b := optest.Restored(t, fresh, a)
	optest.Drive(t, b, []optest.Step{{Batch: []row.Change{{Kind: row.Insert, Row: row.Row{strArray("x", "y"), m(3)}}}}}, out)
	want := []string{"-U[[x, y], 1, {v=1}]", "+U[[x, y], 2, {v=3}]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Fatalf("after restore: got %q, want %q", got, want)
	}
}

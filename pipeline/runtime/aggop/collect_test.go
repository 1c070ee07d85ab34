package aggop

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestCollect: COLLECT's multiset after each accumulate (+) or retract
// (-), printed as Flink prints it; a snapshot restored into a fresh store
// after every step must give the same multiset.
func TestCollect(t *testing.T) {
	type step struct {
		add  bool
		v    row.Value
		want string
	}
	i32, str, null := row.IntValue, row.StringValue, row.NullValue
	tests := []struct {
		name  string
		call  AggCall
		steps []step
	}{
		{"counts, NULL skipped, a value leaves at 0", AggCall{Func: Collect, ArgType: optest.TInt}, []step{
			{true, null, "{}"}, {true, i32(2), "{2=1}"}, {true, i32(1), "{1=1, 2=1}"}, {true, i32(2), "{1=1, 2=2}"},
			{false, i32(2), "{1=1, 2=1}"}, {false, i32(1), "{2=1}"}, {false, i32(2), "{}"}}},
		{"a retraction of an absent value counts -1, as Flink's", AggCall{Func: Collect, ArgType: optest.TInt}, []step{
			{false, i32(7), "{7=-1}"}, {true, i32(7), "{}"}}},
		{"Java's HashMap order: 20 hashes to bucket 4 of 16, 10 to 10", AggCall{Func: Collect, ArgType: optest.TInt}, []step{
			{true, i32(10), "{10=1}"}, {true, i32(20), "{20=1, 10=1}"}, {true, i32(17), "{17=1, 20=1, 10=1}"}}},
		{"strings in the order of Java's HashMap of Strings: ball (bucket 1) before atlas (6)", AggCall{Func: Collect, ArgType: optest.TString}, []step{
			{true, str("atlas"), "{atlas=1}"}, {true, str("ball"), "{ball=1, atlas=1}"}}},
		{"distinct: each value once", AggCall{Func: Collect, ArgType: optest.TString, Distinct: true}, []step{
			{true, str("b"), "{b=1}"}, {true, str("b"), "{b=1}"}, {true, str("a"), "{a=1, b=1}"},
			{false, str("b"), "{a=1, b=1}"}, {false, str("b"), "{a=1}"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := tt.call
			if err := call.Validate(); err != nil {
				t.Fatal(err)
			}
			if rt := call.ResultType(); !rt.Multiset() || !rt.NotNull || rt.Key() != call.ArgType {
				t.Fatalf("result type %s", rt)
			}
			st := NewStore([]AggCall{call}, false, false)
			id := st.Alloc("")
			res := make([]row.Value, 1)
			for i, s := range tt.steps {
				st.Update(id, row.Row{s.v}, s.add)
				for _, x := range []*Store{st, restoredOf(t, st, call)} {
					x.Results(id, res)
					if got := res[0].String(); got != s.want {
						t.Fatalf("step %d: %s, want %s (restored: %t)", i, got, s.want, x != st)
					}
				}
			}
		})
	}
}

// TestCollectMerge: window slices merge their counts.
func TestCollectMerge(t *testing.T) {
	st := NewStore([]AggCall{{Func: Collect, ArgType: optest.TBigInt}}, true, false)
	a, b := st.Alloc(""), st.Alloc("")
	for _, v := range []int64{1, 2} {
		st.Update(a, row.Row{row.BigIntValue(v)}, true)
	}
	for _, v := range []int64{2, 3} {
		st.Update(b, row.Row{row.BigIntValue(v)}, true)
	}
	st.Merge(a, b)
	res := make([]row.Value, 1)
	st.Results(a, res)
	if got := res[0].String(); got != "{1=1, 2=2, 3=1}" {
		t.Fatalf("merged %s", got)
	}
}

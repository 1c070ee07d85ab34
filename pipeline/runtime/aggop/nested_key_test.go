package aggop

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// nestedKeys are ARRAY, MAP and ROW values, nested in each other, as
// group keys carry them.
func nestedKeys() row.Row {
	arr := row.ArrayValue([]row.Value{row.StringValue("a"), row.NullValue, row.StringValue("bc")})
	m := row.MapValue([]row.Value{row.StringValue("k1"), row.StringValue("k2")}, []row.Value{row.BigIntValue(1), arr})
	st := row.StructValue([]row.Value{row.IntValue(7), m, row.ArrayValue(nil)})
	return row.Row{arr, m, st, row.BigIntValue(3)}
}

func TestDecodeKeyNested(t *testing.T) {
	vals := nestedKeys()
	key := string(row.KeyOf(nil, vals, []int{0, 1, 2, 3}))
	got := make(row.Row, len(vals))
	if err := DecodeKey(got, key); err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if !row.Equal(got[i], vals[i]) || got[i].Type() != vals[i].Type() {
			t.Errorf("column %d: decoded %s, want %s", i, got[i], vals[i])
		}
	}
	for _, bad := range []string{key[:len(key)-1], key[:5]} {
		if err := DecodeKey(make(row.Row, len(vals)), bad); err == nil {
			t.Errorf("DecodeKey(%q) accepted a malformed key", bad)
		}
	}
}

// TestGroupByNestedKey groups by an ARRAY and a ROW column in every
// mode: the batch and mini-batch results are built from the key's
// encoding, the streaming ones from the row.
func TestGroupByNestedKey(t *testing.T) {
	k := nestedKeys()
	in := optest.Batch(
		optest.Ins(k[0], k[2], 1),
		optest.Ins(k[0], k[2], 2),
		optest.Ins(k[0], row.NullValue, 5),
	)
	want := []string{
		"+I[" + k[0].String() + ", " + k[2].String() + ", 2, 3]",
		"+I[" + k[0].String() + ", null, 1, 5]",
	}
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 2, ArgType: optest.TBigInt}}
	for _, opt := range []GroupAggOptions{{Batch: true, InsertOnly: true}, {MiniBatch: true, InsertOnly: true, MiniBatchSize: 100}} {
		g := optest.Must(NewGroupAgg([]int{0, 1}, aggs, opt))
		out := &optest.Out{}
		if err := g.Process(in, out); err != nil {
			t.Fatal(err)
		}
		if err := g.Flush(out); err != nil {
			t.Fatalf("%+v: flush: %v", opt, err)
		}
		if err := g.Finish(out); err != nil {
			t.Fatalf("%+v: finish: %v", opt, err)
		}
		got := out.Take()
		slices.Sort(got)
		w := slices.Clone(want)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("%+v: got %q, want %q", opt, got, w)
		}
	}
}

package aggop

import (
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// objectArg is JSON_OBJECTAGG's projected argument: ROW(k, k's JSON
// text, the value's JSON text or NULL).
var objectArgType = row.RowOf(row.Field{Name: "k", Type: optest.TString}, row.Field{Name: "q", Type: optest.TString}, row.Field{Name: "v", Type: optest.TString})

func objectArg(k string, v row.Value) row.Value {
	key := row.StringValue(k)
	if k == "<null>" {
		key = row.NullValue
	}
	return row.StructValue([]row.Value{key, row.StringValue(`"` + k + `"`), v})
}

// TestArrayAggs: ARRAY_AGG, JSON_ARRAYAGG and JSON_OBJECTAGG after each
// accumulate (+) or retract (-), as Flink gives them; a snapshot restored
// into a fresh store after every step must give the same result, and a
// failure (JSON_OBJECTAGG's duplicate or NULL key) is the store's error.
func TestArrayAggs(t *testing.T) {
	type step struct {
		add  bool
		v    row.Value
		want string // the result, or "error: ..." for the store's failure
	}
	i32, str, null := row.IntValue, row.StringValue, row.NullValue
	arr := AggCall{Func: ArrayAgg, ArgType: optest.TInt, KeepNulls: true}
	arrIgnore := AggCall{Func: ArrayAgg, ArgType: optest.TInt}
	jarr := AggCall{Func: JSONArrayAgg, ArgType: optest.TString}
	obj := AggCall{Func: JSONObjectAgg, ArgType: objectArgType, KeepNulls: true}
	objAbsent := AggCall{Func: JSONObjectAgg, ArgType: objectArgType}
	tests := []struct {
		name  string
		call  AggCall
		steps []step
	}{
		{"ARRAY_AGG keeps NULLs and arrival order; a retraction removes the earliest equal value", arr, []step{
			{true, i32(2), "[2]"}, {true, null, "[2, null]"}, {true, i32(1), "[2, null, 1]"}, {true, i32(2), "[2, null, 1, 2]"},
			{false, i32(2), "[null, 1, 2]"}, {false, null, "[1, 2]"}, {false, i32(1), "[2]"}, {false, i32(2), "null"}}},
		{"ARRAY_AGG IGNORE NULLS; a retraction of an absent value is kept aside", arrIgnore, []step{
			{true, null, "null"}, {false, i32(5), "null"}, {true, i32(5), "[5]"}, {false, null, "[5]"}}},
		{"ARRAY_AGG(DISTINCT): each value once, NULL one of them", AggCall{Func: ArrayAgg, ArgType: optest.TInt, KeepNulls: true, Distinct: true}, []step{
			{true, i32(1), "[1]"}, {true, null, "[1, null]"}, {true, i32(1), "[1, null]"}, {false, i32(1), "[1, null]"}, {false, i32(1), "[null]"}}},
		{"JSON_ARRAYAGG joins the item texts; [] for none", jarr, []step{
			{true, null, "[]"}, {true, str("1"), "[1]"}, {true, str(`"a"`), `[1,"a"]`}, {true, str("1"), `[1,"a",1]`},
			{false, str("1"), `["a",1]`}, {false, str(`"a"`), "[1]"}, {false, str("9"), "[1]"}}},
		{"JSON_OBJECTAGG sorts keys in Java's order (UTF-16), writes NULL as null", obj, []step{
			{true, objectArg("b", str("1")), `{"b":1}`}, {true, objectArg("a", null), `{"a":null,"b":1}`},
			{true, objectArg("\U0001F600", str("2")), `{"a":null,"b":1,"` + "\U0001F600" + `":2}`},
			{true, objectArg("\uFF21", str("3")), `{"a":null,"b":1,"` + "\U0001F600" + `":2,"` + "\uFF21" + `":3}`}}},
		{"JSON_OBJECTAGG: a retraction removes an equal value, NULL too", obj, []step{
			{true, objectArg("a", null), `{"a":null}`}, {true, objectArg("b", str("1")), `{"a":null,"b":1}`},
			{false, objectArg("b", str("2")), `{"a":null,"b":1}`}, {false, objectArg("b", str("1")), `{"a":null}`},
			{false, objectArg("a", null), `{}`}, {true, objectArg("a", str("3")), `{"a":3}`}}},
		{"JSON_OBJECTAGG ABSENT ON NULL leaves NULL values out", objAbsent, []step{
			{true, objectArg("a", null), `{}`}, {true, objectArg("a", str("1")), `{"a":1}`}}},
		{"JSON_OBJECTAGG: a duplicate key fails", obj, []step{
			{true, objectArg("a", str("1")), `{"a":1}`}, {true, objectArg("a", str("2")), "error: key 'a' is already present"}}},
		{"JSON_OBJECTAGG: a NULL key fails", obj, []step{
			{true, objectArg("<null>", str("1")), "error: a key is NULL"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := tt.call
			if err := call.Validate(); err != nil {
				t.Fatal(err)
			}
			st := NewStore([]AggCall{call}, false, false)
			id := st.Alloc("")
			res := make([]row.Value, 1)
			for i, s := range tt.steps {
				st.Update(id, row.Row{s.v}, s.add)
				if want, isErr := strings.CutPrefix(s.want, "error: "); isErr {
					if err := st.Err(); err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("step %d: error %v, want %q", i, err, want)
					}
					return
				}
				if err := st.Err(); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
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

// TestArrayAggMerge: window slices merge as Flink's merge methods do:
// ARRAY_AGG concatenates and then applies the retractions kept aside,
// JSON_OBJECTAGG applies the source's retractions before its members; a
// snapshot keeps the retractions kept aside.
func TestArrayAggMerge(t *testing.T) {
	i32, str := row.IntValue, row.StringValue
	calls := []AggCall{
		{Func: ArrayAgg, ArgType: optest.TInt, KeepNulls: true, Arg: 0},
		{Func: JSONObjectAgg, ArgType: objectArgType, KeepNulls: true, Arg: 1},
	}
	st := NewStore(calls, false, false)
	a, b := st.Alloc(""), st.Alloc("")
	st.Update(a, row.Row{i32(1), objectArg("x", str("1"))}, true)
	st.Update(a, row.Row{i32(2), objectArg("y", str("2"))}, true)
	// b retracts what a holds: kept aside until the merge.
	st.Update(b, row.Row{i32(1), objectArg("x", str("1"))}, false)
	st.Update(b, row.Row{i32(3), objectArg("z", str("3"))}, true)
	restored := NewStore(calls, false, false)
	restored.RestoreState(row.NewDecoder(st.AppendState(nil, nil)), nil)
	for _, s := range []*Store{st, restored} {
		s.Merge(a, b)
		res := make([]row.Value, 2)
		s.Results(a, res)
		if got := res[0].String() + " " + res[1].String(); got != `[2, 3] {"y":2,"z":3}` {
			t.Fatalf("merged %s", got)
		}
	}
	// MergeAhead puts the source's values first: a HOP window's newer
	// slices come before its first one, in Flink's merge order.
	hop := NewStore(calls[:1], true, false)
	first, second := hop.Alloc(""), hop.Alloc("")
	hop.Update(first, row.Row{i32(1)}, true)
	hop.Update(second, row.Row{i32(4)}, true)
	hop.MergeAhead(first, second)
	res := make([]row.Value, 1)
	if hop.Results(first, res); res[0].String() != "[4, 1]" {
		t.Fatalf("merged ahead %s, want [4, 1]", res[0])
	}
	// Two slices holding one key fail, as Flink's merge does.
	dup := NewStore([]AggCall{{Func: JSONObjectAgg, ArgType: objectArgType, KeepNulls: true}}, false, false)
	c, d := dup.Alloc(""), dup.Alloc("")
	dup.Update(c, row.Row{objectArg("x", str("1"))}, true)
	dup.Update(d, row.Row{objectArg("x", str("2"))}, true)
	if dup.Merge(c, d); dup.Err() == nil {
		t.Fatal("merged a duplicate key")
	}
}

// TestArrayAggTypes: the result types, as Flink's.
func TestArrayAggTypes(t *testing.T) {
	for _, tt := range []struct {
		call AggCall
		want string
	}{
		{AggCall{Func: ArrayAgg, ArgType: optest.TInt}, "ARRAY<INT>"},
		{AggCall{Func: JSONArrayAgg, ArgType: optest.TString}, "STRING NOT NULL"},
		{AggCall{Func: JSONObjectAgg, ArgType: objectArgType}, "STRING NOT NULL"},
	} {
		if got := tt.call.ResultType().String(); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.call, got, tt.want)
		}
	}
	if err := (AggCall{Func: JSONObjectAgg, ArgType: optest.TString}).Validate(); err == nil {
		t.Error("JSON_OBJECTAGG over a STRING validated")
	}
}

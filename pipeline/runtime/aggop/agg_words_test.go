package aggop

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// goldenWords is a GroupAgg snapshot (insert-only, wordGoldenAggs after
// wordGoldenRows) written before MIN/MAX/FIRST/LAST of fixed-width
// types became words: the format must not have changed.
const goldenWords = "010002000407000161040804031205000000000000e0bf0701790602a4130a80897a02050400000000000000c0010109070407000162020000000000000000000000"

// wordGoldenAggs: every insert-only aggregate that became a word, beside
// ones that did not (a STRING MAX, a FLOAT MIN).
func wordGoldenAggs() []AggCall {
	dec := row.Type{ID: row.Decimal, Precision: 10, Scale: 2}
	return []AggCall{
		{Func: CountStar, Arg: -1},
		{Func: Max, Arg: 1, ArgType: row.Type{ID: row.BigInt}},
		{Func: Sum, Arg: 1, ArgType: row.Type{ID: row.BigInt}},
		{Func: Min, Arg: 2, ArgType: row.Type{ID: row.Double}},
		{Func: Max, Arg: 3, ArgType: row.Type{ID: row.String}},
		{Func: Max, Arg: 4, ArgType: dec},
		{Func: FirstValue, Arg: 5, ArgType: row.Type{ID: row.Timestamp}},
		{Func: LastValue, Arg: 6, ArgType: row.Type{ID: row.Int}},
		{Func: Min, Arg: 7, ArgType: row.Type{ID: row.Float}},
		{Func: Max, Arg: 8, ArgType: row.Type{ID: row.Boolean}},
		{Func: Min, Arg: 9, ArgType: row.Type{ID: row.Date}},
	}
}

// wordGoldenRows: key "a" gets two rows, "b" one row of NULLs but the key.
func wordGoldenRows() []row.Row {
	n := row.NullValue
	return []row.Row{
		{row.StringValue("a"), row.BigIntValue(-5), row.DoubleValue(2.5), row.StringValue("x"), row.DecimalValue(1234, 2), row.TimestampValue(1_000_000), row.IntValue(7), row.FloatValue(1.5), row.BoolValue(false), row.DateValue(100)},
		{row.StringValue("b"), n, n, n, n, n, n, n, n, n},
		{row.StringValue("a"), row.BigIntValue(9), row.DoubleValue(-0.5), row.StringValue("y"), row.DecimalValue(-99, 2), row.TimestampValue(2_000_000), row.IntValue(-3), row.FloatValue(-2), row.BoolValue(true), row.DateValue(-4)},
	}
}

func TestGroupAggRestoresPreWordSnapshot(t *testing.T) {
	state, _ := hex.DecodeString(goldenWords)
	g := optest.Must(NewGroupAgg([]int{0}, wordGoldenAggs(), GroupAggOptions{InsertOnly: true, Batch: true}))
	if g.store.valW != 2 || g.store.valSnap != 9 {
		t.Fatalf("layout: valW %d valSnap %d, want the STRING MAX and the FLOAT MIN as Values of 9", g.store.valW, g.store.valSnap)
	}
	if err := g.Restore(state); err != nil {
		t.Fatal(err)
	}
	again, err := g.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, state) {
		t.Fatalf("snapshot after restore differs:\n got %x\nwant %x", again, state)
	}
	// The same rows into a fresh operator give the same snapshot.
	fresh := optest.Must(NewGroupAgg([]int{0}, wordGoldenAggs(), GroupAggOptions{InsertOnly: true, Batch: true}))
	b := &row.Batch{}
	for _, r := range wordGoldenRows() {
		b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: r})
	}
	if err := fresh.Process(b, &optest.Out{}); err != nil {
		t.Fatal(err)
	}
	if s, _ := fresh.Snapshot(); !bytes.Equal(s, state) {
		t.Fatalf("snapshot of the rows differs:\n got %x\nwant %x", s, state)
	}
	out := &optest.Out{}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	n := row.NullValue
	want := []row.Row{
		{row.StringValue("a"), row.BigIntValue(2), row.BigIntValue(9), row.BigIntValue(4), row.DoubleValue(-0.5), row.StringValue("y"),
			row.DecimalValue(1234, 2), row.TimestampValue(1_000_000), row.IntValue(-3), row.FloatValue(-2), row.BoolValue(true), row.DateValue(-4)},
		{row.StringValue("b"), row.BigIntValue(1), n, n, n, n, n, n, n, n, n, n},
	}
	if len(out.Rows) != len(want) {
		t.Fatalf("got %d rows, want %d", len(out.Rows), len(want))
	}
	for i, c := range out.Rows {
		r := c.Row
		for j := range want[i] {
			if !row.Equal(r[j], want[i][j]) {
				t.Errorf("row %d column %d: got %s, want %s", i, j, r[j], want[i][j])
			}
		}
	}
}

// TestAggWordsMatchValues: insert-only MIN/MAX/FIRST/LAST as words give
// the results, the merges and the snapshots of the same store keeping
// Values, on random values of every word type (NULLs, NaN, -0 and +0,
// the int64 extremes included).
func TestAggWordsMatchValues(t *testing.T) {
	dec := row.Type{ID: row.Decimal, Precision: 18, Scale: 3}
	types := []row.Type{{ID: row.BigInt}, {ID: row.Int}, {ID: row.Double}, dec, {ID: row.Timestamp}, {ID: row.TimestampLTZ}, {ID: row.Date}, {ID: row.Boolean}}
	var plain []AggCall
	for col, typ := range types {
		for _, f := range []AggFunc{Min, Max, FirstValue, LastValue} {
			plain = append(plain, AggCall{Func: f, Arg: col, ArgType: typ})
		}
	}
	distinct := slices.Clone(plain)
	for col, typ := range types {
		distinct = append(distinct, AggCall{Func: Max, Arg: col, ArgType: typ, Distinct: true})
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	value := func(typ row.Type) row.Value {
		k := rnd.IntN(12)
		if k == 0 {
			return row.NullValue
		}
		x := rnd.Int64N(21) - 10
		switch k {
		case 1:
			x = math.MaxInt64
		case 2:
			x = math.MinInt64
		}
		switch typ.ID {
		case row.Int:
			return row.IntValue(int32(x))
		case row.Double:
			switch k {
			case 1:
				return row.DoubleValue(math.NaN())
			case 2:
				return row.DoubleValue(math.Copysign(0, -1))
			case 3:
				return row.DoubleValue(0)
			}
			return row.DoubleValue(float64(x) / 4)
		case row.Decimal:
			if k <= 2 {
				x /= 10 // 18 digits at most
			}
			return row.DecimalValue(x, typ.Scale)
		case row.Timestamp:
			return row.TimestampValue(x)
		case row.TimestampLTZ:
			return row.TimestampLTZValue(x)
		case row.Date:
			return row.DateValue(int32(x))
		case row.Boolean:
			return row.BoolValue(x > 0)
		}
		return row.BigIntValue(x)
	}
	for _, tc := range []struct {
		aggs []AggCall
		keep bool
	}{{plain, false}, {plain, true}, {distinct, false}} {
		aggs, keep := tc.aggs, tc.keep
		words, vals := newStoreWords(aggs, true, keep, true), newStoreWords(aggs, true, keep, false)
		if words.valW != 0 || vals.valW != len(aggs) {
			t.Fatalf("layout: valW %d with words, %d without", words.valW, vals.valW)
		}
		const slots = 6
		for range slots {
			words.Alloc("k")
			vals.Alloc("k")
		}
		got, want := make([]row.Value, len(aggs)), make([]row.Value, len(aggs))
		compare := func(step string, id int32) {
			t.Helper()
			words.Results(id, got)
			vals.Results(id, want)
			for j := range got {
				if !row.Equal(got[j], want[j]) || got[j].Type() != want[j].Type() {
					t.Fatalf("%s: slot %d %s: got %s, want %s", step, id, aggs[j], got[j], want[j])
				}
			}
		}
		for i := range 3000 {
			r := make(row.Row, len(types))
			for c, typ := range types {
				r[c] = value(typ)
			}
			if err := words.Check(r); err != nil {
				t.Fatal(err)
			}
			id := int32(rnd.IntN(slots))
			words.Update(id, r, true)
			vals.Update(id, r, true)
			compare("update", id)
			if i%100 == 99 { // a window merging its slices
				src, dst := int32(rnd.IntN(slots)), int32(rnd.IntN(slots))
				if src != dst {
					words.Merge(dst, src)
					vals.Merge(dst, src)
					compare("merge", dst)
					words.Release(src)
					vals.Release(src)
					words.Alloc("k")
					vals.Alloc("k")
					compare("release", src)
				}
			}
		}
		ws, vs := words.AppendState(nil, nil), vals.AppendState(nil, nil)
		if len(aggs) == len(plain) && !bytes.Equal(ws, vs) { // DISTINCT's maps have no order
			t.Fatalf("snapshots differ:\nwords  %x\nvalues %x", ws, vs)
		}
		// Each restores the other's snapshot.
		for _, p := range []struct {
			state []byte
			words bool
		}{{ws, false}, {vs, true}} {
			back := newStoreWords(aggs, true, keep, p.words)
			d := row.NewDecoder(p.state)
			back.RestoreState(d, nil)
			if err := d.End(); err != nil {
				t.Fatal(err)
			}
			if p.words {
				words = back
			} else {
				vals = back
			}
			for id := range int32(slots) {
				compare("restore", id)
			}
		}
	}
}

// TestAggWordRejectsWideDecimal: a DECIMAL(18) word cannot hold a value
// of more digits than its type; check reports it before any change.
func TestAggWordRejectsWideDecimal(t *testing.T) {
	dec := row.Type{ID: row.Decimal, Precision: 18, Scale: 0}
	st := NewStore([]AggCall{{Func: Max, Arg: 0, ArgType: dec}}, true, false)
	wide := row.Decimal128Value(row.Int128{Hi: 1}, 0)
	if err := st.Check(row.Row{wide}); err == nil {
		t.Fatal("no error for a 20-digit value in a DECIMAL(18) MAX")
	}
}

package row

import "testing"

// TestItemEveryType: Item(i) reads past the items before i without making
// them, so it must step over every kind of value exactly as Value reads
// it: each item of a ROW holding every type (nested ones, a wide DECIMAL)
// is the one Items yields, and past the end, or past damage, there is
// none.
func TestItemEveryType(t *testing.T) {
	vals := append(codecValues(),
		Decimal128Value(Int128{Hi: 1 << 40, Lo: 7}, 3),
		ArrayValue([]Value{StringValue("a"), NullValue}),
		MapValue([]Value{StringValue("k")}, []Value{BigIntValue(-5)}),
		StructValue([]Value{IntValue(1), StructValue([]Value{StringValue("deep")})}),
		TimeOfDayValue(3723000000),
		StringValue("last"))
	r := StructValue(vals)
	all := r.ItemSlice()
	if len(all) != len(vals) {
		t.Fatalf("Items yields %d items, want %d", len(all), len(vals))
	}
	for i, want := range vals {
		got, ok := r.Item(i)
		if !ok || !same(got, want) || !same(got, all[i]) {
			t.Errorf("Item(%d) = %#v, %v; want %#v", i, got, ok, want)
		}
	}
	for _, i := range []int{-1, len(vals)} {
		if x, ok := r.Item(i); ok {
			t.Errorf("Item(%d) of %d items = %v", i, len(vals), x)
		}
	}

	m := MapValue([]Value{StringValue("a"), StringValue("b")}, []Value{IntValue(1), IntValue(2)})
	if x, ok := m.Item(3); !ok || x.Int64() != 2 {
		t.Errorf("a map's Item(3), the second value = %v, %v", x, ok)
	}
	if _, ok := m.Item(4); ok {
		t.Error("a map of 2 entries has an Item(4)")
	}

	// Cut inside the string "héllo, wörld": the items before it are
	// there, it and those after it are not.
	cut := -1
	for i, v := range vals {
		if v.Type() == String && v.Str() != "" {
			cut = i
			break
		}
	}
	enc := AppendValue(nil, r)
	d := NewDecoder(enc)
	whole := d.Value()
	head := len(whole.s) - len(AppendValue(nil, vals[len(vals)-1]))
	for i := cut + 1; i < len(vals)-1; i++ {
		head -= len(AppendValue(nil, vals[i]))
	}
	damaged, err := NestedValue(Struct, whole.s[:head-3])
	if err != nil {
		t.Fatal(err)
	}
	if x, ok := damaged.Item(cut - 1); !ok || !same(x, vals[cut-1]) {
		t.Errorf("before the damage: Item(%d) = %v, %v", cut-1, x, ok)
	}
	for _, i := range []int{cut, cut + 1, len(vals) - 1} {
		if x, ok := damaged.Item(i); ok {
			t.Errorf("at or past the damage: Item(%d) = %v", i, x)
		}
	}
}

// BenchmarkItemEachField reads every field of a bid-like ROW one by one,
// as a projection of r.a, r.b, ... does.
func BenchmarkItemEachField(b *testing.B) {
	v := StructValue([]Value{BigIntValue(1007), BigIntValue(2001), BigIntValue(3303408), StringValue("Google"),
		StringValue("https://www.nexmark.com/abc/def/item.htm?query=1"), TimestampValue(1704067200003000), StringValue("padding padding padding padding")})
	b.ReportAllocs()
	for range b.N {
		for i := range 7 {
			if _, ok := v.Item(i); !ok {
				b.Fatal(i)
			}
		}
	}
}

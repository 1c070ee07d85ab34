package row

import (
	"strings"
	"testing"
)

func TestParseNestedType(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "ARRAY<INT>", want: "ARRAY<INT>"},
		{in: "array < varchar(5) not null > not null", want: "ARRAY<VARCHAR(5) NOT NULL> NOT NULL"},
		{in: "MAP<STRING, BYTES>", want: "MAP<STRING, BYTES>"},
		{in: "MAP<STRING, ARRAY<DECIMAL(10, 2)>>", want: "MAP<STRING, ARRAY<DECIMAL(10, 2)>>"},
		{in: "ROW<a INT, `b c` STRING>", want: "ROW<`a` INT, `b c` STRING>"},
		{in: "ROW(a INT, b ROW<c TIMESTAMP(3)>)", want: "ROW<`a` INT, `b` ROW<`c` TIMESTAMP(3)>>"},
		{in: "ROW<a INT COMMENT 'the a'>", want: "ROW<`a` INT>"},
		{in: "MULTISET<STRING> NOT NULL", want: "MULTISET<STRING> NOT NULL"},
		{in: "multiset<ARRAY<INT>>", want: "MULTISET<ARRAY<INT>>"},
		{in: "MULTISET<INT, INT>", err: "MULTISET takes 1 type parameter(s), got 2"},
		{in: "ARRAY<INT", err: "unclosed <"},
		{in: "ARRAY<INT, INT>", err: "ARRAY takes 1 type parameter(s), got 2"},
		{in: "MAP<INT>", err: "MAP takes 2 type parameter(s), got 1"},
		{in: "ROW<a INT, A INT>", err: `duplicate field "A"`},
		{in: "ROW<a>", err: `write each field as "name TYPE"`},
		{in: "ARRAY<FOO>", err: `unknown type "FOO"`},
		{in: "ARRAY<INT> NULLX", err: `unexpected "NULLX"`},
	} {
		got, err := ParseType(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseType(%q) error = %v, want it to contain %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseType(%q): %v", tc.in, err)
			continue
		}
		if got.String() != tc.want {
			t.Errorf("ParseType(%q) = %s, want %s", tc.in, got, tc.want)
		}
		again, err := ParseType(got.String())
		if err != nil || again != got {
			t.Errorf("ParseType(%q) does not read back: %v, %v", got.String(), again, err)
		}
	}
}

func TestNestedTypesCompareByStructure(t *testing.T) {
	a := MapOf(Of(String), ArrayOf(Of(Int)))
	b, _ := ParseType("MAP<STRING, ARRAY<INT>>")
	if a != b {
		t.Fatalf("equal composite types compare unequal: %v vs %v", a, b)
	}
	if a == MapOf(Of(String), ArrayOf(Of(BigInt))) {
		t.Fatal("different composite types compare equal")
	}
	if a.Elem().Elem() != Of(Int) || a.Key() != Of(String) {
		t.Fatalf("Elem/Key = %v, %v", a.Elem(), a.Key())
	}
	// A MULTISET is a MAP of elements to counts, yet a type of its own.
	bag := MultisetOf(Of(String))
	if bag.ID != Map || !bag.Multiset() || bag == MapOf(Of(String), Type{ID: Int, NotNull: true}) || a.Multiset() {
		t.Fatalf("MULTISET<STRING> = %v (multiset %v) equals its MAP, or a MAP is a multiset", bag, bag.Multiset())
	}
	if bag.Key() != Of(String) || bag.Elem() != (Type{ID: Int, NotNull: true}) {
		t.Fatalf("MULTISET Key/Elem = %v, %v", bag.Key(), bag.Elem())
	}
}

func TestNestedValues(t *testing.T) {
	arr := ArrayValue([]Value{IntValue(1), NullValue, IntValue(3)})
	m := MapValue([]Value{StringValue("a"), StringValue("b"), StringValue("a")},
		[]Value{IntValue(1), IntValue(2), IntValue(9)})
	r := StructValue([]Value{IntValue(1), StringValue("x"), arr})
	rt := RowOf(Field{"n", Of(Int)}, Field{"s", Of(String)}, Field{"xs", ArrayOf(Of(Int))})
	for _, tc := range []struct {
		v           Value
		t           Type
		print, text string
		len         int
	}{
		{arr, ArrayOf(Of(Int)), "[1, null, 3]", "[1, NULL, 3]", 3},
		{m, MapOf(Of(String), Of(Int)), "{a=9, b=2}", "{a=9, b=2}", 2},
		{r, rt, "+I[1, x, [1, null, 3]]", "(1, x, [1, NULL, 3])", 3},
		{ArrayValue(nil), ArrayOf(Of(Int)), "[]", "[]", 0},
		{ArrayValue([]Value{DecimalValue(0, 7), DoubleValue(1.5)}), ArrayOf(Of(Double)), "[0E-7, 1.5]", "[0.0000000, 1.5]", 2},
	} {
		if got := tc.v.String(); got != tc.print {
			t.Errorf("print = %s, want %s", got, tc.print)
		}
		if got := tc.v.Text(tc.t); got != tc.text {
			t.Errorf("text = %s, want %s", got, tc.text)
		}
		if got := tc.v.Len(); got != tc.len {
			t.Errorf("%s: Len = %d, want %d", tc.print, got, tc.len)
		}
		d := NewDecoder(AppendValue(nil, tc.v))
		if back := d.Value(); !Equal(back, tc.v) || d.End() != nil {
			t.Errorf("%s: codec gives %v (%v)", tc.print, back, d.Err())
		}
	}
	if x, ok := arr.Item(2); !ok || x.Int64() != 3 {
		t.Errorf("Item(2) = %v, %v", x, ok)
	}
	if _, ok := arr.Item(3); ok {
		t.Error("Item(3) of a 3-element array exists")
	}
	if x, ok := m.Lookup(StringValue("b")); !ok || x.Int64() != 2 {
		t.Errorf("Lookup(b) = %v, %v", x, ok)
	}
	if _, ok := m.Lookup(StringValue("z")); ok {
		t.Error("Lookup(z) found a value")
	}
	if Compare(arr, ArrayValue([]Value{IntValue(1), NullValue})) <= 0 {
		t.Error("an array does not sort after its prefix")
	}
	if string(AppendKey(nil, arr)) == string(AppendKey(nil, ArrayValue([]Value{IntValue(1)}))) {
		t.Error("different arrays have one key")
	}
}

func TestNestedItemsShareTheString(t *testing.T) {
	arr := ArrayValue([]Value{StringValue("hello"), StringValue("world")})
	allocs := testing.AllocsPerRun(100, func() {
		x, _ := arr.Item(1)
		if x.Str() != "world" {
			t.Fatal(x)
		}
	})
	if allocs > 1 {
		t.Errorf("Item allocates %.0f times, want at most 1", allocs)
	}
}

package row

import (
	"errors"
	"math"
	"testing"
)

func codecValues() []Value {
	return []Value{
		NullValue, BoolValue(true), BoolValue(false),
		IntValue(0), IntValue(-1), IntValue(math.MaxInt32), IntValue(math.MinInt32),
		BigIntValue(math.MinInt64), BigIntValue(math.MaxInt64), BigIntValue(7),
		FloatValue(1.5), FloatValue(float32(math.Inf(-1))), DoubleValue(math.Copysign(0, -1)), DoubleValue(math.NaN()), DoubleValue(3.25),
		DecimalValue(-12345, 2), DecimalValue(math.MaxInt64, 18),
		StringValue(""), StringValue("héllo, wörld"), BytesValue([]byte{0, 0xff, 1}),
		DateValue(-719162), DateValue(20000),
		TimestampValue(-62135596800000000), TimestampLTZValue(1700000000123456),
	}
}

// same is identity down to the bits: the codec must give back exactly
// what it got, NaN and -0 included.
func same(a, b Value) bool { return a.id == b.id && a.n == b.n && a.s == b.s && a.scale == b.scale }

func TestCodecRoundTrip(t *testing.T) {
	vals := codecValues()
	var buf []byte
	for _, v := range vals {
		buf = AppendValue(buf, v)
	}
	buf = AppendRow(buf, Row(vals))
	buf = AppendRow(buf, nil)
	buf = AppendString(buf, "tail")
	d := NewDecoder(buf)
	for i, want := range vals {
		if got := d.Value(); !same(got, want) {
			t.Errorf("value %d: got %#v, want %#v", i, got, want)
		}
	}
	r := d.Row()
	if len(r) != len(vals) {
		t.Fatalf("row width %d, want %d", len(r), len(vals))
	}
	for i := range r {
		if !same(r[i], vals[i]) {
			t.Errorf("row column %d: got %#v, want %#v", i, r[i], vals[i])
		}
	}
	if r := d.Row(); len(r) != 0 {
		t.Errorf("empty row decoded as %v", r)
	}
	if s := d.Str(); s != "tail" {
		t.Errorf("string = %q", s)
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
}

func TestCodecSizes(t *testing.T) {
	for _, tc := range []struct {
		v    Value
		size int
	}{
		{NullValue, 1},
		{BigIntValue(7), 2},
		{BigIntValue(-64), 2},
		{DoubleValue(1), 9},
		{StringValue("abc"), 5},
		{DecimalValue(100, 2), 4},
	} {
		if got := len(AppendValue(nil, tc.v)); got != tc.size {
			t.Errorf("%s: %d bytes, want %d", tc.v, got, tc.size)
		}
	}
}

func TestCodecErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"unknown type", []byte{200}},
		{"truncated double", []byte{byte(Double), 1, 2}},
		{"string longer than input", []byte{byte(String), 10, 'a'}},
		{"bad boolean", []byte{byte(Boolean), 2}},
		{"INT out of range", AppendValue(nil, BigIntValue(1<<40))[1:]},
		{"huge row width", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			if tc.name == "INT out of range" {
				in = append([]byte{byte(Int)}, in...)
			}
			d := NewDecoder(in)
			if tc.name == "huge row width" {
				d.Row()
			} else {
				d.Value()
			}
			if err := d.End(); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
	d := NewDecoder(AppendValue(nil, BigIntValue(1)))
	d.Value()
	d.Value() // past the end: sticky error, zero value
	if d.Err() == nil {
		t.Fatal("read past the end gave no error")
	}
	d = NewDecoder([]byte{0, 0})
	d.Value()
	if err := d.End(); err == nil {
		t.Fatal("trailing byte not reported")
	}
}

func FuzzDecoder(f *testing.F) {
	f.Add(AppendRow(nil, Row(codecValues())))
	f.Add(AppendValue(nil, StringValue("x")))
	f.Add([]byte{byte(Decimal), 2, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDecoder(b)
		r := d.Row()
		if d.Err() != nil {
			return
		}
		// What decodes must encode back to the bytes it came from: the
		// encoding is canonical.
		enc := AppendRow(nil, r)
		if string(enc) != string(b[:len(b)-d.Len()]) {
			t.Fatalf("re-encoding %x gave %x", b[:len(b)-d.Len()], enc)
		}
	})
}

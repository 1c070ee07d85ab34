package row

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Java's BigDecimal(String).toString() / toPlainString() for values past
// int64, at the precisions DECIMAL(38) allows.
func TestDecimal128Text(t *testing.T) {
	tests := []struct {
		text        string
		p, s        int
		java, plain string
	}{
		{"9999999998000000.0001", 21, 4, "9999999998000000.0001", "9999999998000000.0001"},
		{"-9999999998000000.0001", 21, 4, "-9999999998000000.0001", "-9999999998000000.0001"},
		{"99999999999999999999999999999999999999", 38, 0, "99999999999999999999999999999999999999", "99999999999999999999999999999999999999"},
		{"-99999999999999999999999999999999999999", 38, 0, "-99999999999999999999999999999999999999", "-99999999999999999999999999999999999999"},
		{"0.00000000000000000000000000000000000001", 38, 38, "1E-38", "0.00000000000000000000000000000000000001"},
		{"0", 38, 38, "0E-38", "0.00000000000000000000000000000000000000"},
		{"12345678.123456789012", 20, 12, "12345678.123456789012", "12345678.123456789012"},
		{"1E+20", 38, 2, "100000000000000000000.00", "100000000000000000000.00"},
		{"9223372036854775808", 19, 0, "9223372036854775808", "9223372036854775808"}, // 2^63
		{"-9223372036854775808", 19, 0, "-9223372036854775808", "-9223372036854775808"},
		{"10000000000000000000000000000000000000", 38, 0, "10000000000000000000000000000000000000", "10000000000000000000000000000000000000"},
		{"1.5", 38, 37, "1.5000000000000000000000000000000000000", "1.5000000000000000000000000000000000000"},
	}
	for _, tc := range tests {
		ty := Type{ID: Decimal, Precision: tc.p, Scale: tc.s}
		v, err := ParseText(tc.text, ty)
		if err != nil {
			t.Errorf("ParseText(%q, %s): %v", tc.text, ty, err)
			continue
		}
		if got := v.String(); got != tc.java {
			t.Errorf("toString(%q) = %q, want %q", tc.text, got, tc.java)
		}
		if got := string(AppendDecimal(nil, v, true)); got != tc.plain {
			t.Errorf("toPlainString(%q) = %q, want %q", tc.text, got, tc.plain)
		}
		// The value survives the checkpoint codec and the key encoding.
		d := NewDecoder(AppendValue(nil, v))
		if back := d.Value(); d.Err() != nil || !Equal(back, v) {
			t.Errorf("codec(%q) = %v, %v", tc.text, back, d.Err())
		}
		// Every form of the text reads back to the same value.
		for _, text := range []string{tc.java, tc.plain} {
			back, err := ParseText(text, ty)
			if err != nil || !Equal(back, v) {
				t.Errorf("ParseText(%q) = %v, %v; want %v", text, back, err, v)
			}
		}
	}
}

func TestDecimal128DoesNotFit(t *testing.T) {
	for _, tc := range []struct {
		text string
		p, s int
	}{
		{"100000000000000000000000000000000000000", 38, 0}, // 39 digits
		{"999999999999999999999.995", 23, 2},               // rounds to 22 integer digits
		{"1E+38", 38, 0},
		{"12345678901234567890", 19, 0},
	} {
		_, err := ParseText(tc.text, Type{ID: Decimal, Precision: tc.p, Scale: tc.s})
		if !errors.Is(err, ErrDoesNotFit) {
			t.Errorf("ParseText(%q, DECIMAL(%d, %d)) = %v, want ErrDoesNotFit", tc.text, tc.p, tc.s, err)
		}
	}
}

func TestDecimal128CompareAndKey(t *testing.T) {
	dec := func(text string, s int) Value {
		v, err := ParseText(text, Type{ID: Decimal, Precision: 38, Scale: s})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ordered := []Value{
		dec("-99999999999999999999999999999999999999", 0),
		dec("-9223372036854775809", 0),
		dec("-9223372036854775808", 0),
		dec("-1.5", 1),
		dec("0", 3),
		dec("1.25", 2),
		dec("1.2500000000000000000001", 22),
		dec("9999999998000000.0001", 4).wideAtScale(t, 20),
		dec("9223372036854775807", 0),
		dec("9223372036854775808", 0),
	}
	for i := range ordered {
		for j := range ordered {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := Compare(ordered[i], ordered[j]); got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
			sameKey := string(AppendKey(nil, ordered[i])) == string(AppendKey(nil, ordered[j]))
			if sameKey != (i == j) {
				t.Errorf("AppendKey(%v) == AppendKey(%v): %v", ordered[i], ordered[j], sameKey)
			}
		}
	}
	// Float64 is the nearest double, as BigDecimal.doubleValue.
	if got := dec("9999999998000000.0001", 4).Float64(); got != 9999999998000000.0001 {
		t.Errorf("Float64 = %v", got)
	}
}

// wideAtScale rescales v to scale s exactly (test helper).
func (v Value) wideAtScale(t *testing.T, s int) Value {
	b := v.Decimal128().Big(new(big.Int))
	b.Mul(b, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s-v.Scale())), nil))
	x, ok := Int128FromBig(b)
	if !ok {
		t.Fatalf("%v at scale %d does not fit", v, s)
	}
	return Decimal128Value(x, s)
}

// Old checkpoints wrote every DECIMAL as a scale byte and a varint; they
// still decode, and narrow values are still written that way.
func TestDecimalCodecCompatible(t *testing.T) {
	old := []byte{byte(Decimal), 2, 0xf4, 0x01} // 1.22: scale 2, zig-zag 244
	d := NewDecoder(old)
	if v := d.Value(); d.Err() != nil || !Equal(v, DecimalValue(122, 2)) {
		t.Fatalf("old encoding = %v, %v", v, d.Err())
	}
	if got := AppendValue(nil, DecimalValue(122, 2)); string(got) != string(old) {
		t.Errorf("narrow encoding changed: %x, want %x", got, old)
	}
}

func TestDecimal128NoAllocation(t *testing.T) {
	x, _ := ParseDecimal128("99999999980000000001", 21, 0)
	var buf [64]byte
	allocs := testing.AllocsPerRun(100, func() {
		v := Decimal128Value(x, 4)
		_ = AppendDecimal(buf[:0], v, false)
		_ = v.Decimal128()
	})
	if allocs != 0 {
		t.Errorf("Decimal128Value + AppendDecimal of 9999999998000000.0001 allocates %.0f times", allocs)
	}
}

// CompareDecimals agrees with exact rational comparison for random
// values of every width and scale.
func TestCompareDecimalsMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	value := func() (Value, *big.Rat) {
		digits := 1 + rng.IntN(38)
		text := make([]byte, 0, digits+1)
		if rng.IntN(2) == 0 {
			text = append(text, '-')
		}
		for i := 0; i < digits; i++ {
			text = append(text, byte('0'+rng.IntN(10)))
		}
		if rng.IntN(4) == 0 {
			text = append(text[:len(text)-digits+1], make([]byte, 0)...) // a short one now and then
		}
		u, err := ParseDecimal128(string(text), 38, 0)
		if err != nil {
			t.Fatal(err)
		}
		scale := rng.IntN(39)
		r := new(big.Rat).SetFrac(u.Big(new(big.Int)), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
		return Decimal128Value(u, scale), r
	}
	for i := 0; i < 20000; i++ {
		a, ra := value()
		b, rb := value()
		if got, want := CompareDecimals(a, b), ra.Cmp(rb); got != want {
			t.Fatalf("CompareDecimals(%v, %v) = %d, want %d", a, b, got, want)
		}
		if got, want := Compare(a, b), ra.Cmp(rb); got != want {
			t.Fatalf("Compare(%v, %v) = %d, want %d", a, b, got, want)
		}
	}
}

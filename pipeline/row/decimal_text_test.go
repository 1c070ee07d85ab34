package row

import (
	"testing"
)

// The expected texts are Java's: BigDecimal.valueOf(unscaled, scale)
// .toString() and .toPlainString(), as printed by a JDK for each case.
func TestAppendDecimal(t *testing.T) {
	tests := []struct {
		unscaled    int64
		scale       int
		java, plain string
	}{
		{0, 7, "0E-7", "0.0000000"},         // CAST(0 AS DECIMAL(10, 7))
		{0, 13, "0E-13", "0.0000000000000"}, // 0.00 / 3: DECIMAL(.., 13)
		{250000, 12, "2.50000E-7", "0.000000250000"},
		{27, 9, "2.7E-8", "0.000000027"},
		{-1, 7, "-1E-7", "-0.0000001"},
		{1, 6, "0.000001", "0.000001"}, // adjusted exponent -6: still plain
		{123456789, 6, "123.456789", "123.456789"},
		{150, 2, "1.50", "1.50"},
		{10000, 2, "100.00", "100.00"},
		{0, 2, "0.00", "0.00"},
		{0, 0, "0", "0"},
		{-5, 2, "-0.05", "-0.05"},
		{454621864049246170, 0, "454621864049246170", "454621864049246170"},
		{123456789012345678, 18, "0.123456789012345678", "0.123456789012345678"},
		{1, 18, "1E-18", "0.000000000000000001"},
		{-999999999999999999, 18, "-0.999999999999999999", "-0.999999999999999999"},
	}
	for _, tc := range tests {
		v := DecimalValue(tc.unscaled, tc.scale)
		if got := string(AppendDecimal(nil, v, false)); got != tc.java {
			t.Errorf("toString(%d, %d) = %q, want %q", tc.unscaled, tc.scale, got, tc.java)
		}
		if got := string(AppendDecimal(nil, v, true)); got != tc.plain {
			t.Errorf("toPlainString(%d, %d) = %q, want %q", tc.unscaled, tc.scale, got, tc.plain)
		}
		if got := v.String(); got != tc.java {
			t.Errorf("print of (%d, %d) = %q, want %q", tc.unscaled, tc.scale, got, tc.java)
		}
		if got := v.Text(Type{ID: Decimal}); got != tc.plain {
			t.Errorf("CAST AS STRING of (%d, %d) = %q, want %q", tc.unscaled, tc.scale, got, tc.plain)
		}
		// Both forms read back to the same value, as Java's BigDecimal(String).
		for _, text := range []string{tc.java, tc.plain} {
			back, err := ParseText(text, Type{ID: Decimal, Precision: 18, Scale: tc.scale})
			if err != nil || back.Unscaled() != tc.unscaled {
				t.Errorf("ParseText(%q) = %v, %v; want unscaled %d", text, back, err, tc.unscaled)
			}
		}
	}
}

// TestAppendDecimalStripped: BigDecimal.stripTrailingZeros().toString(),
// the text Flink's csv and json writers give (recorded on Flink 2.3 by
// conformance's type-decimal-*-csv/json cases).
func TestAppendDecimalStripped(t *testing.T) {
	for _, tc := range []struct {
		unscaled int64
		scale    int
		want     string
	}{
		{0, 7, "0"},
		{0, 0, "0"},
		{10, 0, "1E+1"},
		{10000, 2, "1E+2"},
		{1750, 2, "17.5"},
		{-123456789, 0, "-123456789"},
		{250000, 12, "2.5E-7"},
		{1, 6, "0.000001"},
		{1, 7, "1E-7"},
		{15000, 4, "1.5"},
		{-999999999999, 4, "-99999999.9999"},
		{1230, 0, "1.23E+3"},
	} {
		if got := string(AppendDecimalStripped(nil, DecimalValue(tc.unscaled, tc.scale))); got != tc.want {
			t.Errorf("stripped toString(%d, %d) = %q, want %q", tc.unscaled, tc.scale, got, tc.want)
		}
	}
	wide, err := ParseText("12345678901234567890123.4500", Type{ID: Decimal, Precision: 38, Scale: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(AppendDecimalStripped(nil, wide)); got != "12345678901234567890123.45" {
		t.Errorf("wide value stripped: %q", got)
	}
}

func TestParseDecimalExponent(t *testing.T) {
	dec := func(p, s int) Type { return Type{ID: Decimal, Precision: p, Scale: s} }
	tests := []struct {
		text     string
		t        Type
		unscaled int64
		bad      bool
	}{
		{"2.5E+3", dec(10, 1), 25000, false},
		{"2.5e3", dec(10, 0), 2500, false},
		{"-1.25E-2", dec(10, 3), -13, false}, // half up, away from zero
		{"0E-7", dec(10, 7), 0, false},
		{"1E+10", dec(5, 0), 0, true}, // does not fit
		{"1E", dec(5, 0), 0, true},
		{"E5", dec(5, 0), 0, true},
		{"1E999", dec(5, 0), 0, true},
		{"0E999", dec(5, 0), 0, false},
		{"1E-999", dec(5, 1), 0, false}, // rounds to 0.0, as BigDecimal.setScale
		{"1.5E", dec(5, 0), 0, true},
		{"1xE2", dec(5, 0), 0, true},
	}
	for _, tc := range tests {
		v, err := ParseText(tc.text, tc.t)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseText(%q, %s) = %v, want an error", tc.text, tc.t, v)
			}
			continue
		}
		if err != nil || v.Unscaled() != tc.unscaled {
			t.Errorf("ParseText(%q, %s) = %v, %v; want unscaled %d", tc.text, tc.t, v, err, tc.unscaled)
		}
	}
}

func TestAppendDecimalDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 64)
	v := DecimalValue(250000, 12)
	w := DecimalValue(-12345, 2)
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendDecimal(buf[:0], v, false)
		buf = AppendDecimal(buf, w, true)
	}); n != 0 {
		t.Errorf("AppendDecimal allocates %.0f times per run, want 0", n)
	}
}

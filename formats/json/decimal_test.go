package json

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// Flink's json format writes DECIMAL through Jackson: BigDecimal.toString
// by default, toPlainString with encode.decimal-as-plain-number.
func TestEncodeDecimal(t *testing.T) {
	schema := schemaOf(t, "a DECIMAL(10,7)", "b DECIMAL(18,12)", "c DECIMAL(10,2)")
	r := row.Row{row.DecimalValue(0, 7), row.DecimalValue(250000, 12), row.DecimalValue(-12345, 2)}
	tests := []struct {
		plain bool
		want  string
	}{
		{false, `{"a":0E-7,"b":2.50000E-7,"c":-123.45}` + "\n"},
		{true, `{"a":0.0000000,"b":0.000000250000,"c":-123.45}` + "\n"},
	}
	for _, tc := range tests {
		enc, err := NewEncoder(Options{EncodeDecimalAsPlainNumber: tc.plain}, schema)
		if err != nil {
			t.Fatal(err)
		}
		got, err := enc.Encode(nil, row.Insert, r)
		if err != nil || string(got) != tc.want {
			t.Errorf("plain=%v: Encode = %q, %v; want %q", tc.plain, got, err, tc.want)
		}
		// Whatever the form, it reads back to the same values.
		dec, _ := NewDecoder(Options{}, schema)
		b := row.NewBatch(1, 3)
		if err := dec.Decode(got, b); err != nil {
			t.Fatalf("plain=%v: Decode(%q): %v", tc.plain, got, err)
		}
		for i, v := range b.Changes[0].Row {
			if v.Unscaled() != r[i].Unscaled() || v.Scale() != r[i].Scale() {
				t.Errorf("plain=%v: column %d read back as %v, want %v", tc.plain, i, v, r[i])
			}
		}
	}
}

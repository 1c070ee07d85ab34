package json

import (
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// Flink's json format writes DECIMAL through Jackson: BigDecimal.toString
// by default, toPlainString with encode.decimal-as-plain-number.
func TestEncodeDecimal(t *testing.T) {
	schema := testenv.Schema(t, "a DECIMAL(10,7)", "b DECIMAL(18,12)", "c DECIMAL(10,2)")
	r := row.Row{row.DecimalValue(0, 7), row.DecimalValue(250000, 12), row.DecimalValue(-12345, 2)}
	tests := []struct {
		plain bool
		want  string
	}{
		{false, `{"a":0,"b":2.5E-7,"c":-123.45}` + "\n"},
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

// DECIMAL(38) in both of Flink's encodings, and back.
func TestDecimal38(t *testing.T) {
	schema := testenv.Schema(t, "a DECIMAL(38,0)", "b DECIMAL(38,30)", "c DECIMAL(21,4)")
	texts := []string{"99999999999999999999999999999999999999", "0.000000025000000000000000000000", "-9999999998000000.0001"}
	r := make(row.Row, len(texts))
	for i, s := range texts {
		v, err := row.ParseText(s, schema.Fields[i].Type)
		if err != nil {
			t.Fatal(err)
		}
		r[i] = v
	}
	for _, tc := range []struct {
		plain bool
		want  string
	}{
		{false, `{"a":99999999999999999999999999999999999999,"b":2.5E-8,"c":-9999999998000000.0001}` + "\n"},
		{true, `{"a":99999999999999999999999999999999999999,"b":0.000000025000000000000000000000,"c":-9999999998000000.0001}` + "\n"},
	} {
		enc, err := NewEncoder(Options{EncodeDecimalAsPlainNumber: tc.plain}, schema)
		if err != nil {
			t.Fatal(err)
		}
		got, err := enc.Encode(nil, row.Insert, r)
		if err != nil || string(got) != tc.want {
			t.Errorf("plain=%v: Encode = %q, %v; want %q", tc.plain, got, err, tc.want)
		}
		dec, _ := NewDecoder(Options{}, schema)
		b := row.NewBatch(1, len(texts))
		if err := dec.Decode(got, b); err != nil {
			t.Fatalf("plain=%v: Decode(%q): %v", tc.plain, got, err)
		}
		for i, v := range b.Changes[0].Row {
			if !row.Equal(v, r[i]) {
				t.Errorf("plain=%v: column %d read back as %v, want %v", tc.plain, i, v, r[i])
			}
		}
	}
	// A JSON number with an exponent reads into a wide DECIMAL too.
	dec, _ := NewDecoder(Options{}, schema)
	b := row.NewBatch(1, len(texts))
	if err := dec.Decode([]byte(`{"a":1.5e37,"b":2.5E-8,"c":1e16}`), b); err != nil {
		t.Fatal(err)
	}
	if got := b.Changes[0].Row[0].String(); got != "15000000000000000000000000000000000000" {
		t.Errorf("1.5e37 read as %s", got)
	}
}

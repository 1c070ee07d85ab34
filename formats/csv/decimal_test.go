package csv

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// Flink's csv format writes DECIMAL through Jackson's CsvGenerator, which
// writes BigDecimal.toString: exponent form below 1E-6.
func TestEncodeDecimal(t *testing.T) {
	schema := schemaOf(t, "a DECIMAL(10,7)", "b DECIMAL(18,12)", "c DECIMAL(10,2)")
	r := row.Row{row.DecimalValue(0, 7), row.DecimalValue(250000, 12), row.DecimalValue(-12345, 2)}
	enc, err := NewEncoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := enc.Encode(nil, row.Insert, r)
	if want := "0E-7,2.50000E-7,-123.45\n"; err != nil || string(got) != want {
		t.Fatalf("Encode = %q, %v; want %q", got, err, want)
	}
	dec, _ := NewDecoder(Options{}, schema)
	b := row.NewBatch(1, 3)
	if err := dec.Decode(got[:len(got)-1], b); err != nil {
		t.Fatalf("Decode(%q): %v", got, err)
	}
	for i, v := range b.Changes[0].Row {
		if v.Unscaled() != r[i].Unscaled() || v.Scale() != r[i].Scale() {
			t.Errorf("column %d read back as %v, want %v", i, v, r[i])
		}
	}
}

package csv

import (
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// Flink's csv format writes DECIMAL through Jackson's CsvGenerator, which
// writes the BigDecimal with its trailing zeros stripped, by toString (Flink 2.3).
func TestEncodeDecimal(t *testing.T) {
	schema := testenv.Schema(t, "a DECIMAL(10,7)", "b DECIMAL(18,12)", "c DECIMAL(10,2)")
	r := row.Row{row.DecimalValue(0, 7), row.DecimalValue(250000, 12), row.DecimalValue(-12345, 2)}
	enc, err := NewEncoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := enc.Encode(nil, row.Insert, r)
	if want := "0,2.5E-7,-123.45\n"; err != nil || string(got) != want {
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

// DECIMAL(38): values past int64 write and read back as Flink's csv
// format gives them (BigDecimal.toString).
func TestDecimal38(t *testing.T) {
	schema := testenv.Schema(t, "a DECIMAL(38,0)", "b DECIMAL(20,12)", "c DECIMAL(38,38)", "d DECIMAL(21,4)")
	texts := []string{"-99999999999999999999999999999999999999", "12345678.123456789012", "0.00000000000000000000000000000000000001", "9999999998000000.0001"}
	r := make(row.Row, len(texts))
	for i, s := range texts {
		v, err := row.ParseText(s, schema.Fields[i].Type)
		if err != nil {
			t.Fatal(err)
		}
		r[i] = v
	}
	enc, err := NewEncoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := enc.Encode(nil, row.Insert, r)
	if want := "-99999999999999999999999999999999999999,12345678.123456789012,1E-38,9999999998000000.0001\n"; err != nil || string(got) != want {
		t.Fatalf("Encode = %q, %v; want %q", got, err, want)
	}
	dec, _ := NewDecoder(Options{}, schema)
	b := row.NewBatch(1, len(texts))
	if err := dec.Decode(got[:len(got)-1], b); err != nil {
		t.Fatalf("Decode(%q): %v", got, err)
	}
	for i, v := range b.Changes[0].Row {
		if !row.Equal(v, r[i]) {
			t.Errorf("column %d read back as %v, want %v", i, v, r[i])
		}
	}
}

package parquet

import (
	"bytes"
	"strings"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// TestWriteDecimals writes DECIMALs of the column's scale and of others:
// a value of another scale is rescaled, and one that loses digits or
// does not fit the precision is an error naming its row and column, as
// is a NULL in a NOT NULL column, in both the INT32 and INT64 forms: from
// the Write of the row, and from every call after.
func TestWriteDecimals(t *testing.T) {
	schema := testenv.Schema(t, "n DECIMAL(6,2)", "w DECIMAL(15,3) NOT NULL")
	enc, err := NewEncoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewDecoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	rows := []row.Row{
		{row.DecimalValue(123456, 2), row.DecimalValue(-999999999999999, 3)},
		{row.DecimalValue(-7, 0), row.DecimalValue(25, 1)},
		{row.NullValue, row.Decimal128Value(row.Int128Of(42), 3)},
		{row.DecimalValue(-999999, 2), row.DecimalValue(1, 0)},
	}
	want := []string{"1234.56 -999999999999.999", "-7.00 2.500", "null 0.042", "-9999.99 1.000"}
	got := formattest.ReadFile(t, dec, formattest.WriteFile(t, enc, rows, 0))
	if len(got) != len(want) {
		t.Fatalf("read %d rows, want %d", len(got), len(want))
	}
	for i, r := range got {
		if s := r[0].String() + " " + r[1].String(); s != want[i] {
			t.Errorf("row %d: %s, want %s", i+1, s, want[i])
		}
	}

	for _, c := range []struct {
		bad  row.Row
		want string
	}{
		{row.Row{row.DecimalValue(1000000, 2), row.DecimalValue(0, 3)}, "row 3, column n: 10000.00 does not fit DECIMAL(6, 2)"},
		{row.Row{row.DecimalValue(1, 3), row.DecimalValue(0, 3)}, "row 3, column n: a DECIMAL of scale 3 loses digits at scale 2"},
		{row.Row{row.DecimalValue(1, 0), row.DecimalValue(1000000000000000, 3)}, "row 3, column w: 1000000000000.000 does not fit DECIMAL(15, 3)"},
		{row.Row{row.DecimalValue(1, 0), row.NullValue}, "row 3, column w: NULL where the type is NOT NULL"},
	} {
		w, err := enc.Create(new(bytes.Buffer))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows[:2] {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		// The bad row is refused as it comes, and the writer stays
		// failed.
		err = w.Write(c.bad)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("writing %v: %v, want an error with %q", c.bad, err, c.want)
		}
		if err := w.Write(rows[0]); err == nil {
			t.Errorf("writing after %v: no error", c.bad)
		}
		err = w.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("writing %v: %v, want an error with %q", c.bad, err, c.want)
		}
	}
}

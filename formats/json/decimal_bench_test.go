package json

import (
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// BenchmarkEncodeDecimal writes rows of two DECIMAL columns, one in plain
// range (123.45) and one small enough for the exponent form (2.5E-7).
func BenchmarkEncodeDecimal(b *testing.B) {
	schema := testenv.Schema(b, "price DECIMAL(10,2)", "tiny DECIMAL(18,12)")
	enc, err := NewEncoder(Options{}, schema)
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]row.Row, 1000)
	for i := range rows {
		rows[i] = row.Row{row.DecimalValue(int64(12345+i), 2), row.DecimalValue(int64(250000+i), 12)}
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		for _, r := range rows {
			if buf, err = enc.Encode(buf, row.Insert, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(rows))/b.Elapsed().Seconds(), "rows/s")
}

package parquet

import (
	"fmt"
	"io"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// benchShapes are the schemas BenchmarkEncode writes: bench/parquet's
// (readings), and shapes it does not have: DECIMALs, microsecond
// TIMESTAMPs, INTs and DATEs with NULLs, NOT NULL columns, long strings.
var benchShapes = []struct {
	name    string
	columns []string
}{
	{"readings", []string{"id BIGINT", "sensor STRING", "temp DOUBLE", "ts TIMESTAMP(3)"}},
	{"orders", []string{"id BIGINT NOT NULL", "price DECIMAL(10,2)", "qty INT", "day DATE", "at TIMESTAMP_LTZ(6)", "note STRING", "amount DECIMAL(18,4) NOT NULL"}},
	{"wide_strings", []string{"k STRING NOT NULL", "v STRING", "b BYTES"}},
}

// benchRows draws n rows of schema: about one value in eight NULL in a
// nullable column, strings of a few hundred distinct values and some
// unique ones.
func benchRows(schema row.Schema, n int) []row.Row {
	rng := rand.New(rand.NewPCG(7, 11))
	rows := make([]row.Row, n)
	for k := range rows {
		r := make(row.Row, schema.Len())
		for i, f := range schema.Fields {
			if !f.Type.NotNull && rng.IntN(8) == 0 {
				r[i] = row.NullValue
				continue
			}
			switch f.Type.ID {
			case row.BigInt:
				r[i] = row.BigIntValue(int64(k))
			case row.Int:
				r[i] = row.IntValue(rng.Int32N(1000))
			case row.Date:
				r[i] = row.DateValue(20000 + rng.Int32N(400))
			case row.Double:
				r[i] = row.DoubleValue(float64(rng.IntN(4000))/100 - 5)
			case row.Decimal:
				r[i] = row.DecimalValue(rng.Int64N(10_000_000), f.Type.Scale)
			case row.Timestamp:
				r[i] = row.TimestampValue(1_767_225_600_000_000 + int64(k)*37_000)
			case row.TimestampLTZ:
				r[i] = row.TimestampLTZValue(1_767_225_600_000_000 + int64(k)*37_123)
			case row.String:
				if rng.IntN(4) == 0 {
					r[i] = row.StringValue(fmt.Sprintf("unique value %d with some text after it", k))
				} else {
					r[i] = row.StringValue(fmt.Sprintf("sensor_%d", rng.IntN(500)))
				}
			case row.Bytes:
				r[i] = row.BytesValue([]byte(fmt.Sprintf("payload-%d", rng.IntN(100000))))
			}
		}
		rows[k] = r
	}
	return rows
}

// BenchmarkEncode writes 200k rows per iteration, in row groups of the
// default size and of a small one.
func BenchmarkEncode(b *testing.B) {
	for _, shape := range benchShapes {
		schema := testenv.Schema(b, shape.columns...)
		rows := benchRows(schema, 200_000)
		for _, groupRows := range []int{122880, 10000} {
			b.Run(fmt.Sprintf("%s/group=%d", shape.name, groupRows), func(b *testing.B) {
				enc, err := NewEncoder(Options{RowGroupSize: groupRows}, schema)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				cpu0 := cpuTime(b)
				for b.Loop() {
					w, err := enc.Create(io.Discard)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range rows {
						if err := w.Write(r); err != nil {
							b.Fatal(err)
						}
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				// The CPU time of the process, GC and the encoding
				// goroutine included: the machine is shared, so the
				// wall time says little.
				b.ReportMetric(float64(cpuTime(b)-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// cpuTime is the process's user and system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

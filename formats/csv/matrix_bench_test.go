package csv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// The inputs of bench/'s matrix, smaller: keys.csv (id, ik, sk, ta, tb,
// z, amount; 100k keys) and wide.csv (20 BIGINT, 10 STRING columns).
const matrixBenchRows = 20000

func keysBenchCSV() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b []byte
	for i := range matrixBenchRows {
		k := r.Int64N(100_000)
		b = fmt.Appendf(b, "%d,%d,sensor_%d,g%d,%d,%d,%d\n", i, k, k, k/10, k%10, r.Int64N(100_000), r.Int64N(10_000))
	}
	return b
}

func wideBenchCSV() ([]byte, []string) {
	r := rand.New(rand.NewPCG(3, 4))
	var b []byte
	for i := range matrixBenchRows {
		b = strconv.AppendInt(b, int64(i), 10)
		for c := 1; c < 30; c++ {
			b = append(b, ',')
			if c < 20 {
				b = strconv.AppendInt(b, r.Int64N(1<<uint(4*c%40+4)), 10)
			} else {
				b = append(b, 'w')
				b = strconv.AppendInt(b, int64(c), 10)
				b = append(b, '_')
				b = strconv.AppendInt(b, r.Int64N(100_000), 36)
			}
		}
		b = append(b, '\n')
	}
	cols := make([]string, 30)
	for c := range cols {
		t := "STRING"
		if c < 20 {
			t = "BIGINT"
		}
		cols[c] = fmt.Sprintf("c%d %s", c, t)
	}
	return b, cols
}

// eventsBenchCSV is bench/'s events.csv (id, k1, k2, cust, amount, name,
// ts), one row a millisecond.
func eventsBenchCSV() []byte {
	r := rand.New(rand.NewPCG(5, 6))
	var b []byte
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range matrixBenchRows {
		b = fmt.Appendf(b, "%d,%d,%d,%d,%d,n%s,", i, r.Int64N(100_000), r.Int64N(1_000_000), r.Int64N(1_100_000), r.Int64N(10_000), strconv.FormatInt(r.Int64N(1000), 36))
		b = epoch.Add(time.Duration(i)*time.Millisecond).AppendFormat(b, "2006-01-02 15:04:05.000")
		b = append(b, '\n')
	}
	return b
}

// decodeLines decodes data line by line as the file source's parallel
// workers do (DecodeLine over the block where the decoder has it, else
// DecodeString of each line; batches of 1024 reused).
func decodeLines(b *testing.B, dec *Decoder, data []byte, batch *row.Batch) int {
	s := unsafe.String(unsafe.SliceData(data), len(data))
	ld, _ := any(dec).(interface {
		DecodeLine(string, *row.Batch) (int, error)
	})
	n := 0
	for off := 0; off < len(s); {
		if ld != nil {
			k, err := ld.DecodeLine(s[off:], batch)
			if err != nil {
				b.Fatal(err)
			}
			off += k
		} else {
			nl := bytes.IndexByte(data[off:], '\n')
			rec := s[off : off+nl]
			off += nl + 1
			if err := dec.DecodeString(rec, batch); err != nil {
				b.Fatal(err)
			}
		}
		if batch.Len() == 1024 {
			batch.Reuse()
		}
		n++
	}
	return n
}

// BenchmarkDecodeMatrix decodes the matrix's inputs with the columns its
// shapes read.
func BenchmarkDecodeMatrix(b *testing.B) {
	keys := keysBenchCSV()
	keysSchema := []string{"id BIGINT", "ik BIGINT", "sk STRING", "ta STRING", "tb BIGINT", "z BIGINT", "amount BIGINT"}
	wide, wideSchema := wideBenchCSV()
	events := eventsBenchCSV()
	eventsSchema := []string{"id BIGINT", "k1 BIGINT", "k2 BIGINT", "cust BIGINT", "amount BIGINT", "name STRING", "ts TIMESTAMP(3)"}
	for _, c := range []struct {
		name   string
		data   []byte
		schema []string
		cols   []int
		// needed, if set, is the projection (SetColumns): the rows
		// are the whole schema's, the others NULL (a source with a
		// watermark reads its rows so).
		needed []bool
	}{
		{"int", keys, keysSchema, []int{1, 6}, nil},
		{"str", keys, keysSchema, []int{2, 6}, nil},
		{"two", keys, keysSchema, []int{3, 4, 6}, nil},
		{"keys-all", keys, keysSchema, nil, nil},
		{"wide30", wide, wideSchema, nil, nil},
		{"events-hop", events, eventsSchema, nil, []bool{false, false, false, false, true, false, true}},
		{"events-hop-picked", events, eventsSchema, []int{4, 6}, nil},
		{"events-all", events, eventsSchema, nil, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			sch := testenv.Schema(b, c.schema...)
			dec, err := NewDecoder(Options{}, sch)
			if err != nil {
				b.Fatal(err)
			}
			width := sch.Len()
			if c.needed != nil {
				dec.SetColumns(c.needed)
			}
			if c.cols != nil {
				if !dec.DecodeColumns(c.cols) {
					b.Fatal("DecodeColumns refused")
				}
				width = len(c.cols)
			}
			batch := row.NewBatch(1024, width)
			b.SetBytes(int64(len(c.data)))
			n, cpu := 0, processCPU()
			for b.Loop() {
				n += decodeLines(b, dec, c.data, batch)
			}
			// CPU time, not the wall time of ns/op, which a loaded
			// machine stretches.
			b.ReportMetric(float64(processCPU()-cpu)/float64(n), "cpu-ns/row")
		})
	}
}

// processCPU is the process's user and system CPU time so far, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

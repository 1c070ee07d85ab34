package json

import (
	"bytes"
	stdjson "encoding/json"
	"runtime"
	"strconv"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

const benchRows = 10000

// sensorLines is the sensor workload of the CSV benchmarks (id, ts,
// temperature) as JSON lines.
func sensorLines() [][]byte {
	lines := make([][]byte, benchRows)
	for i := range lines {
		var b []byte
		b = append(b, `{"id":"sensor_`...)
		b = strconv.AppendInt(b, int64(i%100), 10)
		b = append(b, `","ts":`...)
		b = strconv.AppendInt(b, 1700000000000+int64(i)*100, 10)
		b = append(b, `,"temperature":`...)
		b = strconv.AppendFloat(b, 20+float64(i%1000)/37, 'f', -1, 64)
		lines[i] = append(b, '}')
	}
	return lines
}

func BenchmarkDecode(b *testing.B) {
	schema := testenv.Schema(b, "id STRING", "ts BIGINT", "temperature DOUBLE")
	lines := sensorLines()
	dec, _ := NewDecoder(Options{}, schema)
	b.ReportAllocs()
	n := 0
	m := startMallocs()
	for b.Loop() {
		batch := row.NewBatch(1024, 3)
		for _, l := range lines {
			if batch.Len() == 1024 {
				batch = row.NewBatch(1024, 3)
			}
			if err := dec.Decode(l, batch); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
	m.report(b, n)
}

// BenchmarkDecodeBaseline is encoding/json into a typed struct, the
// fastest standard-library path, for the ratio.
func BenchmarkDecodeBaseline(b *testing.B) {
	lines := sensorLines()
	type sensor struct {
		ID          string  `json:"id"`
		TS          int64   `json:"ts"`
		Temperature float64 `json:"temperature"`
	}
	b.ReportAllocs()
	n := 0
	m := startMallocs()
	for b.Loop() {
		for _, l := range lines {
			var s sensor
			if err := stdjson.Unmarshal(l, &s); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
	m.report(b, n)
}

func BenchmarkEncode(b *testing.B) {
	schema := testenv.Schema(b, "id STRING", "ts BIGINT", "temperature DOUBLE")
	dec, _ := NewDecoder(Options{}, schema)
	batch := row.NewBatch(benchRows, 3)
	for _, l := range sensorLines() {
		if err := dec.Decode(l, batch); err != nil {
			b.Fatal(err)
		}
	}
	enc, _ := NewEncoder(Options{}, schema)
	var buf []byte
	b.ReportAllocs()
	n := 0
	m := startMallocs()
	for b.Loop() {
		buf = buf[:0]
		for _, c := range batch.Changes {
			var err error
			if buf, err = enc.Encode(buf, c.Kind, c.Row); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
	m.report(b, n)
	if !bytes.HasPrefix(buf, []byte(`{"id":"sensor_0","ts":1700000000000,"temperature":20.0}`)) {
		b.Fatalf("unexpected output %.80s", buf)
	}
}

func BenchmarkEncodeBaseline(b *testing.B) {
	type sensor struct {
		ID          string  `json:"id"`
		TS          int64   `json:"ts"`
		Temperature float64 `json:"temperature"`
	}
	rows := make([]sensor, benchRows)
	for i := range rows {
		rows[i] = sensor{"sensor_" + strconv.Itoa(i%100), 1700000000000 + int64(i)*100, 20 + float64(i%1000)/37}
	}
	var buf bytes.Buffer
	enc := stdjson.NewEncoder(&buf)
	b.ReportAllocs()
	n := 0
	m := startMallocs()
	for b.Loop() {
		buf.Reset()
		for i := range rows {
			if err := enc.Encode(&rows[i]); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
	m.report(b, n)
}

type mallocs uint64

func startMallocs() mallocs {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return mallocs(ms.Mallocs)
}

// report adds allocs/row: the benchmark's allocations over the rows it
// handled, setup excluded.
func (m mallocs) report(b *testing.B, rows int) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Mallocs-uint64(m))/float64(rows), "allocs/row")
}

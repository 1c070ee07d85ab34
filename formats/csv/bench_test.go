package csv

import (
	"bufio"
	"bytes"
	stdcsv "encoding/csv"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

const benchRows = 10000

// sensorCSV is the sensor workload: id STRING, ts BIGINT, temperature DOUBLE.
func sensorCSV() []byte {
	var b []byte
	for i := range benchRows {
		b = append(b, "sensor_"...)
		b = strconv.AppendInt(b, int64(i%100), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, 1700000000000+int64(i)*100, 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, 20+float64(i%1000)/37, 'f', -1, 64)
		b = append(b, '\n')
	}
	return b
}

// quotedCSV is sensorCSV with every id quoted and one in ten holding a
// line break: the splitter's quote-tracking path.
func quotedCSV() []byte {
	var b []byte
	for i := range benchRows {
		b = append(b, "\"sensor_"...)
		if i%10 == 0 {
			b = append(b, "\n"...)
		}
		b = strconv.AppendInt(b, int64(i%100), 10)
		b = append(b, "\","...)
		b = strconv.AppendInt(b, 1700000000000+int64(i)*100, 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, 20+float64(i%1000)/37, 'f', -1, 64)
		b = append(b, '\n')
	}
	return b
}

func sensorSchema(b *testing.B) row.Schema {
	return testenv.Schema(b, "id STRING", "ts BIGINT", "temperature DOUBLE")
}

type mallocs uint64

func startMallocs() mallocs {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return mallocs(ms.Mallocs)
}

// report adds rows/s and allocs/row (setup excluded).
func (m mallocs) report(b *testing.B, rows int) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(ms.Mallocs-uint64(m))/float64(rows), "allocs/row")
}

// etldDecode splits and decodes data into batches of 1024, as the file
// source does, and hands each batch to sink.
func etldDecode(b *testing.B, dec *Decoder, data []byte, sink func(*row.Batch)) int {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Split(dec.Split)
	batch := row.NewBatch(1024, 3)
	n := 0
	for sc.Scan() {
		if err := dec.Decode(sc.Bytes(), batch); err != nil {
			b.Fatal(err)
		}
		if batch.Len() == 1024 {
			sink(batch)
			batch = row.NewBatch(1024, 3)
		}
		n++
	}
	sink(batch)
	return n
}

// baselineDecode is the plain Go loop: encoding/csv and strconv.
func baselineDecode(b *testing.B, data []byte, each func(id string, ts int64, temp float64)) int {
	r := stdcsv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = true
	n := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		ts, err := strconv.ParseInt(rec[1], 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		temp, err := strconv.ParseFloat(rec[2], 64)
		if err != nil {
			b.Fatal(err)
		}
		each(rec[0], ts, temp)
		n++
	}
}

func BenchmarkDecode(b *testing.B) {
	data := sensorCSV()
	b.Run("etld", func(b *testing.B) {
		dec, _ := NewDecoder(Options{}, sensorSchema(b))
		b.ReportAllocs()
		n, m := 0, startMallocs()
		for b.Loop() {
			n += etldDecode(b, dec, data, func(*row.Batch) {})
		}
		m.report(b, n)
	})
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		n, m := 0, startMallocs()
		for b.Loop() {
			n += baselineDecode(b, data, func(string, int64, float64) {})
		}
		m.report(b, n)
	})
	quoted := quotedCSV()
	b.Run("etld-quoted", func(b *testing.B) {
		dec, _ := NewDecoder(Options{}, sensorSchema(b))
		b.ReportAllocs()
		n, m := 0, startMallocs()
		for b.Loop() {
			n += etldDecode(b, dec, quoted, func(*row.Batch) {})
		}
		m.report(b, n)
	})
}

func BenchmarkEncode(b *testing.B) {
	data := sensorCSV()
	schema := sensorSchema(b)
	dec, _ := NewDecoder(Options{}, schema)
	all := row.NewBatch(benchRows, 3)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if err := dec.Decode(sc.Bytes(), all); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("etld", func(b *testing.B) {
		enc, _ := NewEncoder(Options{}, schema)
		var buf []byte
		b.ReportAllocs()
		n, m := 0, startMallocs()
		for b.Loop() {
			buf = buf[:0]
			for _, c := range all.Changes {
				var err error
				if buf, err = enc.Encode(buf, c.Kind, c.Row); err != nil {
					b.Fatal(err)
				}
			}
			n += all.Len()
		}
		m.report(b, n)
		if !bytes.HasPrefix(buf, []byte("sensor_0,1700000000000,20.0\nsensor_1,1700000000100,20.027027027027028\n")) {
			b.Fatalf("unexpected output %.60q", buf)
		}
	})
	b.Run("baseline", func(b *testing.B) {
		var out bytes.Buffer
		w := stdcsv.NewWriter(&out)
		rec := make([]string, 3)
		b.ReportAllocs()
		n, m := 0, startMallocs()
		for b.Loop() {
			out.Reset()
			for _, c := range all.Changes {
				rec[0] = c.Row[0].Str()
				rec[1] = strconv.FormatInt(c.Row[1].Int64(), 10)
				rec[2] = strconv.FormatFloat(c.Row[2].Float64(), 'f', -1, 64)
				if err := w.Write(rec); err != nil {
					b.Fatal(err)
				}
			}
			w.Flush()
			n += all.Len()
		}
		m.report(b, n)
	})
}

// BenchmarkPassThrough is the file-to-file CSV copy without the runtime:
// read, parse, write. Both loops run in every iteration and the ratio
// etld/baseline is reported, so that machine noise hits both alike.
func BenchmarkPassThrough(b *testing.B) {
	data := sensorCSV()
	schema := sensorSchema(b)
	dec, _ := NewDecoder(Options{}, schema)
	enc, _ := NewEncoder(Options{}, schema)
	var out []byte
	var ours, base time.Duration
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		out = out[:0]
		n += etldDecode(b, dec, data, func(batch *row.Batch) {
			for _, c := range batch.Changes {
				out, _ = enc.Encode(out, c.Kind, c.Row)
			}
		})
		ours += time.Since(start)

		start = time.Now()
		var buf bytes.Buffer
		w := stdcsv.NewWriter(&buf)
		rec := make([]string, 3)
		baselineDecode(b, data, func(id string, ts int64, temp float64) {
			rec[0], rec[1], rec[2] = id, strconv.FormatInt(ts, 10), strconv.FormatFloat(temp, 'f', -1, 64)
			if err := w.Write(rec); err != nil {
				b.Fatal(err)
			}
		})
		w.Flush()
		base += time.Since(start)
	}
	b.ReportMetric(float64(n)/ours.Seconds(), "rows/s")
	b.ReportMetric(float64(n)/base.Seconds(), "baseline-rows/s")
	b.ReportMetric(base.Seconds()/ours.Seconds(), "ratio")
}

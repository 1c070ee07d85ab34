package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	filesink "github.com/etld/etld/sinks/file"
)

// benchRows is the size of the benchmark: 1M sensor readings.
const benchRows = 1_000_000

var benchSchema = row.NewSchema(
	row.Field{Name: "id", Type: row.Of(row.String)},
	row.Field{Name: "ts", Type: row.Of(row.BigInt)},
	row.Field{Name: "temperature", Type: row.Of(row.Double)},
)

// writeSensorFile writes n rows of "sensor-0042,1700000000123,21.37".
func writeSensorFile(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "sensor.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	for i := range n {
		line = append(line[:0], "sensor-"...)
		line = strconv.AppendInt(line, int64(i%1000), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, 1_700_000_000_000+int64(i)*100, 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, float64(i%5000)/100-10, 'f', -1, 64)
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// etldCopy runs the file source into the file sink, as a pipeline
// `SELECT * FROM sensor` from CSV to CSV does minus the channels, and
// returns the number of rows.
func etldCopy(in, out string) (int, error) {
	ctx := context.Background()
	r := connector.NewRegistry()
	formats.Register(r)
	src, err := New(Config{Path: in}, connector.SourceEnv{Name: "sensor", Schema: benchSchema, Formats: r})
	if err != nil {
		return 0, err
	}
	sink, err := filesink.New(filesink.Config{Path: out}, connector.SinkEnv{Name: "archive", Formats: r})
	if err != nil {
		return 0, err
	}
	if err := sink.Bind(connector.SinkInput{Schema: benchSchema, Mode: connector.Append}); err != nil {
		return 0, err
	}
	if err := src.Open(ctx); err != nil {
		return 0, err
	}
	defer src.Close(ctx)
	if err := sink.Open(ctx); err != nil {
		return 0, err
	}
	defer sink.Close(ctx)
	n := 0
	for {
		b, err := src.Read(ctx, 1024)
		if b != nil {
			n += b.Len()
			if werr := sink.Write(ctx, b); werr != nil {
				return n, werr
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
	}
	if err := sink.Flush(ctx); err != nil {
		return n, err
	}
	return n, sink.Close(ctx)
}

// plainCopy is the baseline: what a Go programmer writes by hand for this
// one file shape. It parses every field into its Go type and writes it back,
// as etld does, but knows the layout and allocates nothing per row.
func plainCopy(in, out string) (int, error) {
	fin, err := os.Open(in)
	if err != nil {
		return 0, err
	}
	defer fin.Close()
	fout, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	defer fout.Close()
	sc := bufio.NewScanner(fin)
	sc.Buffer(make([]byte, 256<<10), 1<<20)
	w := bufio.NewWriterSize(fout, 256<<10)
	var buf []byte
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		i := bytes.IndexByte(line, ',')
		j := bytes.IndexByte(line[i+1:], ',') + i + 1
		if i < 0 || j <= i {
			return n, fmt.Errorf("line %d: want 3 fields", n+1)
		}
		ts, err := strconv.ParseInt(string(line[i+1:j]), 10, 64)
		if err != nil {
			return n, err
		}
		temp, err := strconv.ParseFloat(string(line[j+1:]), 64)
		if err != nil {
			return n, err
		}
		buf = append(buf[:0], line[:i]...)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, ts, 10)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, temp, 'g', -1, 64)
		buf = append(buf, '\n')
		w.Write(buf)
		n++
	}
	if err := sc.Err(); err != nil {
		return n, err
	}
	if err := w.Flush(); err != nil {
		return n, err
	}
	return n, fout.Sync()
}

func BenchmarkCSVToCSV(b *testing.B) {
	in := writeSensorFile(b, benchRows)
	out := filepath.Join(b.TempDir(), "out.csv")
	run := func(copyFile func(in, out string) (int, error)) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			rows := 0
			for b.Loop() {
				n, err := copyFile(in, out)
				if err != nil {
					b.Fatal(err)
				}
				rows += n
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(rows)/float64(b.N)/float64(benchRows), "passes/op")
		}
	}
	b.Run("etld", run(etldCopy))
	b.Run("plain-go", run(plainCopy))
	// ratio runs both in turn on every iteration and compares the best
	// pass of each: on a shared machine a pass is only ever slowed down by
	// others, so the fastest is the truest. It reports etld's throughput
	// over the baseline's (the goal is 0.5 or more) and etld's
	// allocations per row.
	b.Run("ratio", func(b *testing.B) {
		etld, plain := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
		var mallocs uint64
		var ms runtime.MemStats
		for b.Loop() {
			runtime.ReadMemStats(&ms)
			before := ms.Mallocs
			start := time.Now()
			if _, err := etldCopy(in, out); err != nil {
				b.Fatal(err)
			}
			etld = min(etld, time.Since(start))
			runtime.ReadMemStats(&ms)
			mallocs += ms.Mallocs - before
			start = time.Now()
			if _, err := plainCopy(in, out); err != nil {
				b.Fatal(err)
			}
			plain = min(plain, time.Since(start))
		}
		b.ReportMetric(plain.Seconds()/etld.Seconds(), "etld/plain")
		b.ReportMetric(benchRows/etld.Seconds(), "etld-rows/s")
		b.ReportMetric(benchRows/plain.Seconds(), "plain-rows/s")
		b.ReportMetric(float64(mallocs)/float64(benchRows*b.N), "etld-allocs/row")
	})
}

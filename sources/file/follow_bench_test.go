package file

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
)

// followBenchRows is the rows per pass; ETLD_BENCH_ROWS scales it up.
var followBenchRows = func() int {
	if n, err := strconv.Atoi(os.Getenv("ETLD_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 200_000
}()

// readPass reads rows rows of path, bounded or followed, and returns how
// long it took.
func readPass(b *testing.B, path string, rows int, follow bool) time.Duration {
	b.Helper()
	ctx := context.Background()
	r := connector.NewRegistry()
	formats.Register(r)
	s, err := New(Config{Path: path, Follow: follow}, connector.SourceEnv{Name: "sensor", Schema: benchSchema, Formats: r})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := s.Open(ctx); err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	n := 0
	for n < rows {
		bt, err := s.Read(ctx, 1024)
		if bt != nil {
			n += bt.Len()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if n != rows {
		b.Fatalf("read %d rows, want %d", n, rows)
	}
	return time.Since(start)
}

// BenchmarkFollow compares reading a file with follow: true (records held
// until complete, a look at the file at every end of data) against the
// bounded source over the same file, in the same iterations, best pass of
// each.
func BenchmarkFollow(b *testing.B) {
	path := writeSensorFile(b, followBenchRows)
	bounded, followed := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for b.Loop() {
		bounded = min(bounded, readPass(b, path, followBenchRows, false))
		followed = min(followed, readPass(b, path, followBenchRows, true))
	}
	b.ReportMetric(float64(followBenchRows)/followed.Seconds(), "follow-rows/s")
	b.ReportMetric(float64(followBenchRows)/bounded.Seconds(), "bounded-rows/s")
	b.ReportMetric(bounded.Seconds()/followed.Seconds(), "follow/bounded")
}

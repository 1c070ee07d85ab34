package file

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// benchRows is the rows per pass; ETLD_BENCH_ROWS scales it up.
var benchRows = func() int {
	if n, err := strconv.Atoi(os.Getenv("ETLD_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 200_000
}()

// writePass writes benchRows rows through a new sink in batches of 1000
// and returns how long it took. Every `every` rows (0: never) it takes a
// checkpoint as the runtime would: Flush, Snapshot, Commit. It ends with
// a Flush and Close, which publishes the rest.
func writePass(b *testing.B, path string, batches []*row.Batch, every int) time.Duration {
	b.Helper()
	s, err := New(Config{Path: path}, benchEnv(b))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Bind(connector.SinkInput{Schema: statsSchema, Mode: connector.Append}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	if err := s.Open(ctx); err != nil {
		b.Fatal(err)
	}
	written := 0
	for _, bt := range batches {
		if err := s.Write(ctx, bt); err != nil {
			b.Fatal(err)
		}
		written += bt.Len()
		if every > 0 && written%every == 0 {
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			st, err := s.Snapshot(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Commit(ctx, st); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

func benchEnv(b *testing.B) connector.SinkEnv {
	b.Helper()
	r := connector.NewRegistry()
	formats.Register(r)
	return connector.SinkEnv{Name: "bench", Formats: r}
}

func benchBatches() []*row.Batch {
	var out []*row.Batch
	for i := 0; i < benchRows; i += 1000 {
		bt := row.NewBatch(1000, 2)
		for j := i; j < min(i+1000, benchRows); j++ {
			r := bt.NewRow()
			r[0], r[1] = row.StringValue(fmt.Sprintf("sensor-%d", j%1000)), row.BigIntValue(int64(j))
			bt.Append(row.Insert, r)
		}
		out = append(out, bt)
	}
	return out
}

// BenchmarkCheckpoints measures what exactly-once costs: rows written with
// a checkpoint (Flush, Snapshot, Commit: fsync of the part, copy into the
// output, fsync of the output) every 10k and every 100k rows, against the
// same rows written straight into the file with one Flush at the end. Each
// iteration runs every variant in turn and keeps the best pass of each: a
// pass on a shared machine is only ever slowed down by others.
func BenchmarkCheckpoints(b *testing.B) {
	batches := benchBatches()
	dir := b.TempDir()
	variants := []struct {
		name  string
		every int
	}{{"none", 0}, {"every-100k", 100_000}, {"every-10k", 10_000}}
	best := make([]time.Duration, len(variants))
	for i := range best {
		best[i] = time.Duration(math.MaxInt64)
	}
	for b.Loop() {
		for i, v := range variants {
			best[i] = min(best[i], writePass(b, filepath.Join(dir, v.name+".csv"), batches, v.every))
		}
	}
	for i, v := range variants {
		b.ReportMetric(float64(benchRows)/best[i].Seconds(), v.name+"-rows/s")
		if i > 0 {
			b.ReportMetric(best[0].Seconds()/best[i].Seconds(), v.name+"/none")
		}
	}
}

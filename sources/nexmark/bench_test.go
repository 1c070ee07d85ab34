package nexmark

import (
	"context"
	"testing"
)

// BenchmarkRead measures events made into rows per second, in batches of
// 1024 as the engine reads them.
func BenchmarkRead(b *testing.B) {
	s := mustOpen(b, fixed)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		batch, err := s.Read(context.Background(), 1024)
		if err != nil {
			b.Fatal(err)
		}
		n += batch.Len()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

package datagen

import (
	"context"
	"testing"
)

func BenchmarkRead(b *testing.B) {
	cases := []struct {
		name string
		src  string
	}{
		{"numeric", "schema: [id BIGINT, n INT, temp DOUBLE, ok BOOLEAN]\nfields: {id: {kind: sequence, start: 1, end: 9223372036854775807}, temp: {min: -10, max: 45}}"},
		{"numeric with nulls", "schema: [id BIGINT, n INT, temp DOUBLE, ok BOOLEAN]\nfields: {n: {null_rate: 0.1}, temp: {null_rate: 0.1}}"},
		{"string16", "schema: [id BIGINT, name STRING]\nfields: {name: {length: 16}}"},
		{"timestamp", "schema: [id BIGINT, ts TIMESTAMP_LTZ(3)]\nfields: {ts: {max_past: 5s}}"},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s := mustBuild(b, "type: datagen\nseed: 1\n"+tc.src+"\n")
			ctx := context.Background()
			rows := 0
			b.ReportAllocs()
			for b.Loop() {
				batch, err := s.Read(ctx, 1024)
				if err != nil {
					b.Fatal(err)
				}
				rows += batch.Len()
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
}

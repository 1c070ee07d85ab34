package pipeline_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// benchRows is the datagen row count of the SQL benchmarks: 1M by default,
// ETLD_BENCH_ROWS=10000000 for a 10M-row run.
func benchRows(b *testing.B) int {
	if s := os.Getenv("ETLD_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return 1_000_000
}

// BenchmarkSQL runs datagen -> query -> blackhole for a pass-through (the
// baseline), a filter plus projection, and a GROUP BY over 100k keys with
// COUNT, SUM and MAX, in the same run. Compare rows/s as ratios against
// pass-through. heap-MB is the live heap after the run with the plan still
// reachable; for the GROUP BY it is mostly aggregate state.
//
//	go test -run XXX -bench SQL -benchtime 1x ./pipeline/
func BenchmarkSQL(b *testing.B) {
	rows := benchRows(b)
	source := fmt.Sprintf(`version: 1
name: bench
sources:
  - name: gen
    type: datagen
    rows: %d
    seed: 1
    schema: [k BIGINT, v BIGINT, temp DOUBLE]
    fields:
      k: { min: 1, max: 100000 }
      v: { min: 0, max: 1000 }
      temp: { min: -10, max: 45 }
`, rows)
	// Top-N and deduplication: k2 spans 1M keys, pt is the processing-time
	// attribute.
	rankSource := strings.Replace(strings.Replace(source, "schema: [k BIGINT, v BIGINT, temp DOUBLE]",
		"schema: [k BIGINT, v BIGINT, temp DOUBLE, k2 BIGINT, pt AS PROCTIME()]", 1),
		"      temp: { min: -10, max: 45 }\n", "      temp: { min: -10, max: 45 }\n      k2: { min: 1, max: 1000000 }\n", 1)
	cases := []struct{ name, sql, source string }{
		{"pass-through", "", source},
		{"filter-project", "SELECT k, v * 2 AS v2, temp FROM gen WHERE temp > 30", source},
		{"groupby-100k", "SELECT k, COUNT(*) AS n, SUM(v) AS total, MAX(temp) AS hi FROM gen GROUP BY k", source},
		{"top3-100k", "SELECT k, v, temp, rn FROM (SELECT k, v, temp, ROW_NUMBER() OVER (PARTITION BY k ORDER BY temp DESC) AS rn FROM gen) WHERE rn <= 3", rankSource},
		{"dedup-last-1M", "SELECT k2, v FROM (SELECT k2, v, ROW_NUMBER() OVER (PARTITION BY k2 ORDER BY pt DESC) AS rn FROM gen) WHERE rn = 1", rankSource},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			from := "gen"
			yaml := c.source
			if c.sql != "" {
				yaml += "transforms:\n  - name: q\n    sql: " + c.sql + "\n"
				from = "q"
			}
			yaml += "sinks:\n  - name: out\n    from: " + from + "\n    type: blackhole\n"
			dir := b.TempDir()
			b.ReportAllocs()
			var before, after runtime.MemStats
			for b.Loop() {
				runtime.GC()
				runtime.ReadMemStats(&before)
				runFile(b, dir, yaml)
				runtime.ReadMemStats(&after)
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(after.HeapAlloc)/(1<<20), "heap-MB")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(rows), "allocs/row")
		})
	}
}

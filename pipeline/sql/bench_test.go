package sql

import "testing"

const benchQuery = `
-- per-sensor statistics over one-minute windows
SELECT window_start, window_end, id,
       COUNT(*) AS readings,
       MAX(temperature) AS max_temp,
       AVG(CAST(temperature AS DECIMAL(10, 2))) AS avg_temp,
       SUM(CASE WHEN temperature > 30 THEN 1 ELSE 0 END) AS hot
FROM TABLE(TUMBLE(TABLE sensor, DESCRIPTOR(event_time), INTERVAL '1' MINUTE))
WHERE id LIKE 'sensor-%' AND temperature IS NOT NULL
GROUP BY window_start, window_end, id
HAVING COUNT(*) > 1`

func BenchmarkParseWindowQuery(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchQuery)))
	n := 0
	for b.Loop() {
		if _, err := Parse(benchQuery); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "queries/s")
}

func BenchmarkFormat(b *testing.B) {
	q, err := Parse(benchQuery)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Format(q)
	}
}

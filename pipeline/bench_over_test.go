package pipeline_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// streamBenchQueries are the Top-N, deduplication, OVER and session window
// benchmarks against Flink, over events(user_id, amount, ts, k) with 100k
// users and 1M values of k, and a pass-through as the baseline of each
// engine.
var streamBenchQueries = []struct{ name, sql, columns string }{
	{"pass-through", "SELECT user_id, amount, ts FROM events", "user_id STRING, amount BIGINT, ts BIGINT"},
	{"top3-100k", "SELECT user_id, amount, ts FROM (SELECT user_id, amount, ts, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn FROM events) WHERE rn <= 3",
		"user_id STRING, amount BIGINT, ts BIGINT"},
	{"dedup-last-1m", "SELECT k, amount, ts FROM (SELECT k, amount, ts, ROW_NUMBER() OVER (PARTITION BY k ORDER BY event_time DESC) AS rn FROM events) WHERE rn = 1",
		"k STRING, amount BIGINT, ts BIGINT"},
	{"over-rows10-sum", "SELECT user_id, amount, SUM(amount) OVER (PARTITION BY user_id ORDER BY event_time ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) AS s FROM events",
		"user_id STRING, amount BIGINT, s BIGINT"},
	{"session-100k", "SELECT user_id, window_start, window_end, COUNT(*) AS n, SUM(amount) AS total FROM TABLE(SESSION(TABLE events PARTITION BY user_id, DESCRIPTOR(event_time), INTERVAL '1' MINUTE)) GROUP BY user_id, window_start, window_end",
		"user_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT, total BIGINT"},
}

// BenchmarkStreamOperatorsAgainstFlink measures each query on etld (file
// -> query -> blackhole, in this process) and on Flink 2.3 in local mode
// (the same file and SQL into Flink's blackhole connector, a JVM per
// query), one after the other per query, and logs rows/s, CPU seconds and
// the ratios, once whatever b.N. Rows: ETLD_BENCH_ROWS (default 1M); one
// row per millisecond, user_id and k drawn at random:
//
//	ETLD_BENCH_ROWS=10000000 go test -run XXX -bench StreamOperatorsAgainstFlink -benchtime 1x -timeout 3h ./pipeline/
//
// ETLD_BENCH_QUERIES narrows the queries to those matching a regexp.
//
// Flink's wall time is measured inside its JVM (SELECT NOW() before and
// after the INSERT), so its start is not counted. Its CPU is its JVM's
// (getrusage of the finished child) less that of a JVM running the same
// script over a one-row file, so that start-up and compilation cancel.
// etld's CPU is this process's over its run. The per-core ratio compares
// rows per CPU second.
func BenchmarkStreamOperatorsAgainstFlink(b *testing.B) {
	testenv.Flink(b)
	rows := 1_000_000
	if s := os.Getenv("ETLD_BENCH_ROWS"); s != "" {
		fmt.Sscan(s, &rows)
	}
	only := regexp.MustCompile(os.Getenv("ETLD_BENCH_QUERIES"))
	dir := b.TempDir()
	data, tiny := filepath.Join(dir, "events.csv"), filepath.Join(dir, "tiny.csv")
	writeEvents(b, data, rows)
	writeEvents(b, tiny, 1)
	b.Logf("%-16s %9s  %8s %8s %10s  %8s %8s %10s  %7s %9s", "query", "rows", "etld s", "CPU s", "rows/s", "Flink s", "CPU s", "rows/s", "wall x", "per core")
	for _, q := range streamBenchQueries {
		if !only.MatchString(q.name) {
			continue
		}
		fl, flCPU := runFlinkBench(b, flinkBenchScript(b, dir, q.name, data, q.columns, q.sql))
		_, startCPU := runFlinkBench(b, flinkBenchScript(b, dir, q.name+"-tiny", tiny, q.columns, q.sql))
		flCPU = max(flCPU-startCPU, 0.001)

		began, cpu0 := time.Now(), selfCPU(b)
		runFile(b, dir, etldBenchPipeline(data, q.sql))
		etld, etldCPU := time.Since(began).Seconds(), selfCPU(b)-cpu0

		n := float64(rows)
		b.ReportMetric(fl/etld, q.name+"-wall-etld/flink")
		b.ReportMetric(flCPU/etldCPU, q.name+"-percore-etld/flink")
		b.Logf("%-16s %9d  %8.2f %8.2f %10.0f  %8.2f %8.2f %10.0f  %6.2fx %8.2fx",
			q.name, rows, etld, etldCPU, n/etld, fl, flCPU, n/fl, fl/etld, flCPU/etldCPU)
	}
}

// writeEvents writes rows of user_id (100k), amount, ts (one a
// millisecond) and k (1M).
func writeEvents(t testing.TB, path string, rows int) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range rows {
		fmt.Fprintf(w, "u%d,%d,%d,k%d\n", rnd.IntN(100_000), rnd.IntN(1000), i, rnd.IntN(1_000_000))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func flinkBenchScript(t testing.TB, dir, name, data, columns, query string) string {
	path := filepath.Join(dir, name+".sql")
	text := fmt.Sprintf(`CREATE TABLE events (
  user_id STRING, amount BIGINT, ts BIGINT, k STRING,
  event_time AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE sink_out (%s) WITH ('connector' = 'blackhole');
SELECT CAST(NOW() AS STRING);
INSERT INTO sink_out %s;
SELECT CAST(NOW() AS STRING);
`, data, columns, query)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func etldBenchPipeline(data, query string) string {
	return fmt.Sprintf(`version: 1
name: bench
sources:
  - name: events
    type: file
    path: %s
    schema:
      - user_id STRING
      - amount BIGINT
      - ts BIGINT
      - k STRING
      - event_time AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: event_time - INTERVAL '1' SECOND
transforms:
  - name: q
    sql: %s
sinks:
  - name: out
    from: q
    type: blackhole
`, data, query)
}

var nowStamp = regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?`)

// runFlinkBench runs one script in its own JVM and returns the seconds
// between its two NOW() stamps and the CPU seconds of the JVM.
func runFlinkBench(t testing.TB, script string) (wall, cpu float64) {
	before := childrenCPU(t)
	res := testenv.RunFlink(t, 60*time.Minute, script)[0]
	cpu = childrenCPU(t) - before
	if res.Err != "" {
		t.Fatalf("%s: Flink: %s", script, res.Err)
	}
	times := nowStamp.FindAllString(res.Out, -1)
	if len(times) != 2 {
		t.Fatalf("%s: Flink printed %q, want two timestamps", script, res.Out)
	}
	var at [2]time.Time
	for i, s := range times {
		var err error
		if at[i], err = time.Parse("2006-01-02 15:04:05.999999999", strings.Replace(s, "T", " ", 1)); err != nil {
			t.Fatal(err)
		}
	}
	return at[1].Sub(at[0]).Seconds(), cpu
}

func selfCPU(t testing.TB) float64     { return rusage(t, syscall.RUSAGE_SELF) }
func childrenCPU(t testing.TB) float64 { return rusage(t, syscall.RUSAGE_CHILDREN) }

func rusage(t testing.TB, who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		t.Fatal(err)
	}
	tv := func(v syscall.Timeval) float64 { return float64(v.Sec) + float64(v.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

package pipeline_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// overBenchQueries are issue 16's OVER and SESSION benchmarks, over
// events(user_id, amount, ts) with 100k users, and a pass-through as the
// baseline of each engine.
var overBenchQueries = []struct{ name, sql, columns string }{
	{"pass-through", "SELECT user_id, amount, ts FROM events", "user_id STRING, amount BIGINT, ts BIGINT"},
	{"over-rows10-sum", "SELECT user_id, amount, SUM(amount) OVER (PARTITION BY user_id ORDER BY event_time ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) AS s FROM events",
		"user_id STRING, amount BIGINT, s BIGINT"},
	{"session-100k", "SELECT user_id, window_start, window_end, COUNT(*) AS n, SUM(amount) AS total FROM TABLE(SESSION(TABLE events PARTITION BY user_id, DESCRIPTOR(event_time), INTERVAL '1' MINUTE)) GROUP BY user_id, window_start, window_end",
		"user_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT, total BIGINT"},
}

// BenchmarkOverAgainstFlink measures each query on etld (file ->
// query -> blackhole, in this process) and on Flink in local mode (the
// same file and SQL into Flink's blackhole connector), and logs rows/s
// and the ratio, once whatever b.N. Rows: ETLD_BENCH_ROWS (default 1M);
// one row per millisecond, users drawn at random:
//
//	ETLD_BENCH_ROWS=2000000 go test -run XXX -bench OverAgainstFlink -benchtime 1x ./pipeline/
//
// Flink's time is measured inside its JVM (SELECT NOW() before and after
// the INSERT), so its start is not counted; one small job's overhead is.
func BenchmarkOverAgainstFlink(b *testing.B) {
	t := b
	testenv.Flink(t)
	rows := 1_000_000
	if s := os.Getenv("ETLD_BENCH_ROWS"); s != "" {
		fmt.Sscan(s, &rows)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "events.csv")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range rows {
		fmt.Fprintf(w, "u%d,%d,%d\n", rnd.IntN(100_000), rnd.IntN(1000), i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var scripts []string
	for _, q := range overBenchQueries {
		path := filepath.Join(dir, q.name+".sql")
		text := fmt.Sprintf(`CREATE TABLE events (
  user_id STRING, amount BIGINT, ts BIGINT,
  event_time AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE sink_out (%s) WITH ('connector' = 'blackhole');
SELECT CAST(NOW() AS STRING);
INSERT INTO sink_out %s;
SELECT CAST(NOW() AS STRING);
`, data, q.columns, q.sql)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, path)
	}
	flink := testenv.RunFlink(t, 10*time.Minute, scripts...)

	stamp := regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?`)
	for i, q := range overBenchQueries {
		yaml := fmt.Sprintf(`version: 1
name: bench
sources:
  - name: events
    type: file
    path: %s
    schema:
      - user_id STRING
      - amount BIGINT
      - ts BIGINT
      - event_time AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: event_time - INTERVAL '1' SECOND
transforms:
  - name: q
    sql: %s
sinks:
  - name: out
    from: q
    type: blackhole
`, data, q.sql)
		began := time.Now()
		runFile(t, dir, yaml)
		etld := time.Since(began)

		if flink[i].Err != "" {
			t.Errorf("%s: Flink: %s", q.name, flink[i].Err)
			continue
		}
		times := stamp.FindAllString(flink[i].Out, -1)
		if len(times) != 2 {
			t.Errorf("%s: Flink printed %q, want two timestamps", q.name, flink[i].Out)
			continue
		}
		var at [2]time.Time
		for j, s := range times {
			if at[j], err = time.Parse("2006-01-02 15:04:05.999999999", strings.Replace(s, "T", " ", 1)); err != nil {
				t.Fatal(err)
			}
		}
		fl := at[1].Sub(at[0])
		b.ReportMetric(fl.Seconds()/etld.Seconds(), q.name+"-etld/flink")
		t.Logf("%-16s %9d rows  etld %7.2fs %9.0f rows/s   Flink %7.2fs %9.0f rows/s   etld/Flink %.2fx",
			q.name, rows, etld.Seconds(), float64(rows)/etld.Seconds(), fl.Seconds(), float64(rows)/fl.Seconds(), fl.Seconds()/etld.Seconds())
	}
}

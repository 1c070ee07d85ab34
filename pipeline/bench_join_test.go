package pipeline_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
)

// joinBenchQueries are the join benchmarks against Flink over orders(id,
// cust, amount, ts) and customers(id, name, country) with one customer a key,
// and a(id, k, ts), b(id, k, ts) for the interval join, each with the
// pass-through of its input as the baseline of each engine.
var joinBenchQueries = []struct{ name, sql, columns string }{
	{"pass-through", "SELECT id, cust, amount FROM orders", "id BIGINT, cust BIGINT, amount BIGINT"},
	{"inner-join", "SELECT o.id, o.amount, c.name FROM orders o JOIN customers c ON o.cust = c.id", "id BIGINT, amount BIGINT, name STRING"},
	{"left-join", "SELECT o.id, o.amount, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.id", "id BIGINT, amount BIGINT, name STRING"},
	{"interval-join", "SELECT a.id, b.id AS bid FROM a, b WHERE a.k = b.k AND a.event_time BETWEEN b.event_time - INTERVAL '10' SECOND AND b.event_time + INTERVAL '5' SECOND",
		"id BIGINT, bid BIGINT"},
}

const joinBenchChildEnv = "ETLD_BENCH_JOIN_CHILD"

// TestBenchJoinChild is BenchmarkJoinsAgainstFlink's child process: it
// runs the pipeline file named by ETLD_BENCH_JOIN_CHILD and prints its
// summary as JSON, so that the parent measures the whole process (wall,
// CPU, peak RSS) as a user's etld run. Without the variable it does
// nothing.
func TestBenchJoinChild(t *testing.T) {
	file := os.Getenv(joinBenchChildEnv)
	if file == "" {
		return
	}
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := p.Run(context.Background(), pipeline.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("SUMMARY %s\n", out)
}

// BenchmarkJoinsAgainstFlink measures each join on etld (file -> join ->
// blackhole, a child process per query) and on Flink 2.3 in local mode
// (the same files and SQL into its blackhole connector, a JVM per query),
// and logs rows/s, CPU seconds, etld's peak RSS and state bytes per key,
// and the ratios, once whatever b.N. ETLD_BENCH_ROWS orders (default 1M)
// over a tenth as many customers; the interval join reads two streams of
// half as many rows each, one a millisecond, over a tenth as many keys:
//
//	ETLD_BENCH_ROWS=10000000 go test -run XXX -bench JoinsAgainstFlink -benchtime 1x -timeout 3h ./pipeline/
//
// ETLD_BENCH_QUERIES narrows the queries to those matching a regexp.
// Flink's time and CPU are measured as in
// BenchmarkStreamOperatorsAgainstFlink. Rows/s count the rows read: the
// orders for the pass-through and the joins, both streams for the
// interval join.
func BenchmarkJoinsAgainstFlink(b *testing.B) {
	testenv.Flink(b)
	rows := 1_000_000
	if s := os.Getenv("ETLD_BENCH_ROWS"); s != "" {
		fmt.Sscan(s, &rows)
	}
	only := regexp.MustCompile(os.Getenv("ETLD_BENCH_QUERIES"))
	dir := b.TempDir()
	full := writeJoinData(b, filepath.Join(dir, "full"), rows)
	tiny := writeJoinData(b, filepath.Join(dir, "tiny"), 10)
	b.Logf("%-14s %9s  %8s %8s %10s %8s %8s  %8s %8s %10s  %7s %9s", "query", "rows", "etld s", "CPU s", "rows/s", "RSS MiB", "B/key", "Flink s", "CPU s", "rows/s", "wall x", "per core")
	var passRSS float64
	for _, q := range joinBenchQueries {
		if !only.MatchString(q.name) {
			continue
		}
		fl, flCPU := runFlinkBench(b, joinFlinkScript(b, dir, q.name, full, q.columns, q.sql))
		_, startCPU := runFlinkBench(b, joinFlinkScript(b, dir, q.name+"-tiny", tiny, q.columns, q.sql))
		flCPU = max(flCPU-startCPU, 0.001)

		file := filepath.Join(dir, q.name+".yaml")
		if err := os.WriteFile(file, []byte(joinPipeline(full, q.sql)), 0o644); err != nil {
			b.Fatal(err)
		}
		etld, etldCPU, rss, sum := runJoinChild(b, file)
		read := int64(0)
		for _, c := range sum.Sources {
			if c.Name != "customers" {
				read += c.In
			}
		}
		// State bytes per entry: the peak RSS above the pass-through's,
		// over the entries (rows kept) the join held at the end. A run
		// without a state directory, as Flink's without checkpoints,
		// takes no snapshot to measure.
		perKey := "-"
		var entries int64
		for _, st := range sum.State {
			entries += st.Entries
		}
		if q.name == "pass-through" {
			passRSS = rss
		} else if passRSS > 0 && entries > 0 {
			perKey = fmt.Sprintf("%.0f", (rss-passRSS)*(1<<20)/float64(entries))
		}
		n := float64(read)
		b.ReportMetric(fl/etld, q.name+"-wall-etld/flink")
		b.ReportMetric(flCPU/etldCPU, q.name+"-percore-etld/flink")
		b.Logf("%-14s %9d  %8.2f %8.2f %10.0f %8.0f %8s  %8.2f %8.2f %10.0f  %6.2fx %8.2fx",
			q.name, read, etld, etldCPU, n/etld, rss, perKey, fl, flCPU, n/fl, fl/etld, flCPU/etldCPU)
	}
}

// joinData is the files of one size.
type joinData struct{ orders, customers, a, b string }

func writeJoinData(t testing.TB, dir string, rows int) joinData {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d := joinData{filepath.Join(dir, "orders.csv"), filepath.Join(dir, "customers.csv"), filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")}
	customers := max(rows/10, 1)
	rnd := rand.New(rand.NewPCG(3, 4))
	write := func(path string, n int, line func(w *bufio.Writer, i int)) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w := bufio.NewWriterSize(f, 1<<20)
		for i := range n {
			line(w, i)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	write(d.orders, rows, func(w *bufio.Writer, i int) {
		fmt.Fprintf(w, "%d,%d,%d,%d\n", i, rnd.IntN(customers), rnd.IntN(1000), i)
	})
	write(d.customers, customers, func(w *bufio.Writer, i int) { fmt.Fprintf(w, "%d,customer-%d,c%d\n", i, i, i%50) })
	half := max(rows/2, 1)
	for _, path := range []string{d.a, d.b} {
		write(path, half, func(w *bufio.Writer, i int) { fmt.Fprintf(w, "%d,%d,%d\n", i, rnd.IntN(max(half/10, 1)), i) })
	}
	return d
}

func joinFlinkScript(t testing.TB, dir, name string, d joinData, columns, query string) string {
	path := filepath.Join(dir, name+".sql")
	text := fmt.Sprintf(`CREATE TABLE orders (id BIGINT, cust BIGINT, amount BIGINT, ts BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE customers (id BIGINT, name STRING, country STRING)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE a (id BIGINT, k BIGINT, ts BIGINT, event_time AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE b (id BIGINT, k BIGINT, ts BIGINT, event_time AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR event_time AS event_time - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE sink_out (%s) WITH ('connector' = 'blackhole');
SELECT CAST(NOW() AS STRING);
INSERT INTO sink_out %s;
SELECT CAST(NOW() AS STRING);
`, d.orders, d.customers, d.a, d.b, columns, query)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// joinPipeline is the etld pipeline of query, with the sources it reads.
func joinPipeline(d joinData, query string) string {
	orders := fmt.Sprintf(`  - name: orders
    type: file
    path: %s
    schema: [id BIGINT, cust BIGINT, amount BIGINT, ts BIGINT]
`, d.orders)
	customers := fmt.Sprintf(`  - name: customers
    type: file
    path: %s
    schema: [id BIGINT, name STRING, country STRING]
`, d.customers)
	stream := func(name, path string) string {
		return fmt.Sprintf(`  - name: %s
    type: file
    path: %s
    schema:
      - id BIGINT
      - k BIGINT
      - ts BIGINT
      - event_time AS TO_TIMESTAMP_LTZ(ts, 3)
    watermark: event_time - INTERVAL '1' SECOND
`, name, path)
	}
	sources := orders
	switch {
	case regexp.MustCompile(`\bcustomers\b`).MatchString(query):
		sources += customers
	case regexp.MustCompile(`FROM a, b`).MatchString(query):
		sources = stream("a", d.a) + stream("b", d.b)
	}
	return fmt.Sprintf(`version: 1
name: bench-join
sources:
%stransforms:
  - name: q
    sql: %s
sinks:
  - name: out
    from: q
    type: blackhole
`, sources, query)
}

// runJoinChild runs a pipeline file in a child process and returns its
// wall and CPU seconds, its peak RSS in MiB and its summary.
func runJoinChild(t testing.TB, file string) (wall, cpu, rssMiB float64, sum pipeline.Summary) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchJoinChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), joinBenchChildEnv+"="+file)
	began := time.Now()
	out, err := cmd.Output()
	wall = time.Since(began).Seconds()
	if err != nil {
		t.Fatalf("etld child on %s: %v\n%s", file, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	tv := func(v syscall.Timeval) float64 { return float64(v.Sec) + float64(v.Usec)/1e6 }
	cpu, rssMiB = tv(ru.Utime)+tv(ru.Stime), float64(ru.Maxrss)/1024
	m := regexp.MustCompile(`(?m)^SUMMARY (.*)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("etld child on %s printed no summary:\n%s", file, out)
	}
	if err := json.Unmarshal(m[1], &sum); err != nil {
		t.Fatal(err)
	}
	return wall, cpu, rssMiB, sum
}

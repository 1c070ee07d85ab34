package mysql_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/sinks/blackhole"
	"github.com/etld/etld/sources/file"
	"github.com/etld/etld/sources/mysql"
)

// BenchmarkLookupJoinAgainstBatchedIN is the lookup join's benchmark:
// ETLD_BENCH_ROWS orders (default 1M) from a file, each joined with its
// customer in a MariaDB table of a tenth as many rows (100k), into a
// blackhole. etld without a cache and with a PARTIAL cache of every
// customer runs against a plain Go loop that reads the same file, asks
// for each batch of 1024 orders' distinct keys with one
// `SELECT ... WHERE id IN (...)` and joins in a map: what a programmer
// writes by hand, round trips as etld's uncached lookups. The three run
// in turn, ETLD_BENCH_ROUNDS times (3); the log gives the median wall
// and CPU seconds of each, rows/s, keys looked up, the cache's hit ratio
// and the ratios. CPU is this process's (the client side; the server is
// the same for all):
//
//	ETLD_BENCH_ROWS=1000000 go test -run XXX -bench LookupJoinAgainstBatchedIN -benchtime 1x ./sources/mysql/
func BenchmarkLookupJoinAgainstBatchedIN(b *testing.B) {
	db, dsn := testenv.MySQL(b)
	rows, rounds := 1_000_000, 3
	if s := os.Getenv("ETLD_BENCH_ROWS"); s != "" {
		fmt.Sscan(s, &rows)
	}
	if s := os.Getenv("ETLD_BENCH_ROUNDS"); s != "" {
		fmt.Sscan(s, &rounds)
	}
	customers := max(rows/10, 1)
	name := testenv.MySQLTable(b, db, "")
	testenv.Exec(b, db, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, name VARCHAR(40) NOT NULL, country VARCHAR(8) NOT NULL)")
	for lo := 0; lo < customers; lo += 5000 {
		var vals []string
		for i := lo; i < min(lo+5000, customers); i++ {
			vals = append(vals, fmt.Sprintf("(%d, 'customer-%d', 'c%d')", i, i, i%50))
		}
		testenv.Exec(b, db, "INSERT INTO `"+name+"` VALUES "+strings.Join(vals, ","))
	}
	dir := b.TempDir()
	orders := filepath.Join(dir, "orders.csv")
	writeOrders(b, orders, rows, customers)

	b.Setenv("ETLD_MYSQL_TEST_DSN", dsn)
	pipelines := map[string]string{}
	for _, v := range []struct{ name, cache string }{
		{"etld", "      cache: none\n"},
		{"etld-cached", fmt.Sprintf("      cache: partial\n      partial_cache: { max_rows: %d }\n", customers)},
	} {
		path := filepath.Join(dir, v.name+".yaml")
		if err := os.WriteFile(path, []byte(fmt.Sprintf(lookupBenchPipeline, orders, name, v.cache)), 0o644); err != nil {
			b.Fatal(err)
		}
		pipelines[v.name] = path
	}

	type result struct {
		wall, cpu         []float64
		out, keys, hits   int64
		misses, roundTrip int64
	}
	res := map[string]*result{"etld": {}, "etld-cached": {}, "go-loop": {}}
	for range rounds {
		for _, which := range []string{"etld", "go-loop", "etld-cached"} {
			r := res[which]
			began, cpu0 := time.Now(), processCPU(b)
			if which == "go-loop" {
				r.out, r.keys, r.roundTrip = batchedINLoop(b, db, name, orders)
			} else {
				lj, out := runLookupPipeline(b, pipelines[which])
				r.out, r.keys, r.roundTrip = out, lj.Stats.KeysLookedUp.Load(), lj.RoundTrips()
				r.hits, r.misses = lj.Stats.Hits.Load(), lj.Stats.Misses.Load()
			}
			r.wall = append(r.wall, time.Since(began).Seconds())
			r.cpu = append(r.cpu, processCPU(b)-cpu0)
			if r.out != int64(rows) {
				b.Fatalf("%s joined %d rows, want %d", which, r.out, rows)
			}
		}
	}
	median := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	base := res["go-loop"]
	b.Logf("%d orders, %d customers, %d rounds (medians)", rows, customers, rounds)
	b.Logf("%-12s %8s %8s %10s %10s %8s %8s %8s %8s", "run", "wall s", "CPU s", "rows/s", "keys", "trips", "hit %", "wall x", "CPU x")
	for _, which := range []string{"go-loop", "etld", "etld-cached"} {
		r := res[which]
		w, c := median(r.wall), median(r.cpu)
		hit := "-"
		if r.hits+r.misses > 0 {
			hit = fmt.Sprintf("%.1f", 100*float64(r.hits)/float64(r.hits+r.misses))
		}
		b.Logf("%-12s %8.2f %8.2f %10.0f %10d %8d %8s %7.2fx %7.2fx", which, w, c, float64(rows)/w, r.keys, r.roundTrip, hit,
			median(base.wall)/w, median(base.cpu)/c)
		if which != "go-loop" {
			b.ReportMetric(median(base.wall)/w, which+"-wall-vs-loop")
		}
	}
}

const lookupBenchPipeline = `version: 1
name: lookup-bench
sources:
  - name: orders
    type: file
    path: %s
    schema: [id BIGINT, customer_id BIGINT, amount BIGINT, proc_time AS PROCTIME()]
  - name: customers
    type: mysql
    dsn: ${ETLD_MYSQL_TEST_DSN}
    table: %s
    schema: [id BIGINT, name STRING, country STRING]
    lookup:
%stransforms:
  - name: enriched
    sql: |
      SELECT o.id, o.amount, c.name, c.country
      FROM orders AS o
      JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id = c.id
sinks:
  - name: out
    from: enriched
    type: blackhole
`

func writeOrders(t testing.TB, path string, rows, customers int) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rnd := rand.New(rand.NewPCG(5, 6))
	for i := range rows {
		fmt.Fprintf(w, "%d,%d,%d\n", i, rnd.IntN(customers), rnd.IntN(1000))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// runLookupPipeline runs the pipeline and returns its lookup join and the
// rows the sink took.
func runLookupPipeline(t testing.TB, path string) (*joinop.LookupJoin, int64) {
	r := connector.NewRegistry()
	formats.Register(r)
	file.Register(r)
	mysql.Register(r)
	blackhole.Register(r)
	p, err := pipeline.Load(path, pipeline.Env{Registry: r, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Plan.Graph()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if err := runtime.Run(ctx, g, runtime.Options{}); err != nil {
		t.Fatal(err)
	}
	var lj *joinop.LookupJoin
	for _, o := range g.Ops {
		if l, ok := o.Op.(*joinop.LookupJoin); ok {
			lj = l
		}
	}
	if lj == nil {
		t.Fatal("no lookup join in the graph")
	}
	return lj, g.Sinks[0].Stats.RowsIn.Load()
}

// batchedINLoop is the hand-written baseline: batches of 1024 orders,
// one SELECT ... IN of each batch's distinct keys, a map join. It returns
// the rows joined, the keys asked for and the queries sent.
func batchedINLoop(t testing.TB, db *sql.DB, table, orders string) (joined, keys, queries int64) {
	f, err := os.Open(orders)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	type order struct{ id, cust, amount int64 }
	batch := make([]order, 0, 1024)
	found := make(map[int64][2]string, 1024)
	var args []any
	var sink int
	flush := func() {
		clear(found)
		args = args[:0]
		seen := make(map[int64]bool, len(batch))
		for _, o := range batch {
			if !seen[o.cust] {
				seen[o.cust] = true
				args = append(args, o.cust)
			}
		}
		q := "SELECT id, name, country FROM `" + table + "` WHERE id IN (?" + strings.Repeat(",?", len(args)-1) + ")"
		rs, err := db.Query(q, args...)
		if err != nil {
			t.Fatal(err)
		}
		queries++
		keys += int64(len(args))
		for rs.Next() {
			var id int64
			var name, country string
			if err := rs.Scan(&id, &name, &country); err != nil {
				t.Fatal(err)
			}
			found[id] = [2]string{name, country}
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		rs.Close()
		for _, o := range batch {
			if c, ok := found[o.cust]; ok {
				joined++
				sink += len(c[0]) + len(c[1]) + int(o.id+o.amount)&1
			}
		}
		batch = batch[:0]
	}
	for sc.Scan() {
		line := sc.Bytes()
		var vals [3]int64
		for i := range vals {
			end := bytes.IndexByte(line, ',')
			if end < 0 {
				end = len(line)
			}
			v, err := strconv.ParseInt(string(line[:end]), 10, 64)
			if err != nil {
				t.Fatalf("order %q: %v", sc.Text(), err)
			}
			vals[i] = v
			line = line[min(end+1, len(line)):]
		}
		batch = append(batch, order{vals[0], vals[1], vals[2]})
		if len(batch) == cap(batch) {
			flush()
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(batch) > 0 {
		flush()
	}
	_ = sink
	return joined, keys, queries
}

func processCPU(t testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	tv := func(v syscall.Timeval) float64 { return float64(v.Sec) + float64(v.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

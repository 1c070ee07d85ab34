package mysql_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/joinop"
	filesink "github.com/etld/etld/sinks/file"
	"github.com/etld/etld/sources/file"
	"github.com/etld/etld/sources/mysql"
)

func registry() *connector.Registry {
	r := connector.NewRegistry()
	formats.Register(r)
	file.Register(r)
	mysql.Register(r)
	filesink.Register(r)
	return r
}

func load(t *testing.T, dsn, yaml string) *pipeline.Pipeline {
	t.Helper()
	t.Setenv("ETLD_MYSQL_TEST_DSN", dsn)
	return pipefile.Load(t, pipeline.Env{Registry: registry()}, "", yaml)
}

// runGraph runs p's graph and returns its lookup join operators, for
// their counters.
func runGraph(t *testing.T, p *pipeline.Pipeline) []*joinop.LookupJoin {
	t.Helper()
	g, err := p.Plan.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.Run(runCtx(t), g, runtime.Options{}); err != nil {
		t.Fatal(err)
	}
	var out []*joinop.LookupJoin
	for _, o := range g.Ops {
		if lj, ok := o.Op.(*joinop.LookupJoin); ok {
			out = append(out, lj)
		}
	}
	return out
}

func runCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	sort.Strings(lines)
	return lines
}

// lookupFixture makes a customers table of n rows (id 1..n, name cN,
// tier id%3) and an orders file of m orders whose customer ids are
// i%(n+n/2)+1 (so a third of them have no customer) and every 17th NULL.
func lookupFixture(t *testing.T, n, m int) (dsn, name, orders string, want func(left bool, filter bool) []string) {
	sqlDB, dsn := testenv.MySQL(t)
	_ = dsn
	name = testenv.MySQLTable(t, sqlDB, "")
	testenv.Exec(t, sqlDB, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, name VARCHAR(20) NOT NULL, tier INT)")
	var vals []string
	for i := 1; i <= n; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'c%d', %d)", i, i, i%3))
	}
	testenv.Exec(t, sqlDB, "INSERT INTO `"+name+"` VALUES "+strings.Join(vals, ","))
	var csv strings.Builder
	type order struct {
		id   int
		cust int // 0: NULL
	}
	var os_ []order
	for i := 0; i < m; i++ {
		c := i%(n+n/2) + 1
		if i%17 == 0 {
			c = 0
		}
		os_ = append(os_, order{i, c})
		if c == 0 {
			fmt.Fprintf(&csv, "%d,\n", i)
		} else {
			fmt.Fprintf(&csv, "%d,%d\n", i, c)
		}
	}
	orders = filepath.Join(t.TempDir(), "orders.csv")
	if err := writeFile(orders, csv.String()); err != nil {
		t.Fatal(err)
	}
	want = func(left, filter bool) []string {
		var out []string
		for _, o := range os_ {
			match := o.cust != 0 && o.cust <= n && (!filter || o.cust%3 != 0)
			cust := ""
			if o.cust != 0 {
				cust = fmt.Sprint(o.cust)
			}
			switch {
			case match:
				out = append(out, fmt.Sprintf("%d,%s,c%d,%d", o.id, cust, o.cust, o.cust%3))
			case left:
				out = append(out, fmt.Sprintf("%d,%s,,", o.id, cust))
			}
		}
		sort.Strings(out)
		return out
	}
	return dsn, name, orders, want
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

const lookupPipeline = `version: 1
name: lookup
sources:
  - name: orders
    type: file
    path: %s
    format: { type: csv, null_literal: "" }
    schema:
      - id BIGINT
      - customer_id BIGINT
      - proc_time AS PROCTIME()
  - name: customers
    type: mysql
    dsn: ${ETLD_MYSQL_TEST_DSN}
    table: %s
    schema: [id BIGINT, name STRING, tier INT]
    lookup:
      batch_size: %d
%s
transforms:
  - name: enriched
    sql: |
      SELECT o.id, o.customer_id, c.name, c.tier
      FROM orders AS o
      %s JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c
        ON o.customer_id = c.id %s
sinks:
  - name: out
    from: enriched
    type: file
    path: %s
    format: { type: csv, null_literal: "" }
`

// TestLookupJoinPipeline runs orders (file) JOIN customers (MariaDB) FOR
// SYSTEM_TIME AS OF proc_time, INNER and LEFT, with and without a
// condition on the looked-up row and the cache, and checks the output
// against the join computed here, the changelog mode in explain, and
// the round trips: one query per input batch (cut at batch_size keys),
// none for keys the cache holds.
func TestLookupJoinPipeline(t *testing.T) {
	const customers, orders = 300, 5000
	dsn, name, ordersPath, want := lookupFixture(t, customers, orders)
	cases := []struct {
		name    string
		kind    string
		filter  bool
		cache   string
		batch   int
		trips   func(got int64) bool
		explain string
	}{
		{name: "inner", kind: "", batch: 1000, explain: "LookupJoin(table=[customers], joinType=[InnerJoin], lookup=[id=customer_id]",
			// 5000 rows in batches of up to 1024: each batch's distinct keys
			// (at most 450) are one query.
			trips: func(n int64) bool { return n >= 5 && n <= 10 }},
		{name: "left", kind: "LEFT", batch: 100, explain: "joinType=[LeftOuterJoin]",
			// 450 distinct keys per batch in queries of 100: 5 per batch.
			trips: func(n int64) bool { return n >= 25 && n <= 50 }},
		{name: "left_filter_cached", kind: "LEFT", filter: true, batch: 1000,
			cache:   "      cache: partial\n      partial_cache: { max_rows: 1000, expire_after_write: 1h }",
			explain: "cache=[PARTIAL, max-rows=1000, expire-after-write=60 min, cache-missing-key=true]",
			// Every key is looked up once: the first batch holds them all.
			trips: func(n int64) bool { return n == 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.csv")
			cond := ""
			if c.filter {
				cond = "AND c.tier <> 0"
			}
			cache := strings.ReplaceAll(c.cache, "\\n", "\n")
			p := load(t, dsn, fmt.Sprintf(lookupPipeline, ordersPath, name, c.batch, cache, c.kind, cond, out))
			ex := p.Plan.Explain()
			if !strings.Contains(ex, c.explain) || !strings.Contains(ex, "enriched: changelogMode=[I]") {
				t.Errorf("explain lacks %q or insert-only output:\n%s", c.explain, ex)
			}
			ops := runGraph(t, p)
			if len(ops) != 1 {
				t.Fatalf("%d lookup joins in the graph", len(ops))
			}
			got := readLines(t, out)
			w := want(c.kind == "LEFT", c.filter)
			if strings.Join(got, "\n") != strings.Join(w, "\n") {
				t.Errorf("%d rows, want %d; first %v want %v", len(got), len(w), got[:min(5, len(got))], w[:min(5, len(w))])
			}
			lj := ops[0]
			trips := lj.RoundTrips()
			if !c.trips(trips) {
				t.Errorf("%d round trips", trips)
			}
			hits, misses := lj.Stats.Hits.Load(), lj.Stats.Misses.Load()
			nonNull := int64(orders - (orders+16)/17)
			if hits+misses != nonNull {
				t.Errorf("hits %d + misses %d != %d rows with a key", hits, misses, nonNull)
			}
			// Cached: each of the 450 distinct keys is looked up once, by the
			// first batch (whose rows are the misses); every later row hits.
			if c.cache != "" && (lj.Stats.KeysLookedUp.Load() != 450 || misses > 1024 || misses < 450) {
				t.Errorf("cached: %d keys looked up, %d misses: want 450 keys, misses only in the first batch", lj.Stats.KeysLookedUp.Load(), misses)
			}
			if c.cache == "" && hits != 0 {
				t.Errorf("no cache, yet %d hits", hits)
			}
		})
	}
}

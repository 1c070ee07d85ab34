package postgres_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sinks"
	"github.com/etld/etld/sources/file"
)

func registry() *connector.Registry {
	r := connector.NewRegistry()
	formats.Register(r)
	file.Register(r)
	// Every sink: type jdbc is the postgres sink by its url.
	sinks.Register(r)
	return r
}

// TestGroupByUpsertPipeline runs CSV -> GROUP BY ... HAVING -> postgres
// in streaming mode, without the runtime's per-batch folding, so that the
// sink gets every +I, +U and -D of groups entering and leaving the HAVING
// range, in a run with a state directory (fenced writes); the table must
// end as the aggregate computed here directly.
func TestGroupByUpsertPipeline(t *testing.T) {
	pool, dsn := openDB(t)
	name := table(t, pool, "")
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(4, 2))
	var csv strings.Builder
	type acc struct{ n, sum int64 }
	accs := map[string]*acc{}
	left := 0 // groups that were in the result and left it
	in := map[string]bool{}
	for range 6000 {
		k := fmt.Sprintf("k%d", rng.IntN(80))
		v := rng.Int64N(1000) - 200
		fmt.Fprintf(&csv, "%s,%d\n", k, v)
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
		}
		a.n++
		a.sum += v
		now := a.n >= 60 && a.n <= 80
		if in[k] && !now {
			left++
		}
		in[k] = now
	}
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var want []string
	for k, a := range accs {
		if a.n >= 60 && a.n <= 80 {
			want = append(want, fmt.Sprintf("%s|%d|%d", k, a.n, a.sum))
		}
	}
	sort.Strings(want)
	if len(want) == 0 || left == 0 {
		t.Fatalf("test data: %d final groups, %d groups left the result: it would prove nothing", len(want), left)
	}
	t.Setenv("ETLD_PG_TEST_DSN", dsn)
	t.Cleanup(func() { exec(t, pool, `DELETE FROM public.etld_sink_fences WHERE sink = $1`, name+"/db") })
	p := pipefile.Load(t, pipeline.Env{Registry: registry()}, dir, fmt.Sprintf(`version: 1
name: %s
mini_batch: false
sources:
  - name: src
    type: file
    path: %s
    schema: [k STRING, v BIGINT]
transforms:
  - name: agg
    sql: |
      SELECT k, COUNT(*) AS n, SUM(v) AS total
      FROM src GROUP BY k HAVING COUNT(*) BETWEEN 60 AND 80
sinks:
  - name: db
    from: agg
    type: postgres
    dsn: ${ETLD_PG_TEST_DSN}
    table: %s
    key: [k]
    create_table: true
    batch_size: 37
    parallelism: 3
`, name, filepath.Join(dir, "in.csv"), name))
	if _, err := p.Run(testenv.Context(t, 2*time.Minute), pipeline.RunOptions{StateDir: filepath.Join(dir, "state")}); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, pool, name); !slices.Equal(got, want) {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var fence int64
	if err := pool.QueryRow(testenv.Context(t, time.Minute), "SELECT fence FROM public.etld_sink_fences WHERE sink = $1", name+"/db").Scan(&fence); err != nil || fence <= 0 {
		t.Errorf("the run with a state directory left fence %d (%v), want one", fence, err)
	}
}

// TestJDBCDeadLetters: a type: jdbc sink with Flink's url form writes to
// PostgreSQL; rows the server refuses go to the dead-letter file with the
// SQLSTATE, the others land, and the summary counts them apart.
func TestJDBCDeadLetters(t *testing.T) {
	pool, dsn := openDB(t)
	name := table(t, pool, "")
	exec(t, pool, "CREATE TABLE "+ident(name)+" (id int PRIMARY KEY, code varchar(4) NOT NULL)")
	dir := t.TempDir()
	var csv strings.Builder
	var want []string
	for i := range 50 {
		code := fmt.Sprintf("c%d", i)
		if i%10 == 3 {
			code = "far too long"
		} else {
			want = append(want, fmt.Sprintf("%d|%s", i, code))
		}
		fmt.Fprintf(&csv, "%d,%s\n", i, code)
	}
	sort.Strings(want)
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ETLD_PG_TEST_PASSWORD", cfg.Password)
	dlq := filepath.Join(dir, "dead.jsonl")
	sum := pipefile.Run(t, testenv.Context(t, 2*time.Minute), pipeline.Env{Registry: registry()}, dir, fmt.Sprintf(`version: 1
name: dead-letters
sources:
  - name: src
    type: file
    path: %s
    schema: [id INT, code STRING]
sinks:
  - name: db
    from: src
    type: jdbc
    url: jdbc:postgresql://%s/%s
    username: %s
    password: ${ETLD_PG_TEST_PASSWORD}
    table: %s
    on_error: dead-letter
    dead_letter: %s
`, filepath.Join(dir, "in.csv"), serverAddr(t, dsn), cfg.Database, cfg.User, name, dlq))
	if got := dump(t, pool, name); !slices.Equal(got, want) {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	f, err := os.Open(dlq)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct{ Sink, Position, Error, Record string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Sink != "db" || !strings.Contains(rec.Error, "SQLSTATE 22001") || !strings.Contains(rec.Record, "far too long") {
			t.Errorf("dead letter %+v: want sink db, SQLSTATE 22001 and the row", rec)
		}
		ids = append(ids, strings.SplitN(strings.TrimPrefix(rec.Record, "+I["), ",", 2)[0])
	}
	if strings.Join(ids, " ") != "3 13 23 33 43" {
		t.Errorf("dead-lettered rows %v, want 3 13 23 33 43", ids)
	}
	if len(sum.Sinks) != 1 || sum.Sinks[0].In != 50 || sum.Sinks[0].Out != 45 || sum.Sinks[0].Skipped != 5 {
		t.Errorf("summary %+v: want 50 rows in, 45 written and 5 skipped in the sink", sum.Sinks)
	}
}

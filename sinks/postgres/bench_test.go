package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/postgres"
)

// benchRows is ETLD_BENCH_ROWS, else def.
func benchRows(def int) int {
	if v, err := strconv.Atoi(os.Getenv("ETLD_BENCH_ROWS")); err == nil && v > 0 {
		return v
	}
	return def
}

var benchSchema = row.NewSchema(
	row.Field{Name: "id", Type: row.Type{ID: row.BigInt, NotNull: true}},
	row.Field{Name: "v", Type: row.Of(row.String)},
	row.Field{Name: "n", Type: row.Of(row.BigInt)},
)

// The changes in one Write, as the runtime hands them.
const benchInBatch = 1024

// BenchmarkUpsert writes an upsert stream (ETLD_BENCH_ROWS changes, 200k
// by default, over a tenth as many keys) into an emptied table, each
// pass two ways, interleaved:
//
//   - sink: Write of 1024-change batches and a final Flush, as the
//     runtime calls it (batch_size 5000: one INSERT ... SELECT FROM
//     unnest(...) ON CONFLICT DO UPDATE a transaction);
//   - loop: the plain pgx client, the strongest we know: the same stream
//     cut in 5000-change batches and folded by key beforehand (untimed:
//     ON CONFLICT refuses a key twice in one statement), each batch one
//     INSERT ... SELECT FROM unnest($1::bigint[], $2::text[],
//     $3::bigint[]) ON CONFLICT DO UPDATE of typed Go slices, in
//     autocommit.
//
// It reports rows/s of each and sink/loop. At 1M changes:
//
//	ETLD_BENCH_ROWS=1000000 go test -run '^$' -bench 'Upsert|Append' -benchtime 3x ./sinks/postgres/
func BenchmarkUpsert(b *testing.B) {
	pool, dsn := openDB(b)
	n := benchRows(200_000)
	name := table(b, pool, "")
	exec(b, pool, "CREATE TABLE "+ident(name)+" (id bigint PRIMARY KEY, v text, n bigint)")
	batches, keys := benchStream(n, max(1, n/10), true)
	folded := foldBatches(batches, postgres.DefaultBatchSize)
	var tSink, tLoop time.Duration
	timed := func(d *time.Duration, f func()) {
		exec(b, pool, "TRUNCATE "+ident(name))
		start := time.Now()
		f()
		*d += time.Since(start)
	}
	for b.Loop() {
		timed(&tLoop, func() { upsertLoop(b, pool, name, folded) })
		timed(&tSink, func() { runSink(b, dsn, name, connector.Upsert, batches) })
	}
	checkCount(b, pool, name, keys)
	report(b, n, tSink, tLoop)
}

// BenchmarkAppend appends ETLD_BENCH_ROWS rows (200k by default) into an
// emptied table, interleaved: the sink (COPY FROM STDIN in text format,
// 5000 rows a transaction) and the plain pgx client's CopyFrom (COPY in
// binary format) of the same rows as [][]any in 5000-row copies.
func BenchmarkAppend(b *testing.B) {
	pool, dsn := openDB(b)
	n := benchRows(200_000)
	name := table(b, pool, "")
	exec(b, pool, "CREATE TABLE "+ident(name)+" (id bigint, v text, n bigint)")
	batches, _ := benchStream(n, n, false)
	var plain [][][]any
	var cur [][]any
	for _, bt := range batches {
		for _, c := range bt.Changes {
			cur = append(cur, []any{c.Row[0].Int64(), c.Row[1].Str(), c.Row[2].Int64()})
			if len(cur) == postgres.DefaultBatchSize {
				plain, cur = append(plain, cur), nil
			}
		}
	}
	if len(cur) > 0 {
		plain = append(plain, cur)
	}
	var tSink, tLoop time.Duration
	timed := func(d *time.Duration, f func()) {
		exec(b, pool, "TRUNCATE "+ident(name))
		start := time.Now()
		f()
		*d += time.Since(start)
	}
	for b.Loop() {
		timed(&tLoop, func() { copyLoop(b, pool, name, plain) })
		timed(&tSink, func() { runSink(b, dsn, name, connector.Append, batches) })
	}
	checkCount(b, pool, name, n)
	report(b, n, tSink, tLoop)
}

func report(b *testing.B, n int, tSink, tLoop time.Duration) {
	rate := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(tSink), "sink-rows/s")
	b.ReportMetric(rate(tLoop), "loop-rows/s")
	b.ReportMetric(rate(tSink)/rate(tLoop), "sink/loop")
}

func checkCount(b *testing.B, pool *pgxpool.Pool, name string, want int) {
	var count int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+ident(name)).Scan(&count); err != nil || count != want {
		b.Fatalf("table has %d rows (%v), want %d", count, err, want)
	}
}

// benchStream makes n changes in batches of benchInBatch: over keys keys
// at random (upsert), or one row per key in order.
func benchStream(n, keys int, upsert bool) ([]*row.Batch, int) {
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[int]bool{}
	var batches []*row.Batch
	for i := 0; i < n; i += benchInBatch {
		bt := row.NewBatch(benchInBatch, 3)
		for j := i; j < min(i+benchInBatch, n); j++ {
			k := j
			kind := row.Insert
			if upsert {
				k = rng.IntN(keys)
				if seen[k] {
					kind = row.UpdateAfter
				}
			}
			seen[k] = true
			r := bt.NewRow()
			r[0], r[1], r[2] = row.BigIntValue(int64(k)), row.StringValue("value-"+strconv.Itoa(j)), row.BigIntValue(int64(j))
			bt.Append(kind, r)
		}
		batches = append(batches, bt)
	}
	return batches, len(seen)
}

// runSink writes the batches with the sink, as the runtime calls it.
func runSink(b *testing.B, dsn, name string, mode connector.Mode, batches []*row.Batch) {
	ctx := context.Background()
	in := connector.SinkInput{Schema: benchSchema, Mode: mode}
	if mode == connector.Upsert {
		in.Key = []int{0}
	}
	s, err := newBound(postgres.Config{DSN: dsn, Table: name}, in, connector.SinkEnv{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Open(ctx); err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	for _, bt := range batches {
		if err := s.Write(ctx, bt); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// upsertBatch is one statement's typed columns.
type upsertBatch struct {
	ids, ns []int64
	vs      []string
}

// foldBatches cuts the stream in batches of size changes and keeps the
// last change of each key in each.
func foldBatches(batches []*row.Batch, size int) []upsertBatch {
	var out []upsertBatch
	var cur upsertBatch
	at := map[int64]int{}
	count := 0
	flush := func() {
		if count > 0 {
			out = append(out, cur)
		}
		cur, at, count = upsertBatch{}, map[int64]int{}, 0
	}
	for _, bt := range batches {
		for _, c := range bt.Changes {
			id := c.Row[0].Int64()
			if i, ok := at[id]; ok {
				cur.vs[i], cur.ns[i] = c.Row[1].Str(), c.Row[2].Int64()
			} else {
				at[id] = len(cur.ids)
				cur.ids, cur.vs, cur.ns = append(cur.ids, id), append(cur.vs, c.Row[1].Str()), append(cur.ns, c.Row[2].Int64())
			}
			if count++; count == size {
				flush()
			}
		}
	}
	flush()
	return out
}

// upsertLoop is the plain client's upsert of the folded batches.
func upsertLoop(b *testing.B, pool *pgxpool.Pool, name string, batches []upsertBatch) {
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	q := fmt.Sprintf(`INSERT INTO %s (id, v, n) SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[])
		ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v, n = EXCLUDED.n`, ident(name))
	for _, bt := range batches {
		if _, err := conn.Exec(ctx, q, bt.ids, bt.vs, bt.ns); err != nil {
			b.Fatal(err)
		}
	}
}

// copyLoop is the plain client's CopyFrom of the rows.
func copyLoop(b *testing.B, pool *pgxpool.Pool, name string, batches [][][]any) {
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	for _, rows := range batches {
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{name}, []string{"id", "v", "n"}, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
	}
}

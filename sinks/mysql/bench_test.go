package mysql_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/mysql"
)

// BenchmarkUpsert writes an upsert stream (ETLD_BENCH_ROWS changes, 50k by
// default, over a tenth as many keys) five ways in the same run, each
// into an emptied table:
//
//   - sink: Write of 1024-change batches and a final Flush, as the runtime
//     calls it, with batch_size 1000; sink2 the same with parallelism 2;
//   - loop: the baseline, a plain loop of one prepared multi-row INSERT ...
//     ON DUPLICATE KEY UPDATE per 1000 changes; loop2 two such loops at
//     once, on two connections, over the keys split in two beforehand;
//   - load: LOAD DATA LOCAL INFILE ... REPLACE of the same changes, for
//     reference.
//
// It reports rows/s of each and sink/loop. Run it at 1M changes with:
//
//	ETLD_BENCH_ROWS=1000000 go test -run '^$' -bench Upsert -benchtime 1x ./sinks/mysql/
func BenchmarkUpsert(b *testing.B) {
	db, dsn := openDB(b)
	n := 50_000
	if v, err := strconv.Atoi(os.Getenv("ETLD_BENCH_ROWS")); err == nil && v > 0 {
		n = v
	}
	keys := max(1, n/10)
	const batchSize, inBatch = 1000, 1024
	name := table(b, db, "")
	exec(b, db, "CREATE TABLE `"+name+"` (id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(64), n BIGINT)")
	schema := row.NewSchema(
		row.Field{Name: "id", Type: row.Type{ID: row.BigInt, NotNull: true}},
		row.Field{Name: "v", Type: row.Of(row.String)},
		row.Field{Name: "n", Type: row.Of(row.BigInt)},
	)

	rng := rand.New(rand.NewPCG(1, 1))
	seen := make([]bool, keys)
	var batches []*row.Batch
	var csv bytes.Buffer
	for i := 0; i < n; i += inBatch {
		bt := row.NewBatch(inBatch, 3)
		for j := i; j < min(i+inBatch, n); j++ {
			k := rng.IntN(keys)
			kind := row.UpdateAfter
			if !seen[k] {
				kind, seen[k] = row.Insert, true
			}
			r := bt.NewRow()
			r[0], r[1], r[2] = row.BigIntValue(int64(k)), row.StringValue("value-"+strconv.Itoa(j)), row.BigIntValue(int64(j))
			bt.Append(kind, r)
			fmt.Fprintf(&csv, "%d\tvalue-%d\t%d\n", k, j, j)
		}
		batches = append(batches, bt)
	}
	driver.RegisterReaderHandler("etld_bench", func() io.Reader { return bytes.NewReader(csv.Bytes()) })
	defer driver.DeregisterReaderHandler("etld_bench")

	ctx := context.Background()
	truncate := func() {
		exec(b, db, "TRUNCATE TABLE `"+name+"`")
	}
	runSink := func(parallelism int) {
		s, err := newBound(mysql.Config{DSN: dsn, Table: name, BatchSize: batchSize, Parallelism: parallelism},
			connector.SinkInput{Schema: schema, Mode: connector.Upsert, Key: []int{0}}, connector.SinkEnv{})
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
	// The baseline's changes, split by key for its connections beforehand
	// (untimed), so that it pays nothing for routing.
	var changes []row.Change
	for _, bt := range batches {
		changes = append(changes, bt.Changes...)
	}
	split := func(conns int) [][]row.Change {
		parts := make([][]row.Change, conns)
		for _, c := range changes {
			k := c.Row[0].Int64() % int64(conns)
			parts[k] = append(parts[k], c)
		}
		return parts
	}
	loopOn := func(changes []row.Change) error {
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		query := func(rows int) string {
			return "INSERT INTO `" + name + "` (id, v, n) VALUES " +
				strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", rows), ", ") +
				" ON DUPLICATE KEY UPDATE v = VALUES(v), n = VALUES(n)"
		}
		full, err := conn.PrepareContext(ctx, query(batchSize))
		if err != nil {
			return err
		}
		defer full.Close()
		args := make([]any, 0, 3*batchSize)
		flush := func() error {
			if len(args) == 0 {
				return nil
			}
			var err error
			if len(args) == 3*batchSize {
				_, err = full.ExecContext(ctx, args...)
			} else {
				_, err = conn.ExecContext(ctx, query(len(args)/3), args...)
			}
			args = args[:0]
			return err
		}
		for _, c := range changes {
			args = append(args, c.Row[0].Int64(), c.Row[1].Str(), c.Row[2].Int64())
			if len(args) == 3*batchSize {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	}
	// runLoop is the plain client: one loop of batches per connection, on
	// disjoint keys, in parallel.
	runLoop := func(parts [][]row.Change) {
		errs := make(chan error, len(parts))
		for _, p := range parts {
			go func() { errs <- loopOn(p) }()
		}
		for range parts {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
	}
	one, two := split(1), split(2)
	runLoad := func() {
		if _, err := db.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::etld_bench' REPLACE INTO TABLE `"+name+"` (id, v, n)"); err != nil {
			b.Fatal(err)
		}
	}
	var tSink, tLoop, tSink2, tLoop2, tLoad time.Duration
	timed := func(d *time.Duration, f func()) {
		truncate()
		start := time.Now()
		f()
		*d += time.Since(start)
	}
	for b.Loop() {
		// Interleaved, so that the machine's load swings hit all of them.
		timed(&tLoop, func() { runLoop(one) })
		timed(&tSink, func() { runSink(1) })
		timed(&tLoop2, func() { runLoop(two) })
		timed(&tSink2, func() { runSink(2) })
		timed(&tLoad, runLoad)
	}
	var count int
	if err := db.QueryRow("SELECT COUNT(*) FROM `" + name + "`").Scan(&count); err != nil || count != keys-countUnseen(seen) {
		b.Fatalf("table has %d rows (%v), want %d", count, err, keys-countUnseen(seen))
	}
	rate := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(tSink), "sink-rows/s")
	b.ReportMetric(rate(tLoop), "loop-rows/s")
	b.ReportMetric(rate(tSink2), "sink2-rows/s")
	b.ReportMetric(rate(tLoop2), "loop2-rows/s")
	b.ReportMetric(rate(tLoad), "load-data-rows/s")
	b.ReportMetric(rate(tSink)/rate(tLoop), "sink/loop")
	b.ReportMetric(rate(tSink2)/rate(tLoop2), "sink2/loop2")
}

func countUnseen(seen []bool) int {
	n := 0
	for _, s := range seen {
		if !s {
			n++
		}
	}
	return n
}

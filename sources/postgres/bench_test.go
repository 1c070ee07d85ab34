package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/sources/postgres"
)

func benchRows(def int) int {
	if v, err := strconv.Atoi(os.Getenv("ETLD_BENCH_ROWS")); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkCapture streams ETLD_BENCH_ROWS changes (200k by default:
// inserts in transactions of 1000 rows) from a replication slot two
// ways, each pass with new slots that both hold the same changes, in
// turns:
//
//   - source: the postgres source (startup: latest, stop: latest), Read
//     to its end, as the runtime calls it: changes as rows;
//   - raw: the strongest plain client: a pglogrepl loop that receives the
//     stream and parses each pgoutput message, and does nothing else.
//
// It reports changes/s of each and source/raw:
//
//	ETLD_BENCH_ROWS=1000000 go test -run '^$' -bench 'Capture|Snapshot' -benchtime 3x ./sources/postgres/
func BenchmarkCapture(b *testing.B) {
	pool, dsn := testenv.Postgres(b)
	n := benchRows(200_000)
	table := testenv.PostgresTable(b, pool, "")
	exec(b, pool, "CREATE TABLE "+ident(table)+" (id bigint PRIMARY KEY, v text, n bigint)")
	exec(b, pool, "ALTER TABLE "+ident(table)+" REPLICA IDENTITY FULL")
	var tSource, tRaw time.Duration
	pass := 0
	for b.Loop() {
		exec(b, pool, "TRUNCATE "+ident(table))
		src, raw := testenv.PostgresSlot(b, pool), testenv.PostgresSlot(b, pool)
		exec(b, pool, "CREATE PUBLICATION "+src+" FOR TABLE "+ident(table))
		for _, s := range []string{src, raw} {
			exec(b, pool, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", s)
		}
		for i := 0; i < n; i += 1000 {
			exec(b, pool, fmt.Sprintf("INSERT INTO %s SELECT i, 'value-' || i, i FROM generate_series(%d, %d) i", ident(table), i, min(i+1000, n)-1))
		}
		runs := []func(){
			func() { tSource += timedRun(func() { captureSource(b, dsn, table, src, n) }) },
			func() { tRaw += timedRun(func() { captureRaw(b, dsn, raw, src, n) }) },
		}
		if pass%2 == 1 {
			runs[0], runs[1] = runs[1], runs[0]
		}
		for _, r := range runs {
			r()
		}
		pass++
		testenv.DropPostgresSlot(b, pool, src)
		testenv.DropPostgresSlot(b, pool, raw)
	}
	rate := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(tSource), "source-changes/s")
	b.ReportMetric(rate(tRaw), "raw-changes/s")
	b.ReportMetric(rate(tSource)/rate(tRaw), "source/raw")
}

func timedRun(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// captureSource reads the n changes with the source.
func captureSource(b *testing.B, dsn, table, slot string, n int) {
	cfg := postgres.Config{DSN: dsn, Table: table, Slot: slot, Startup: "latest", Stop: "latest"}
	s := build(b, cfg, nil, "id BIGINT", "v STRING", "n BIGINT")
	ctx := context.Background()
	if err := s.Open(ctx); err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	if got := countAll(b, s); got != n {
		b.Fatalf("the source read %d changes, want %d", got, n)
	}
}

// countAll reads s to its end, as the runtime does, counting changes.
func countAll(b *testing.B, s *postgres.Source) int {
	ctx := context.Background()
	got := 0
	for {
		bt, err := s.Read(ctx, 1024)
		if bt != nil {
			got += bt.Len()
		}
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// captureRaw receives the slot's stream and parses its messages until
// it has seen n changes.
func captureRaw(b *testing.B, dsn, slot, publication string, n int) {
	ctx := context.Background()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	cfg.RuntimeParams["replication"] = "database"
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	err = pglogrepl.StartReplication(ctx, conn, slot, 0, pglogrepl.StartReplicationOptions{
		Mode: pglogrepl.LogicalReplication, PluginArgs: []string{"proto_version '1'", "publication_names '" + publication + "'"}})
	if err != nil {
		b.Fatal(err)
	}
	got := 0
	for got < n {
		msg, err := conn.ReceiveMessage(ctx)
		if err != nil {
			b.Fatal(err)
		}
		cd, ok := msg.(*pgproto3.CopyData)
		if !ok || len(cd.Data) == 0 || cd.Data[0] != pglogrepl.XLogDataByteID {
			continue
		}
		xld, err := pglogrepl.ParseXLogData(cd.Data[1:])
		if err != nil {
			b.Fatal(err)
		}
		m, err := pglogrepl.Parse(xld.WALData)
		if err != nil {
			b.Fatal(err)
		}
		switch m.(type) {
		case *pglogrepl.InsertMessage, *pglogrepl.UpdateMessage, *pglogrepl.DeleteMessage:
			got++
		}
	}
}

// BenchmarkSnapshot reads a table of ETLD_BENCH_ROWS rows (200k by
// default) three ways, in turns: the source's snapshot (startup:
// snapshot, Read to its end), COPY t TO STDOUT into a counting writer
// (the server's fastest way out), and COPY (SELECT ... ORDER BY key) TO
// STDOUT, the query the source's snapshot runs. It reports rows/s of
// each and source/copy, and the CPU this process spent per row in the
// source's runs and in the ordered COPY's (user+system, all threads: GC
// included), which the machine's load sways less than wall time.
func BenchmarkSnapshot(b *testing.B) {
	pool, dsn := testenv.Postgres(b)
	n := benchRows(200_000)
	table := testenv.PostgresTable(b, pool, "")
	exec(b, pool, "CREATE TABLE "+ident(table)+" (id bigint PRIMARY KEY, v text, n bigint)")
	exec(b, pool, fmt.Sprintf("INSERT INTO %s SELECT i, 'value-' || i, i FROM generate_series(1, %d) i", ident(table), n))
	exec(b, pool, "VACUUM ANALYZE "+ident(table))
	var tSource, tCopy, tOrdered, cpuSource, cpuOrdered time.Duration
	for b.Loop() {
		tCopy += timedRun(func() { copyOut(b, dsn, "COPY "+ident(table)+" TO STDOUT", n) })
		cpu := cpuTime(b)
		tSource += timedRun(func() {
			s := build(b, postgres.Config{DSN: dsn, Table: table, Startup: "snapshot"}, nil, "id BIGINT", "v STRING", "n BIGINT")
			if err := s.Open(context.Background()); err != nil {
				b.Fatal(err)
			}
			if got := countAll(b, s); got != n {
				b.Fatalf("the source read %d rows, want %d", got, n)
			}
			s.Close(context.Background())
		})
		cpu, cpuSource = cpuTime(b), cpuSource+cpuTime(b)-cpu
		tOrdered += timedRun(func() {
			copyOut(b, dsn, "COPY (SELECT id, v, n FROM "+ident(table)+" ORDER BY id) TO STDOUT", n)
		})
		cpuOrdered += cpuTime(b) - cpu
	}
	rate := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(tSource), "source-rows/s")
	b.ReportMetric(rate(tCopy), "copy-rows/s")
	b.ReportMetric(rate(tOrdered), "copy-ordered-rows/s")
	b.ReportMetric(rate(tSource)/rate(tCopy), "source/copy")
	b.ReportMetric(rate(tSource)/rate(tOrdered), "source/copy-ordered")
	perRow := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n*b.N) }
	b.ReportMetric(perRow(cpuSource), "source-cpu-ns/row")
	b.ReportMetric(perRow(cpuOrdered), "copy-ordered-cpu-ns/row")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// lineCounter counts COPY's rows: one Write each.
type lineCounter int

func (c *lineCounter) Write(p []byte) (int, error) {
	*c++
	return len(p), nil
}

func copyOut(b *testing.B, dsn, query string, n int) {
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var lines lineCounter
	if _, err := conn.CopyTo(ctx, &lines, query); err != nil {
		b.Fatal(err)
	}
	if int(lines) != n {
		b.Fatalf("%s gave %d rows, want %d", query, lines, n)
	}
}

package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/etld/etld/internal/testenv"
)

// TestServerRestart restarts a private server for real while a writer
// inserts rows, one transaction each, and the source streams them: the
// source reconnects by itself and hands on every row once.
func TestServerRestart(t *testing.T) {
	p := testenv.StartPrivatePostgres(t)
	pool := testenv.PostgresPool(t, p.DSN)
	f := newFixtureOn(t, pool, p.DSN, "id bigint PRIMARY KEY, v text")
	s := open(t, f.config(), nil, "id BIGINT", "v STRING")

	const rows = 400
	var written atomic.Int64
	writerDone := make(chan error, 1)
	go func() { writerDone <- writeRows(p.DSN, f.table, rows, &written) }()
	// A restart once the stream has started and before the writer ends.
	testenv.Eventually(t, time.Minute, "rows written before the restart", func() error {
		if written.Load() < rows/4 {
			return fmt.Errorf("%d rows written", written.Load())
		}
		return nil
	})
	p.Restart(2 * time.Second)
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
	m := newModel(0)
	if err := m.apply(readN(t, s, rows, 50)); err != nil {
		t.Fatal(err)
	}
	if len(m.rows) != rows {
		t.Fatalf("%d rows, want %d", len(m.rows), rows)
	}
}

// writeRows inserts rows 1..n, each in a transaction of its own, over
// connections it makes again while the server is away; a row whose
// insert's answer was lost is found by its key.
func writeRows(dsn, table string, n int, written *atomic.Int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	for i := 1; i <= n; {
		if ctx.Err() != nil {
			return fmt.Errorf("row %d not written: %w", i, ctx.Err())
		}
		if conn == nil || conn.IsClosed() {
			c, err := pgx.Connect(ctx, dsn)
			if err != nil {
				time.Sleep(50 * time.Millisecond) // the server is away: try again
				continue
			}
			conn = c
		}
		_, err := conn.Exec(ctx, "INSERT INTO "+ident(table)+" VALUES ($1, $2)", i, fmt.Sprintf("v%d", i))
		var pe *pgconn.PgError
		switch {
		case err == nil, errors.As(err, &pe) && pe.Code == "23505":
			i++
			written.Add(1)
		case errors.As(err, &pe) && pe.Code[:2] != "57" && pe.Code[:2] != "08":
			return err
		default:
			conn.Close(context.Background())
			conn = nil
		}
	}
	return nil
}

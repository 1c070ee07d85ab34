package testenv_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/etld/etld/internal/testenv"
)

// TestPostgresSmoke checks what the CDC source and the sink need of the
// shared PostgreSQL: a table the test user creates and reads, wal_level
// logical, and a logical replication connection that creates a slot with
// pgoutput and exports its snapshot.
func TestPostgresSmoke(t *testing.T) {
	pool, dsn := testenv.Postgres(t)
	ctx := testenv.Context(t, time.Minute)
	var level string
	if err := pool.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "logical" {
		t.Fatalf("wal_level is %q, want logical", level)
	}
	table := testenv.PostgresTable(t, pool, "")
	testenv.PgExec(t, pool, "CREATE TABLE "+testenv.PgIdent(table)+" (id bigint PRIMARY KEY, v text)")
	testenv.PgExec(t, pool, "INSERT INTO "+testenv.PgIdent(table)+" VALUES (1, 'a'), (2, NULL)")
	if got, want := fmt.Sprint(testenv.PostgresLines(t, pool, table, "|", "null")), "[1|a 2|null]"; got != want {
		t.Errorf("table holds %s, want %s", got, want)
	}

	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["replication"] = "database"
	repl, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("replication connection: %v", err)
	}
	defer repl.Close(context.Background())
	slot := testenv.PostgresSlot(t, pool)
	res, err := repl.Exec(ctx, "CREATE_REPLICATION_SLOT "+slot+" TEMPORARY LOGICAL pgoutput EXPORT_SNAPSHOT").ReadAll()
	if err != nil {
		t.Fatalf("create a slot: %v", err)
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0][2]) == 0 {
		t.Fatalf("CREATE_REPLICATION_SLOT answered %v, want one row with a snapshot name", res)
	}
}

// TestPrivatePostgresRestart starts a private server, writes to it,
// restarts it and reads what it wrote: a restart keeps the data and the
// port.
func TestPrivatePostgresRestart(t *testing.T) {
	p := testenv.StartPrivatePostgres(t)
	ctx := testenv.Context(t, time.Minute)
	c, err := pgx.Connect(ctx, p.DSN)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE TABLE t (id int); INSERT INTO t VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	p.Restart(100 * time.Millisecond)
	c, err = pgx.Connect(ctx, p.DSN)
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	defer c.Close(context.Background())
	var id int
	if err := c.QueryRow(ctx, "SELECT id FROM t").Scan(&id); err != nil || id != 7 {
		t.Fatalf("after the restart the table holds %d (%v), want 7", id, err)
	}
}

package testenv

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresDSN returns the URL of the test PostgreSQL (database etld_test,
// a user that owns it and may replicate: LOGIN REPLICATION), or
// skips/fails t when ETLD_TEST_PG_DSN is unset. The server runs with
// wal_level=logical.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvPostgresDSN, "PostgreSQL")
}

// Postgres connects the test itself to the shared PostgreSQL, to prepare
// and read tables, and returns the pool, closed when the test ends, and
// the URL for the code under test.
func Postgres(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	dsn := PostgresDSN(t)
	return PostgresPool(t, dsn), dsn
}

// PostgresPool connects to the server at dsn; the pool is closed when the
// test ends.
func PostgresPool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	ctx := Context(t, time.Minute)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	t.Cleanup(pool.Close)
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("postgres: %v", err)
	}
	return pool
}

// PgIdent quotes a PostgreSQL identifier.
func PgIdent(name string) string {
	return pgx.Identifier{name}.Sanitize()
}

// PostgresTable returns a table name unique to the call, with suffix
// appended (a name that needs quoting), and drops the table, and a
// publication of the same name, when the test ends. It creates nothing.
func PostgresTable(t testing.TB, pool *pgxpool.Pool, suffix string) string {
	t.Helper()
	name := UniqueName(t, "tbl") + suffix
	if len(name) > maxPgName {
		// The server would cut it short (and a CDC source, which names
		// the table as configured, refuses it); the run and sequence at
		// the end keep it unique.
		name = "t" + name[len(name)-maxPgName+1:]
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+PgIdent(name)+" CASCADE"); err != nil {
			t.Errorf("drop table %s: %v", name, err)
		}
	})
	return name
}

// PostgresSlot returns a replication slot name unique to the call and
// drops the slot (ending the session that holds it, if any) and the
// publication of the same name when the test ends. It creates nothing.
func PostgresSlot(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	name := UniqueName(t, "slot")
	if len(name) > maxPgName {
		// The run and sequence at the end keep it unique.
		name = "s" + name[len(name)-maxPgName+1:]
	}
	t.Cleanup(func() { DropPostgresSlot(t, pool, name) })
	return name
}

// DropPostgresSlot drops the slot name and the publication of the same
// name, if they exist, ending the session that holds the slot.
func DropPostgresSlot(t testing.TB, pool *pgxpool.Pool, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := pool.Exec(ctx, "DROP PUBLICATION IF EXISTS "+PgIdent(name)); err != nil {
		t.Errorf("drop publication %s: %v", name, err)
	}
	for {
		var active *int32
		err := pool.QueryRow(ctx, "SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1", name).Scan(&active)
		if err == pgx.ErrNoRows {
			return
		}
		if err != nil {
			t.Errorf("slot %s: %v", name, err)
			return
		}
		if active != nil {
			_, _ = pool.Exec(ctx, "SELECT pg_terminate_backend($1)", *active)
		}
		_, err = pool.Exec(ctx, "SELECT pg_drop_replication_slot($1)", name)
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Errorf("drop slot %s: %v", name, err)
			return
		}
		// The terminated session may still hold it for a moment.
		time.Sleep(50 * time.Millisecond)
	}
}

// maxPgName is the longest name PostgreSQL keeps of a slot (NAMEDATALEN-1).
const maxPgName = 63

// PgExec runs query on pool, failing t with the query on an error.
func PgExec(t testing.TB, pool *pgxpool.Pool, query string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(Context(t, time.Minute), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// PostgresLines reads a table as sorted lines of text: each row's values
// as PostgreSQL writes them (its text output), joined by sep, a NULL
// written as null.
func PostgresLines(t testing.TB, pool *pgxpool.Pool, table, sep, null string) []string {
	t.Helper()
	ctx := Context(t, time.Minute)
	rows, err := pool.Query(ctx, "SELECT * FROM "+PgIdent(table), pgx.QueryResultFormats{pgx.TextFormatCode})
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		raw := rows.RawValues()
		parts := make([]string, len(raw))
		for i, v := range raw {
			parts[i] = null
			if v != nil {
				parts[i] = string(v)
			}
		}
		out = append(out, strings.Join(parts, sep))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("postgres: read %s: %v", table, err)
	}
	sort.Strings(out)
	return out
}

// PostgresBin returns the directory of the PostgreSQL server's programs
// (initdb, postgres, pg_ctl) that testenv/postgres.sh installs, for a
// test that runs a server of its own, or skips/fails t when
// ETLD_TEST_PG_BIN is unset.
func PostgresBin(t testing.TB) string {
	t.Helper()
	return lookup(t, EnvPostgresBin, "PostgreSQL installation")
}

// pgConnString makes a keyword/value connection string.
func pgConnString(host string, port int, user, password, db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable", host, port, user, password, db)
}

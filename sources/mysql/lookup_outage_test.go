package mysql_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/mysql"
)

// lookupViaProxy makes a table of three customers and a lookup client of
// it that reaches the server through a proxy the test can take down.
func lookupViaProxy(t *testing.T, maxRetries int) (connector.Lookuper, *testenv.Proxy) {
	t.Helper()
	db, dsn := testenv.MySQL(t)
	name := testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, name VARCHAR(20))")
	testenv.Exec(t, db, "INSERT INTO `"+name+"` VALUES (1, 'ann'), (2, 'bob'), (3, 'cy')")
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.NewProxy(t, cfg.Addr)
	p.Up()
	cfg.Addr = p.Addr()
	src := newSource(t, mysql.Config{DSN: cfg.FormatDSN(), Table: name, Lookup: mysql.LookupConfig{MaxRetries: maxRetries}},
		testenv.Schema(t, "id BIGINT", "name STRING"), nil)
	lk, err := src.Lookuper([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lk.Close(context.Background()) })
	return lk, p
}

func lookupText(rows [][]row.Row) string {
	parts := make([]string, len(rows))
	for i, rs := range rows {
		parts[i] = fmt.Sprint(rs)
	}
	return strings.Join(parts, " ")
}

func keysOf(ids ...int64) [][]row.Value {
	out := make([][]row.Value, len(ids))
	for i, id := range ids {
		out[i] = []row.Value{row.BigIntValue(id)}
	}
	return out
}

// TestLookupWaitsForTheServer: a lookup made while the server is away is
// tried again until it is back, then answers as if nothing happened.
func TestLookupWaitsForTheServer(t *testing.T) {
	lk, p := lookupViaProxy(t, 0)
	ctx := testenv.Context(t, time.Minute)
	rows, err := lk.Lookup(ctx, keysOf(1, 4))
	if err != nil {
		t.Fatal(err)
	}
	if got := lookupText(rows); got != "[[1 ann]] []" {
		t.Fatalf("before the outage: %s", got)
	}

	p.Down()
	type result struct {
		rows [][]row.Row
		err  error
	}
	done := make(chan result, 1)
	go func() {
		rows, err := lk.Lookup(ctx, keysOf(3, 2))
		done <- result{rows, err}
	}()
	// Two connections turned away: the lookup is retrying.
	p.WaitRefused(t, p.Refused()+2)
	select {
	case r := <-done:
		t.Fatalf("the lookup returned while the server was away: %v, %v", r.rows, r.err)
	default:
	}
	p.Up()
	r := <-done
	if r.err != nil {
		t.Fatalf("after the outage: %v", r.err)
	}
	if got := lookupText(r.rows); got != "[[3 cy]] [[2 bob]]" {
		t.Fatalf("after the outage: %s", got)
	}
}

// TestLookupMaxRetries: with lookup.max_retries, a server that stays
// away fails the lookup with an error naming the table, not a hang.
func TestLookupMaxRetries(t *testing.T) {
	lk, p := lookupViaProxy(t, 2)
	p.Down()
	_, err := lk.Lookup(testenv.Context(t, time.Minute), keysOf(1))
	if err == nil {
		t.Fatal("a lookup against a server that is away succeeded")
	}
	if !strings.Contains(err.Error(), "mysql") || strings.Contains(err.Error(), "etld-test-pw") {
		t.Fatalf("error %q should name the mysql table and hide the password", err)
	}
}

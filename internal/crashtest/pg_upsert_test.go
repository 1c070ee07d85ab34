package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/etld/etld/internal/testenv"
)

// cdcUpsertPipeline is PostgreSQL CDC of one table straight into a MySQL
// upsert table keyed by id: no stateful operator between them, so a row
// the source hands on and never deletes stays in the sink.
func cdcUpsertPipeline(table, stop string) string {
	return fmt.Sprintf(`version: 1
name: pgcdc_upsert
sources:
  - name: shop
    type: postgres
    dsn: ${ETLD_PRIVATE_PG_DSN}
    table: public.orders
    slot: etld_crash_upsert
    create_slot: true
    create_publication: true
    fetch_size: 64
    %s
    schema:
      - id BIGINT
      - customer STRING
      - amount BIGINT
    key: [id]
sinks:
  - name: db
    from: shop
    type: mysql
    dsn: ${ETLD_CRASH_MYSQL_DSN}
    table: %s
    key: [id]
    create_table: true
`, stop, table)
}

// TestPostgresCDCUpsertKills kills the lives of PostgreSQL CDC -> MySQL
// upsert while a writer inserts, updates and deletes orders; most lives
// die in the snapshot (a table of 40000 rows read 64 at a time), so that
// restored runs resume it in new snapshots while rows a killed life wrote
// past its checkpoint are deleted meanwhile. A last life reads to the end
// of the log: the MySQL table must hold exactly the orders.
func TestPostgresCDCUpsertKills(t *testing.T) {
	rnd := seedOf(t, "postgres cdc upsert kills")
	kills := max(intEnv("ETLD_CRASH_KILLS", 20)/2, 1)
	mysqlDB, mysqlDSN := testenv.MySQL(t)
	p := testenv.StartPrivatePostgres(t)
	ctx := testenv.Context(t, 10*time.Minute)
	pg, err := pgx.Connect(ctx, p.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(context.Background())
	createShop(t, ctx, pg, "FULL", "DEFAULT", 40000)
	table := testenv.MySQLTable(t, mysqlDB, "")
	t.Setenv("ETLD_PRIVATE_PG_DSN", p.DSN)
	t.Setenv("ETLD_CRASH_MYSQL_DSN", mysqlDSN)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	file := filepath.Join(dir, "pgcdc.yaml")
	write := func(stop string) {
		if err := os.WriteFile(file, []byte(cdcUpsertPipeline(table, stop)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &shopWriter{dsn: p.DSN, rnd: rand.New(rand.NewPCG(rnd.Uint64(), 5)), nextOrder: 40001, nextRefund: 1}
	wctx, stopWriter := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.run(wctx)
	}()
	write("")
	restores := 0
	for life := 1; life <= kills; life++ {
		delay := 300*time.Millisecond + time.Duration(rnd.Int64N(int64(900*time.Millisecond)))
		res := runLife(t, file, state, childInterval, killAt{delay, waitsForCheckpoint(life-1, kills, restores)})
		restores += strings.Count(res.stderr, "restored checkpoint")
		if os.Getenv("ETLD_CRASH_VERBOSE") != "" {
			t.Logf("life %d: killed=%v, checkpoint %d", life, res.killed, latestID(state))
		}
		if !res.killed {
			t.Fatalf("life %d ended by itself (%v): an unbounded run must be killed\nstdout:\n%s\nstderr:\n%s", life, res.err, res.stdout, res.stderr)
		}
	}
	stopWriter()
	wg.Wait()
	if w.err != nil {
		t.Fatalf("writer: %v", w.err)
	}
	write("stop: latest")
	if res := runChild(t, file, state, 0); res.err != nil {
		t.Fatalf("the last run: %v\nstdout:\n%s\nstderr:\n%s", res.err, res.stdout, res.stderr)
	}
	t.Logf("%d kills, %d restores; the writer made %d transactions", kills, restores, w.txns)
	if restores == 0 {
		t.Error("no life restored a checkpoint: the kills tested nothing")
	}
	var want []string
	rows, err := pg.Query(ctx, "SELECT id || ', ' || customer || ', ' || amount FROM orders ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		want = append(want, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got := tableRows(t, mysqlDB, table); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("table %s has %d rows, the orders %d; differences:\n%s", table, len(got), len(want), diffSets(want, got))
	}
	t.Logf("table %s: %d rows, equal to the orders", table, len(want))
}

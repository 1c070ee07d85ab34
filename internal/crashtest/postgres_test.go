package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/etld/etld/internal/testenv"
)

// cdcPipeline is PostgreSQL CDC of two tables -> UNION ALL -> GROUP BY
// -> MySQL upsert: per customer, the count of orders and refunds and the
// orders' amounts less the refunds'. stop is "" or "stop: latest".
func cdcPipeline(table, stop, mode string) string {
	return fmt.Sprintf(`version: 1
name: pgcdc
sources:
  - name: shop
    type: postgres
    dsn: ${ETLD_PRIVATE_PG_DSN}
    tables: [public.orders, public.refunds]
    slot: etld_crash
    create_slot: true
    create_publication: true
    fetch_size: 64
    %s
    %s
    schema:
      - orders ROW<id BIGINT, customer STRING, amount BIGINT>
      - refunds ROW<id BIGINT, customer STRING, amount BIGINT>
      - tbl STRING METADATA FROM 'table_name'
      - k STRING METADATA FROM 'row_key'
    key: [tbl, k]
transforms:
  - name: moves
    sql: |
      SELECT orders.customer AS customer, orders.amount AS amount FROM shop WHERE orders IS NOT NULL
      UNION ALL
      SELECT refunds.customer AS customer, -refunds.amount AS amount FROM shop WHERE refunds IS NOT NULL
  - name: per_customer
    sql: SELECT customer, COUNT(*) AS n, SUM(amount) AS total FROM moves GROUP BY customer
sinks:
  - name: db
    from: per_customer
    type: mysql
    dsn: ${ETLD_CRASH_MYSQL_DSN}
    table: %s
    key: [customer]
    create_table: true
`, stop, mode, table)
}

// TestPostgresCDCKills runs the CDC pipeline in child processes killed
// with SIGKILL at random moments (20 by default, ETLD_CRASH_KILLS) while
// a writer keeps changing the source tables in transactions of several
// changes (inserts, updates that move rows between customers, deletes),
// and restarts the PostgreSQL server for a few seconds halfway; then the
// writer stops and a last run reads to the end of the log (stop: latest).
// The MySQL table must hold exactly the aggregate of the source tables:
// the source neither lost nor repeated a change across the kills (in the
// snapshot, mid-transaction, between checkpoint and confirmation) and
// the restart.
func TestPostgresCDCKills(t *testing.T) {
	postgresCDCKills(t, "FULL", "", intEnv("ETLD_CRASH_KILLS", 20))
}

// TestPostgresUpsertCDCKills is TestPostgresCDCKills over tables of the
// default replica identity (their updates and deletes log only the key)
// read with changelog_mode: upsert: the normalization's state of each
// key's row is restored with the source's position in every life, so
// that the aggregate still retracts exactly what it added. Half the
// kills, to keep make test short.
func TestPostgresUpsertCDCKills(t *testing.T) {
	postgresCDCKills(t, "DEFAULT", "changelog_mode: upsert", max(intEnv("ETLD_CRASH_KILLS", 20)/2, 1))
}

func postgresCDCKills(t *testing.T, identity, mode string, kills int) {
	rnd := seedOf(t, "postgres cdc kills "+identity)
	mysqlDB, mysqlDSN := testenv.MySQL(t)
	p := testenv.StartPrivatePostgres(t)
	ctx := testenv.Context(t, 10*time.Minute)
	pg, err := pgx.Connect(ctx, p.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(context.Background()) // the server's restart ends it
	// A snapshot of some size, which the first lives are killed in.
	createShop(t, ctx, pg, identity, identity, 3000)
	table := testenv.MySQLTable(t, mysqlDB, "")
	t.Setenv("ETLD_PRIVATE_PG_DSN", p.DSN)
	t.Setenv("ETLD_CRASH_MYSQL_DSN", mysqlDSN)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	file := filepath.Join(dir, "pgcdc.yaml")
	write := func(stop string) {
		if err := os.WriteFile(file, []byte(cdcPipeline(table, stop, mode)), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	w := &shopWriter{dsn: p.DSN, rnd: rand.New(rand.NewPCG(rnd.Uint64(), 5)), nextOrder: 3001, nextRefund: 1}
	wctx, stopWriter := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.run(wctx)
	}()

	write("")
	killed, restores := 0, 0
	restarted := false
	for life := 1; killed < kills; life++ {
		if life > 10*kills {
			t.Fatalf("%d lives for %d kills", life, killed)
		}
		delay := 300*time.Millisecond + time.Duration(rnd.Int64N(int64(900*time.Millisecond)))
		var restart sync.WaitGroup
		if killed == kills/2 && !restarted {
			// The server goes away mid-life for a few seconds: the life
			// must wait through it (and is killed after it).
			restarted = true
			down := time.Duration(1500+rnd.IntN(2000)) * time.Millisecond
			delay += down + 2*time.Second
			restart.Add(1)
			go func() {
				defer restart.Done()
				time.Sleep(400 * time.Millisecond) // into the life
				p.Restart(down)
			}()
		}
		res := runLife(t, file, state, childInterval, killAt{delay, waitsForCheckpoint(killed, kills, restores)})
		restart.Wait()
		restores += strings.Count(res.stderr, "restored checkpoint")
		if os.Getenv("ETLD_CRASH_VERBOSE") != "" {
			t.Logf("life %d: killed=%v, checkpoint %d", life, res.killed, latestID(state))
		}
		if !res.killed {
			t.Fatalf("life %d ended by itself (%v): an unbounded run must be killed\nstdout:\n%s\nstderr:\n%s", life, res.err, res.stdout, res.stderr)
		}
		killed++
	}
	stopWriter()
	wg.Wait()
	if w.err != nil {
		t.Fatalf("writer: %v", w.err)
	}
	// The last life reads to the end of the log and finishes.
	write("stop: latest")
	if res := runChild(t, file, state, 0); res.err != nil {
		t.Fatalf("the last run: %v\nstdout:\n%s\nstderr:\n%s", res.err, res.stdout, res.stderr)
	}
	t.Logf("%d kills, %d restores, a server restart; the writer made %d transactions", killed, restores, w.txns)
	if restores == 0 {
		t.Error("no life restored a checkpoint: the kills tested nothing")
	}
	want := shopAggregate(t, ctx, p.DSN)
	if got := tableRows(t, mysqlDB, table); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("table %s has %d rows, the source's aggregate %d:\n%s", table, len(got), len(want), diffLines(want, got))
	}
}

// createShop makes the shop's tables, orders and refunds (id, customer,
// amount), with these replica identities, and orders 1 to orders.
func createShop(t *testing.T, ctx context.Context, pg *pgx.Conn, ordersIdentity, refundsIdentity string, orders int) {
	t.Helper()
	for _, q := range []string{
		"CREATE TABLE orders (id bigint PRIMARY KEY, customer text NOT NULL, amount bigint NOT NULL)",
		"CREATE TABLE refunds (id bigint PRIMARY KEY, customer text NOT NULL, amount bigint NOT NULL)",
		"ALTER TABLE orders REPLICA IDENTITY " + ordersIdentity,
		"ALTER TABLE refunds REPLICA IDENTITY " + refundsIdentity,
		fmt.Sprintf("INSERT INTO orders SELECT i, 'c' || (i %% 13), i FROM generate_series(1, %d) i", orders),
	} {
		if _, err := pg.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// shopAggregate is the pipeline's result computed by PostgreSQL, in
// tableRows' form.
func shopAggregate(t *testing.T, ctx context.Context, dsn string) []string {
	t.Helper()
	pg, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(context.Background())
	rows, err := pg.Query(ctx, `SELECT customer || ', ' || count(*) || ', ' || sum(amount) FROM (
		SELECT customer, amount FROM orders UNION ALL SELECT customer, -amount FROM refunds) m
		GROUP BY customer ORDER BY customer`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// shopWriter changes the shop's tables until its context ends: each
// transaction a few inserts, updates (amounts, and customers: a row moves
// to another group) and deletes of orders and refunds. It reconnects
// while the server is away; a transaction whose COMMIT's answer was lost
// may or may not have committed, which the check reads from the tables
// either way.
type shopWriter struct {
	dsn                   string
	rnd                   *rand.Rand
	nextOrder, nextRefund int64
	txns                  int
	err                   error
}

func (w *shopWriter) run(ctx context.Context) {
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	for ctx.Err() == nil {
		if conn == nil || conn.IsClosed() {
			c, err := pgx.Connect(ctx, w.dsn)
			if err != nil {
				time.Sleep(50 * time.Millisecond) // the server is away
				continue
			}
			conn = c
		}
		err := w.txn(ctx, conn)
		var pe *pgconn.PgError
		switch {
		case err == nil:
			w.txns++
		case ctx.Err() != nil:
			return
		case errors.As(err, &pe) && !strings.HasPrefix(pe.Code, "57") && !strings.HasPrefix(pe.Code, "08"):
			w.err = err
			return
		default:
			conn.Close(context.Background())
			conn = nil
		}
		time.Sleep(time.Duration(w.rnd.IntN(8)) * time.Millisecond)
	}
}

func (w *shopWriter) txn(ctx context.Context, conn *pgx.Conn) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	customer := func() string { return fmt.Sprintf("c%d", w.rnd.IntN(13)) }
	for range 1 + w.rnd.IntN(6) {
		var q string
		var args []any
		switch w.rnd.IntN(7) {
		case 0, 1:
			q, args = "INSERT INTO orders VALUES ($1, $2, $3)", []any{w.nextOrder, customer(), 1 + w.rnd.IntN(500)}
			w.nextOrder++
		case 2:
			q, args = "UPDATE orders SET amount = amount + $2 WHERE id = $1", []any{1 + w.rnd.Int64N(w.nextOrder), w.rnd.IntN(50)}
		case 3:
			q, args = "UPDATE orders SET customer = $2 WHERE id = $1", []any{1 + w.rnd.Int64N(w.nextOrder), customer()}
		case 4:
			q, args = "DELETE FROM orders WHERE id = $1", []any{1 + w.rnd.Int64N(w.nextOrder)}
		case 5:
			q, args = "INSERT INTO refunds VALUES ($1, $2, $3)", []any{w.nextRefund, customer(), 1 + w.rnd.IntN(100)}
			w.nextRefund++
		default:
			q, args = "DELETE FROM refunds WHERE id = $1", []any{1 + w.rnd.Int64N(w.nextRefund)}
		}
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

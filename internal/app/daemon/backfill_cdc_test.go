package daemon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
)

// cdcHarness is serveHarness's daemon over a PostgreSQL table captured
// by logical replication (id, k, v) instead of a followed file, or with
// binlog a MariaDB table captured from its binlog: the GROUP BY of
// bfBase into a MySQL table, edited to bfEdited.
type cdcHarness struct {
	*harness
	// name is the pipeline's: a sink's fence in the target database is
	// by pipeline, so each test has its own.
	name    string
	binlog  bool
	pool    *pgxpool.Pool
	db      *sql.DB
	src     string
	slot    string
	table   string
	reached chan string
	release chan error
}

func newCDCHarness(t *testing.T, binlog bool) *cdcHarness {
	db, dsn := testenv.MySQL(t)
	t.Setenv("DAEMON_BACKFILL_DSN", dsn)
	h := &cdcHarness{harness: newHarness(t), name: testenv.UniqueName(t, "bf"), binlog: binlog, db: db, reached: make(chan string), release: make(chan error)}
	if binlog {
		h.src = testenv.MySQLTable(t, db, "")
		testenv.Exec(t, db, "CREATE TABLE `"+h.src+"` (id BIGINT PRIMARY KEY, k VARCHAR(16) NOT NULL, v BIGINT NOT NULL)")
		var vals []string
		for i := 1; i <= 400; i++ {
			vals = append(vals, fmt.Sprintf("(%d, 'k%d', %d)", i, i%23, (i*37)%1000))
		}
		testenv.Exec(t, db, "INSERT INTO `"+h.src+"` VALUES "+strings.Join(vals, ","))
	} else {
		pool, pgDSN := testenv.Postgres(t)
		t.Setenv("DAEMON_BACKFILL_PG", pgDSN)
		h.pool = pool
		h.src, h.slot = testenv.PostgresTable(t, pool, ""), testenv.PostgresSlot(t, pool)
		t.Cleanup(func() { testenv.DropPostgresSlot(t, pool, h.backfillSlot()) })
		testenv.PgExec(t, pool, "CREATE TABLE "+testenv.PgIdent(h.src)+" (id bigint PRIMARY KEY, k text NOT NULL, v bigint NOT NULL)")
		testenv.PgExec(t, pool, "ALTER TABLE "+testenv.PgIdent(h.src)+" REPLICA IDENTITY FULL")
		testenv.PgExec(t, pool, "INSERT INTO "+testenv.PgIdent(h.src)+" SELECT i, 'k' || (i % 23), (i * 37) % 1000 FROM generate_series(1, 400) i")
	}
	h.table = h.newTable("")
	h.sup.hook = func(phase string) error {
		h.reached <- phase
		return <-h.release
	}
	h.write("g.yaml", h.yaml(bfBase, h.slot, h.table, ""))
	h.reload()
	h.waitState("g.yaml", Running)
	h.waitTable(h.table, h.want(false))
	testenv.Eventually(t, 20*time.Second, "a checkpoint", func() error {
		store, err := checkpoint.OpenExisting(filepath.Join(h.dir, ".state"), h.name)
		if err != nil {
			return err
		}
		if cp, err := store.Latest(); err != nil || cp == nil {
			return fmt.Errorf("none yet (%v)", err)
		}
		return nil
	})
	return h
}

func (h *cdcHarness) newTable(suffix string) string {
	table := testenv.MySQLTable(h.t, h.db, suffix)
	testenv.Exec(h.t, h.db, "CREATE TABLE "+table+" (k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT, m BIGINT)")
	return table
}

func (h *cdcHarness) backfillSlot() string {
	return h.slot[:min(len(h.slot), 63-len("_backfill"))] + "_backfill"
}

// yaml is the pipeline of query over the captured table read from slot
// into table; extra goes under the source.
func (h *cdcHarness) yaml(query, slot, table, extra string) string {
	source := fmt.Sprintf("    type: postgres\n    dsn: ${DAEMON_BACKFILL_PG}\n    table: %s\n    slot: %s\n    create_slot: true\n    create_publication: true\n", h.src, slot)
	if h.binlog {
		source = fmt.Sprintf("    type: mysql\n    mode: cdc\n    dsn: ${DAEMON_BACKFILL_DSN}\n    table: %s\n", h.src)
	}
	return fmt.Sprintf(`version: 1
name: %s
checkpoint_interval: 20ms
backfill: true
sources:
  - name: src
%s    schema: [id BIGINT, k STRING, v BIGINT]
    key: [id]
%s
transforms:
  - name: q
    sql: %s
sinks:
  - name: out
    from: q
    type: mysql
    dsn: ${DAEMON_BACKFILL_DSN}
    table: %s
`, h.name, source, extra, query, table)
}

// want is the groups of the captured table as it is now (m null
// unless withMax), as testenv.TableLines reads the target.
func (h *cdcHarness) want(withMax bool) []string {
	h.t.Helper()
	m := "'null'"
	if withMax {
		m = "max(v)"
	}
	var out []string
	if h.binlog {
		rows, err := h.db.Query("SELECT CONCAT(k, ',', COUNT(*), ',', SUM(v), ',', " + m + ") FROM `" + h.src + "` GROUP BY k")
		if err != nil {
			h.t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				h.t.Fatal(err)
			}
			out = append(out, s)
		}
	} else {
		rows, err := h.pool.Query(testenv.Context(h.t, time.Minute), "SELECT k || ',' || count(*) || ',' || sum(v) || ',' || "+m+"::text FROM "+testenv.PgIdent(h.src)+" GROUP BY k")
		if err != nil {
			h.t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				h.t.Fatal(err)
			}
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func (h *cdcHarness) waitTable(table string, want []string) {
	h.t.Helper()
	testenv.Eventually(h.t, 30*time.Second, "the table", func() error {
		got := testenv.TableLines(h.t, h.db, table, ",", "null")
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("%d rows, want %d: %.200q", len(got), len(want), got)
		}
		return nil
	})
}

// change makes the i-th change of the captured table, a transaction of
// its own: an insert, an update of a value or of a group, a delete.
func (h *cdcHarness) change(ctx context.Context, i int) error {
	t := testenv.PgIdent(h.src)
	if h.binlog {
		t = "`" + h.src + "`"
	}
	var q string
	switch i % 4 {
	case 0:
		q = fmt.Sprintf("INSERT INTO %s VALUES (%d, 'k%d', %d)", t, 1000+i, i%29, (i*53)%1000)
	case 1:
		q = fmt.Sprintf("UPDATE %s SET v = v + 500 WHERE id = %d", t, 1+(i*7)%400)
	case 2:
		q = fmt.Sprintf("UPDATE %s SET k = 'moved%d' WHERE id = %d", t, i%3, 1+(i*11)%400)
	default:
		q = fmt.Sprintf("DELETE FROM %s WHERE id = %d", t, 1+(i*13)%400)
	}
	if h.binlog {
		_, err := h.db.ExecContext(ctx, q)
		return err
	}
	_, err := h.pool.Exec(ctx, q)
	return err
}

// changes makes changes [from, to).
func (h *cdcHarness) changes(from, to int) {
	h.t.Helper()
	for i := from; i < to; i++ {
		if err := h.change(testenv.Context(h.t, time.Minute), i); err != nil {
			h.t.Fatal(err)
		}
	}
}

// changer keeps changing the table, from change from on, until the
// function returned is called; it returns a number after every change
// made.
func (h *cdcHarness) changer(from int) func() int {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	i := from
	wg.Go(func() {
		for ; ctx.Err() == nil; i++ {
			if err := h.change(ctx, i); err != nil {
				if ctx.Err() == nil {
					h.t.Errorf("change %d: %v", i, err)
				}
				return
			}
		}
	})
	stop := func() int {
		cancel()
		wg.Wait()
		// The change the cancel cut may have been made: the next one
		// is after it (want reads the table as it is).
		return i + 1
	}
	h.t.Cleanup(func() { stop() })
	return stop
}

func (h *cdcHarness) at(phase string) {
	h.t.Helper()
	select {
	case got := <-h.reached:
		if got != phase {
			h.t.Fatalf("backfill at phase %q, want %q", got, phase)
		}
	case <-time.After(30 * time.Second):
		h.t.Fatalf("backfill did not reach phase %q: %+v\n%s", phase, h.status("g.yaml").Backfill, h.logs.String())
	}
}

// slotGone waits until the backfill's slot is gone (a binlog capture
// makes none).
func (h *cdcHarness) slotGone(when string) {
	h.t.Helper()
	if h.binlog {
		return
	}
	testenv.Eventually(h.t, 20*time.Second, "the backfill's slot gone "+when, func() error {
		var n int
		if err := h.pool.QueryRow(testenv.Context(h.t, time.Minute), "SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", h.backfillSlot()).Scan(&n); err != nil {
			return err
		}
		if n != 0 {
			return fmt.Errorf("slot %s is there", h.backfillSlot())
		}
		return nil
	})
}

// fromScratch runs the edited pipeline from nothing (a slot of its own,
// no state, up to the WAL's end) into a new table and returns its rows.
func (h *cdcHarness) fromScratch() []string {
	h.t.Helper()
	fresh := h.newTable("_fresh")
	slot := ""
	if !h.binlog {
		slot = testenv.PostgresSlot(h.t, h.pool)
	}
	text := h.yaml(bfEdited, slot, fresh, "    stop: latest")
	p, err := h.sup.opt.Load(filepath.Join(h.t.TempDir(), "fresh.yaml"), []byte(text))
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := p.Run(testenv.Context(h.t, time.Minute), pipeline.RunOptions{}); err != nil {
		h.t.Fatal(err)
	}
	got := testenv.TableLines(h.t, h.db, fresh, ",", "null")
	slices.Sort(got)
	return got
}

// An edit of a CDC pipeline backfilled while the old version serves and
// the table keeps changing (inserts, updates, deletes during the replay
// and the follow): the replay reads a fresh snapshot, the follow waits
// for a checkpoint of the old version past it and reads the backfill's
// slot from there; the final table, changes after the take-over
// included, equals the edited query over the table and a from-scratch
// run of the edited pipeline; the backfill's slot is gone.
func TestBackfillCDCWhileServing(t *testing.T) {
	cdcWhileServing(t, newCDCHarness(t, false))
}

// TestBackfillBinlogWhileServing is TestBackfillCDCWhileServing over
// MariaDB's binlog.
func TestBackfillBinlogWhileServing(t *testing.T) {
	cdcWhileServing(t, newCDCHarness(t, true))
}

func cdcWhileServing(t *testing.T, h *cdcHarness) {
	stop := h.changer(0)
	h.write("g.yaml", h.yaml(bfEdited, h.slot, h.table, ""))
	if res := baseNames(h.reload()); !slices.Equal(res.Backfilling, []string{"g.yaml"}) {
		t.Fatalf("reload = %+v, want g.yaml backfilling", res)
	}
	h.at(pipeline.PhaseWaiting)
	next := stop()
	if next < 2 {
		t.Fatal("no change of the table during the replay and the follow")
	}
	st := h.status("g.yaml")
	if st.State != Backfilling || st.Backfill == nil || !st.Backfill.Serving || st.Backfill.RowsReplayed == 0 {
		t.Fatalf("status while backfilling: state %s, backfill %+v", st.State, st.Backfill)
	}
	// The old version serves: what changed reaches its table.
	h.changes(next, next+40)
	h.waitTable(h.table, h.want(false))
	h.release <- nil
	h.at(pipeline.PhaseCatchUp)
	h.release <- nil
	testenv.Eventually(t, 30*time.Second, "the edited version running", func() error {
		if st := h.status("g.yaml"); st.State != Running || st.Backfill != nil || st.ReloadError != "" {
			return fmt.Errorf("state %s, backfill %+v, reload error %q", st.State, st.Backfill, st.ReloadError)
		}
		return nil
	})
	h.slotGone("after the backfill")
	h.changes(next+40, next+80)
	want := h.want(true)
	h.waitTable(h.table, want)
	if fresh := h.fromScratch(); !slices.Equal(fresh, want) {
		t.Fatalf("a from-scratch run of the edited pipeline gives\n%q\nnot\n%q", fresh, want)
	}
	t.Logf("%d changes during the replay and the follow", next)
}

// The backfill's slot is dropped when a backfill fails (the old version
// runs on), when a revert cancels it, and when a process killed during
// the catch-up starts again (the edited file then backfills at its
// start, from the state the old version left).
func TestBackfillCDCSlotGone(t *testing.T) {
	h := newCDCHarness(t, false)
	h.write("g.yaml", h.yaml(bfEdited, h.slot, h.table, "# try 1"))
	h.reload()
	h.at(pipeline.PhaseWaiting)
	h.release <- errors.New("the target is gone")
	testenv.Eventually(t, 20*time.Second, "the old version running with the reason", func() error {
		if st := h.status("g.yaml"); st.State != Running || st.Backfill != nil || !strings.Contains(st.ReloadError, "the target is gone") {
			return fmt.Errorf("state %s, backfill %+v, reload error %q", st.State, st.Backfill, st.ReloadError)
		}
		return nil
	})
	h.slotGone("after a failed backfill")

	h.write("g.yaml", h.yaml(bfEdited, h.slot, h.table, "# try 2"))
	h.reload()
	h.at(pipeline.PhaseWaiting)
	h.write("g.yaml", h.yaml(bfBase, h.slot, h.table, ""))
	h.reload()
	h.release <- nil
	h.slotGone("after a cancelled backfill")
	h.changes(0, 40)
	h.waitTable(h.table, h.want(false))

	h.write("g.yaml", h.yaml(bfEdited, h.slot, h.table, ""))
	h.reload()
	h.at(pipeline.PhaseWaiting)
	h.release <- nil
	h.at(pipeline.PhaseCatchUp)
	h.release <- errCrash
	testenv.Eventually(t, 20*time.Second, "the crashed backfill gone", func() error {
		if st := h.status("g.yaml"); st.Backfill != nil {
			return fmt.Errorf("backfill %+v", st.Backfill)
		}
		return nil
	})
	var n int
	if err := h.pool.QueryRow(testenv.Context(t, time.Minute), "SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", h.backfillSlot()).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the killed backfill left %d slots (%v): the test does not kill it where it means to", n, err)
	}
	h.restart()
	h.sup.hook = nil
	h.changes(40, 80)
	h.reload()
	testenv.Eventually(t, 30*time.Second, "the edited version running", func() error {
		if st := h.status("g.yaml"); st.State != Running || st.Backfill != nil {
			return fmt.Errorf("state %s, backfill %+v", st.State, st.Backfill)
		}
		return nil
	})
	h.slotGone("after the backfill at the restart")
	h.changes(80, 120)
	h.waitTable(h.table, h.want(true))
}

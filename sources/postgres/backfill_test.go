package postgres_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/sources/postgres"
)

// The backfill tests' queries: the edit adds an aggregate.
const (
	cdcBase   = "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM src GROUP BY k"
	cdcEdited = "SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM src GROUP BY k"
)

// cdcBackfill is a captured table (id, k, v) of the shared server, a
// PostgreSQL target of its groups and a state directory.
type cdcBackfill struct {
	t *testing.T
	// name is the pipeline's: a sink's fence in the target database is
	// by pipeline, so each test has its own.
	name   string
	f      *fixture
	target string
	dir    string
	state  string
}

func newCDCBackfill(t *testing.T) *cdcBackfill {
	f := newFixture(t, "id bigint PRIMARY KEY, k text NOT NULL, v int NOT NULL")
	b := &cdcBackfill{t: t, f: f, dir: t.TempDir(), name: testenv.UniqueName(t, "bf")}
	b.state = filepath.Join(b.dir, "state")
	b.target = b.newTarget()
	// Dropped at the end whatever happens; the tests check it is gone
	// before.
	t.Cleanup(func() { testenv.DropPostgresSlot(t, f.pool, b.backfillSlot()) })
	t.Setenv("ETLD_PG_TEST_DSN", f.dsn)
	f.exec(t, "INSERT INTO $T SELECT i, 'k' || (i % 23), (i * 37) % 1000 FROM generate_series(1, 400) i")
	return b
}

func (b *cdcBackfill) newTarget() string {
	target := testenv.PostgresTable(b.t, b.f.pool, "")
	exec(b.t, b.f.pool, "CREATE TABLE "+ident(target)+" (k text PRIMARY KEY, n bigint NOT NULL, s bigint, m bigint)")
	return target
}

// backfillSlot is the name of the slot of the pipeline's backfills.
func (b *cdcBackfill) backfillSlot() string {
	return b.f.slot[:min(len(b.f.slot), 63-len("_backfill"))] + "_backfill"
}

// yaml is the pipeline of query into target, reading slot.
func (b *cdcBackfill) yaml(query, slot, target, extra string) string {
	return fmt.Sprintf(`version: 1
name: %s
sources:
  - name: src
    type: postgres
    dsn: ${ETLD_PG_TEST_DSN}
    table: %s
    slot: %s
    create_slot: true
    create_publication: true
    schema: [id BIGINT, k STRING, v INT]
    key: [id]
%s
transforms:
  - name: q
    sql: %s
sinks:
  - name: out
    from: q
    type: postgres
    dsn: ${ETLD_PG_TEST_DSN}
    table: %s
`, b.name, b.f.table, slot, extra, query, target)
}

func (b *cdcBackfill) load(query string) *pipeline.Pipeline {
	return pipefile.Load(b.t, pipeline.Env{Registry: builtin.Registry()}, b.dir, b.yaml(query, b.f.slot, b.target, ""))
}

// want is the groups of the source table as it is, m null unless
// withMax.
func (b *cdcBackfill) want(withMax bool) []string {
	b.t.Helper()
	m := "'NULL'"
	if withMax {
		m = "max(v)::text"
	}
	rows, err := b.f.pool.Query(testenv.Context(b.t, time.Minute), "SELECT k || '|' || count(*) || '|' || sum(v) || '|' || "+m+" FROM "+ident(b.f.table)+" GROUP BY k")
	if err != nil {
		b.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			b.t.Fatal(err)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// runUntil runs p with opt until the target equals want() (evaluated
// once the run began), then stops it.
func (b *cdcBackfill) runUntil(p *pipeline.Pipeline, opt pipeline.RunOptions, want func() []string) {
	b.t.Helper()
	stop := make(chan struct{})
	opt.Stop, opt.StateDir, opt.CheckpointInterval = stop, b.state, 50*time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(testenv.Context(b.t, 2*time.Minute), opt)
		done <- err
	}()
	b.waitTableOr(done, want)
	close(stop)
	if err := <-done; err != nil {
		b.t.Fatal(err)
	}
}

// waitTableOr waits until the target holds want(), and fails at once
// when the run ends first.
func (b *cdcBackfill) waitTableOr(done chan error, want func() []string) {
	b.t.Helper()
	testenv.Eventually(b.t, time.Minute, "the target table", func() error {
		select {
		case err := <-done:
			b.t.Fatalf("the run ended: %v", err)
		default:
		}
		if got, w := testenv.PostgresLines(b.t, b.f.pool, b.target, "|", "NULL"), want(); !slices.Equal(got, w) {
			return fmt.Errorf("%d rows, want %d: %.200q", len(got), len(w), got)
		}
		return nil
	})
}

// slotGone fails the test when the backfill's slot is there.
func (b *cdcBackfill) slotGone(when string) {
	b.t.Helper()
	var n int
	if err := b.f.pool.QueryRow(testenv.Context(b.t, time.Minute), "SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", b.backfillSlot()).Scan(&n); err != nil {
		b.t.Fatal(err)
	}
	if n != 0 {
		b.t.Errorf("%s: the backfill's slot %s is still there", when, b.backfillSlot())
	}
}

// changes makes n changes of the table, one transaction each: inserts,
// updates of values and of groups, deletes; i numbers them across calls.
func (b *cdcBackfill) changes(ctx context.Context, i int) error {
	var q string
	switch i % 4 {
	case 0:
		q = fmt.Sprintf("INSERT INTO %s VALUES (%d, 'k%d', %d)", ident(b.f.table), 1000+i, i%29, (i*53)%1000)
	case 1:
		q = fmt.Sprintf("UPDATE %s SET v = v + 500 WHERE id = %d", ident(b.f.table), 1+(i*7)%400)
	case 2:
		q = fmt.Sprintf("UPDATE %s SET k = 'moved%d' WHERE id = %d", ident(b.f.table), i%3, 1+(i*11)%400)
	case 3:
		q = fmt.Sprintf("DELETE FROM %s WHERE id = %d", ident(b.f.table), 1+(i*13)%400)
	}
	_, err := b.f.pool.Exec(ctx, q)
	return err
}

// changer keeps changing the table from the call until the function
// returned is called, which returns how many changes it made.
func (b *cdcBackfill) changer(from int) func() int {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	n := 0
	wg.Go(func() {
		for i := from; ctx.Err() == nil; i++ {
			if err := b.changes(ctx, i); err != nil {
				if ctx.Err() == nil {
					b.t.Errorf("change %d: %v", i, err)
				}
				return
			}
			n++
		}
	})
	stop := func() int {
		cancel()
		wg.Wait()
		return n
	}
	b.t.Cleanup(func() { stop() })
	return stop
}

// An edit adding an aggregate to a CDC GROUP BY, backfilled by a one-shot
// run (`etld run --backfill`) while the table keeps changing: the
// backfill replays a fresh snapshot, runs the old version until its
// checkpoint passes the snapshot, catches up with it over the backfill's
// slot and gives the sink the differences; the run after it goes on from
// there. The target ends equal to a from-scratch run of the edited
// pipeline, and the backfill's slot is gone.
func TestBackfillOneShot(t *testing.T) {
	b := newCDCBackfill(t)
	b.runUntil(b.load(cdcBase), pipeline.RunOptions{}, func() []string { return b.want(false) })
	// Changes while nothing runs: the snapshot holds them, and the old
	// version reads them before it passes it.
	for i := range 40 {
		if err := b.changes(testenv.Context(t, time.Minute), i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.load(cdcEdited).Run(testenv.Context(t, time.Minute), pipeline.RunOptions{StateDir: b.state}); err == nil || !strings.Contains(err.Error(), "--backfill") {
		t.Fatalf("the edit without --backfill: %v", err)
	}
	var report *pipeline.BackfillReport
	var stopChanges func() int
	made := 0
	opt := pipeline.RunOptions{
		Backfill: true,
		Backfilling: func(progress func() pipeline.BackfillProgress) {
			if progress != nil {
				// As the backfill begins: changes during the replay, the
				// old version's run and the catch-up.
				stopChanges = b.changer(40)
			}
		},
		Backfilled: func(r *pipeline.BackfillReport) {
			report = r
			made = stopChanges()
		},
	}
	b.runUntil(b.load(cdcEdited), opt, func() []string { return b.want(true) })
	if report == nil || len(report.Sinks) != 1 || report.Sinks[0].Upserted == 0 || report.Stored != report.Checkpoint+1 {
		t.Fatalf("report: %+v", report)
	}
	if made == 0 {
		t.Fatal("no change of the table while the backfill ran: the test does not test that")
	}
	t.Logf("%d changes during the backfill; %s", made, report)
	b.slotGone("after the backfill")
	b.fromScratch()
}

// fromScratch runs the edited pipeline from nothing (a slot of its own,
// no state, up to the WAL's end) into a new table, and checks that it
// equals the target.
func (b *cdcBackfill) fromScratch() {
	t := b.t
	fresh := b.newTarget()
	slot := testenv.PostgresSlot(t, b.f.pool)
	text := b.yaml(cdcEdited, slot, fresh, "    stop: latest")
	pipefile.Run(t, testenv.Context(t, time.Minute), pipeline.Env{Registry: builtin.Registry()}, t.TempDir(), text)
	got, want := testenv.PostgresLines(t, b.f.pool, b.target, "|", "NULL"), testenv.PostgresLines(t, b.f.pool, fresh, "|", "NULL")
	if !slices.Equal(got, want) {
		t.Fatalf("the backfilled table\n%q\ndiffers from a from-scratch run's\n%q", got, want)
	}
}

// A one-shot backfill that fails (the target lacks the added column)
// or is cancelled leaves the old state and no backfill slot; a backfill
// killed before its end (its slot left behind, its replay directory
// too) has its slot dropped at the pipeline's next start.
func TestBackfillSlotNeverLeaks(t *testing.T) {
	b := newCDCBackfill(t)
	b.runUntil(b.load(cdcBase), pipeline.RunOptions{}, func() []string { return b.want(false) })

	// Cancelled as it begins.
	ctx, cancel := context.WithCancel(testenv.Context(t, time.Minute))
	_, err := b.load(cdcEdited).Run(ctx, pipeline.RunOptions{StateDir: b.state, Backfill: true, Backfilling: func(p func() pipeline.BackfillProgress) {
		if p != nil {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled backfill: %v", err)
	}
	b.slotGone("after a cancelled backfill")

	// Failed: the sink's table has no column m.
	exec(t, b.f.pool, "ALTER TABLE "+ident(b.target)+" DROP COLUMN m")
	_, err = b.load(cdcEdited).Run(testenv.Context(t, time.Minute), pipeline.RunOptions{StateDir: b.state, Backfill: true})
	if err == nil {
		t.Fatal("a backfill into a table without the added column went through")
	}
	b.slotGone("after a failed backfill")
	exec(t, b.f.pool, "ALTER TABLE "+ident(b.target)+" ADD COLUMN m bigint")

	// Killed: what a dead backfill leaves, made by hand: its slot and its
	// replay directory. The unedited pipeline's next start drops both.
	exec(t, b.f.pool, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", b.backfillSlot())
	left := filepath.Join(b.state, b.name, ".backfill-dead")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	b.f.exec(t, "UPDATE $T SET v = v + 1 WHERE id < 10")
	b.runUntil(b.load(cdcBase), pipeline.RunOptions{}, func() []string { return b.want(false) })
	b.slotGone("after the next start")
	if ok, _ := filepath.Glob(left); len(ok) != 0 {
		t.Errorf("the dead backfill's directory is still there")
	}
}

// A CDC source with a watermark is refused for a backfill: a snapshot
// holds the table's rows, not the history of changes whose commit times
// the running version's event time followed.
func TestBackfillRefusesEventTime(t *testing.T) {
	b := newCDCBackfill(t)
	yaml := func(query string) string {
		text := b.yaml(query, b.f.slot, b.target, "")
		text = strings.Replace(text, "schema: [id BIGINT, k STRING, v INT]", "schema: [id BIGINT, k STRING, v INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'op_ts']", 1)
		return strings.Replace(text, "    key: [id]\n", "    key: [id]\n    watermark: ts - INTERVAL '1' SECOND\n", 1)
	}
	env := pipeline.Env{Registry: builtin.Registry()}
	b.runUntil(pipefile.Load(t, env, b.dir, yaml(cdcBase)), pipeline.RunOptions{}, func() []string { return b.want(false) })
	err := pipefile.Load(t, env, b.dir, yaml(cdcEdited)).CheckBackfill(b.state)
	if err == nil || !strings.Contains(err.Error(), "event time (its watermark) over that history cannot be rebuilt") || !strings.Contains(err.Error(), "p.yaml:") {
		t.Fatalf("backfill of a CDC source with a watermark: %v", err)
	}
}

// ComparePositions orders positions of different runs by the
// transactions they cover: a point between transactions, a number of
// changes into one (a transaction's commit LSN is at or after the end of
// the one before), and a position still in its snapshot before all;
// positions of other tables do not compare.
func TestComparePositions(t *testing.T) {
	s := build(t, postgres.Config{DSN: "postgres://u:p@127.0.0.1:5432/db", Table: "t", Slot: "s"}, nil, "id BIGINT")
	pos := func(phase, done, txn string, handed int) []byte {
		return fmt.Appendf(nil, `{"phase":%q,"slot":"s","tables":[{"name":"public.t"}],"done":%q,"txn":%q,"handed":%d}`, phase, done, txn, handed)
	}
	ordered := [][]byte{
		pos("snapshot", "", "", 0),
		pos("stream", "0/100", "", 0),
		pos("stream", "0/100", "0/180", 2),
		pos("stream", "0/100", "0/180", 3),
		pos("stream", "0/1A0", "", 0),
		pos("stream", "1/0", "", 0),
	}
	for i, a := range ordered {
		for j, b := range ordered {
			c, err := s.ComparePositions(a, b)
			if err != nil {
				t.Fatal(err)
			}
			if want := cmp.Compare(i, j); c != want && !(i == 0 && j == 0) {
				t.Errorf("compare %s with %s = %d, want %d", a, b, c, want)
			}
		}
	}
	other := []byte(`{"phase":"stream","slot":"s","tables":[{"name":"public.u"}],"done":"0/100"}`)
	if _, err := s.ComparePositions(ordered[1], other); err == nil {
		t.Error("positions of other tables compared")
	}
}

package mysql_test

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
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
	"github.com/etld/etld/sources/mysql"
)

// binlogBackfill is a captured table (id, k, v) of the test server, a
// MySQL table of its groups, and a state directory.
type binlogBackfill struct {
	t *testing.T
	// name is the pipeline's: a sink's fence in the target database is
	// by pipeline, so each test has its own.
	name   string
	db     *sql.DB
	src    string
	target string
	dir    string
}

func newBinlogBackfill(t *testing.T) *binlogBackfill {
	db, dsn := testenv.MySQL(t)
	t.Setenv("BINLOG_BACKFILL_DSN", dsn)
	b := &binlogBackfill{t: t, db: db, dir: t.TempDir(), name: testenv.UniqueName(t, "bf")}
	b.src = testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE `"+b.src+"` (id BIGINT PRIMARY KEY, k VARCHAR(16) NOT NULL, v BIGINT NOT NULL)")
	var vals []string
	for i := 1; i <= 400; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'k%d', %d)", i, i%23, (i*37)%1000))
	}
	testenv.Exec(t, db, "INSERT INTO `"+b.src+"` VALUES "+strings.Join(vals, ","))
	b.target = b.newTarget()
	return b
}

func (b *binlogBackfill) newTarget() string {
	target := testenv.MySQLTable(b.t, b.db, "")
	testenv.Exec(b.t, b.db, "CREATE TABLE `"+target+"` (k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT, m BIGINT)")
	return target
}

func (b *binlogBackfill) yaml(query, target, extra string) string {
	return fmt.Sprintf(`version: 1
name: %s
sources:
  - name: src
    type: mysql
    mode: cdc
    dsn: ${BINLOG_BACKFILL_DSN}
    table: %s
    schema: [id BIGINT, k STRING, v BIGINT]
    key: [id]
%s
transforms:
  - name: q
    sql: %s
sinks:
  - name: out
    from: q
    type: mysql
    dsn: ${BINLOG_BACKFILL_DSN}
    table: %s
`, b.name, b.src, extra, query, target)
}

func (b *binlogBackfill) load(query string) *pipeline.Pipeline {
	return pipefile.Load(b.t, pipeline.Env{Registry: builtin.Registry()}, b.dir, b.yaml(query, b.target, ""))
}

// want is the groups of the captured table as it is (m null unless
// withMax), as testenv.TableLines reads the target.
func (b *binlogBackfill) want(withMax bool) []string {
	b.t.Helper()
	m := "'null'"
	if withMax {
		m = "MAX(v)"
	}
	rows, err := b.db.Query("SELECT CONCAT(k, ',', COUNT(*), ',', SUM(v), ',', " + m + ") FROM `" + b.src + "` GROUP BY k")
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

func (b *binlogBackfill) lines(table string) []string {
	got := testenv.TableLines(b.t, b.db, table, ",", "null")
	slices.Sort(got)
	return got
}

// runUntil runs p with opt until the target equals want(), then stops
// it.
func (b *binlogBackfill) runUntil(p *pipeline.Pipeline, opt pipeline.RunOptions, want func() []string) {
	b.t.Helper()
	stop := make(chan struct{})
	opt.Stop, opt.StateDir, opt.CheckpointInterval = stop, filepath.Join(b.dir, "state"), 50*time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(testenv.Context(b.t, 2*time.Minute), opt)
		done <- err
	}()
	testenv.Eventually(b.t, time.Minute, "the target table", func() error {
		select {
		case err := <-done:
			b.t.Fatalf("the run ended: %v", err)
		default:
		}
		if got, w := b.lines(b.target), want(); !slices.Equal(got, w) {
			return fmt.Errorf("%d rows, want %d: %.200q", len(got), len(w), got)
		}
		return nil
	})
	close(stop)
	if err := <-done; err != nil {
		b.t.Fatal(err)
	}
}

// change makes the i-th change of the captured table.
func (b *binlogBackfill) change(ctx context.Context, i int) error {
	var q string
	switch i % 4 {
	case 0:
		q = fmt.Sprintf("INSERT INTO `%s` VALUES (%d, 'k%d', %d)", b.src, 1000+i, i%29, (i*53)%1000)
	case 1:
		q = fmt.Sprintf("UPDATE `%s` SET v = v + 500 WHERE id = %d", b.src, 1+(i*7)%400)
	case 2:
		q = fmt.Sprintf("UPDATE `%s` SET k = 'moved%d' WHERE id = %d", b.src, i%3, 1+(i*11)%400)
	default:
		q = fmt.Sprintf("DELETE FROM `%s` WHERE id = %d", b.src, 1+(i*13)%400)
	}
	_, err := b.db.ExecContext(ctx, q)
	return err
}

// changer keeps changing the table until the function returned is
// called, which returns how many changes it made.
func (b *binlogBackfill) changer(from int) func() int {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	n := 0
	wg.Go(func() {
		for i := from; ctx.Err() == nil; i++ {
			if err := b.change(ctx, i); err != nil {
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

// TestBinlogBackfillOneShot is the PostgreSQL source's
// TestBackfillOneShot over the binlog: an edit adding an aggregate to a
// GROUP BY of a captured table, backfilled by `etld run --backfill`
// while the table keeps changing, ends equal to a from-scratch run of
// the edited pipeline.
func TestBinlogBackfillOneShot(t *testing.T) {
	b := newBinlogBackfill(t)
	b.runUntil(b.load(bfBaseSQL), pipeline.RunOptions{}, func() []string { return b.want(false) })
	for i := range 40 {
		if err := b.change(testenv.Context(t, time.Minute), i); err != nil {
			t.Fatal(err)
		}
	}
	var report *pipeline.BackfillReport
	var stopChanges func() int
	made := 0
	opt := pipeline.RunOptions{
		Backfill: true,
		Backfilling: func(progress func() pipeline.BackfillProgress) {
			if progress != nil {
				stopChanges = b.changer(40)
			}
		},
		Backfilled: func(r *pipeline.BackfillReport) {
			report = r
			made = stopChanges()
		},
	}
	b.runUntil(b.load(bfEditedSQL), opt, func() []string { return b.want(true) })
	if report == nil || len(report.Sinks) != 1 || report.Sinks[0].Upserted == 0 {
		t.Fatalf("report: %+v", report)
	}
	if made == 0 {
		t.Fatal("no change of the table while the backfill ran: the test does not test that")
	}
	t.Logf("%d changes during the backfill; %s", made, report)
	fresh := b.newTarget()
	pipefile.Run(t, testenv.Context(t, time.Minute), pipeline.Env{Registry: builtin.Registry()}, t.TempDir(), b.yaml(bfEditedSQL, fresh, "    stop: latest"))
	if got, want := b.lines(b.target), b.lines(fresh); !slices.Equal(got, want) {
		t.Fatalf("the backfilled table\n%q\ndiffers from a from-scratch run's\n%q", got, want)
	}
}

// The backfill tests' queries: the edit adds an aggregate.
const (
	bfBaseSQL   = "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM src GROUP BY k"
	bfEditedSQL = "SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM src GROUP BY k"
)

// ComparePositions orders binlog positions of different runs: by file
// (its number, past its zero padding), offset, then the row changes of
// the transaction there; a position still in its snapshot before all.
func TestBinlogComparePositions(t *testing.T) {
	s := newCDC(t, mysql.Config{DSN: "u:p@tcp(127.0.0.1:3306)/db", Table: "t"}, nil)
	pos := func(snapshot bool, file string, at, skip int) []byte {
		return fmt.Appendf(nil, `{"snapshot":%t,"binlog":{"file":%q,"pos":%d},"skip":%d,"captured":["db.t"]}`, snapshot, file, at, skip)
	}
	ordered := [][]byte{
		pos(true, "bin.000001", 4, 0),
		pos(false, "bin.000001", 400, 0),
		pos(false, "bin.000001", 400, 2),
		pos(false, "bin.000001", 900, 0),
		pos(false, "bin.000002", 4, 0),
		pos(false, "bin.1000000", 4, 0),
	}
	for i, a := range ordered {
		for j, b := range ordered {
			c, err := s.ComparePositions(a, b)
			if err != nil {
				t.Fatal(err)
			}
			if want := cmp.Compare(i, j); c != want {
				t.Errorf("compare %s with %s = %d, want %d", a, b, c, want)
			}
		}
	}
	other := []byte(`{"binlog":{"file":"bin.000001","pos":4},"captured":["db.u"]}`)
	if _, err := s.ComparePositions(ordered[1], other); err == nil {
		t.Error("positions of other tables compared")
	}
}

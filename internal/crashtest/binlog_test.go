package crashtest

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// binlogGroupByToMySQL captures two tables from the binlog, groups their
// rows by k and upserts the groups into a MySQL table. Vars: dsn, src
// (the tables are SRC_a and SRC_b), table, and stop ("latest" in the
// last life, which then ends at the binlog's end).
var binlogGroupByToMySQL = scenario{
	name: "binlog-groupby-mysql",
	pipeline: `version: 1
name: crash-binlog-{{.Out}}
sources:
  - name: rows
    type: mysql
    mode: cdc
    dsn: "{{.Vars.dsn}}"
    tables: [{{.Vars.src}}_a, {{.Vars.src}}_b]
{{- with .Vars.stop}}
    stop: {{.}}
{{- end}}
    scan: { fetch_size: 256 }
    schema:
      - id BIGINT
      - k INT
      - v BIGINT
      - src STRING METADATA FROM 'table_name'
    key: [src, id]
transforms:
  - name: stats
    sql: |
      SELECT k, COUNT(*) AS n, SUM(v) AS total, MAX(v) AS top
      FROM rows
      GROUP BY k
sinks:
{{template "mysql sink" args . "name" "db" "from" "stats" "key" "k"}}
`,
}

// TestCrashBinlog: a binlog capture -> GROUP BY -> MySQL upsert, killed
// with SIGKILL at random moments (ETLD_CRASH_KILLS, 20 by default; in
// the snapshot and in the binlog, mid-transaction too) while a writer
// keeps inserting, updating (the grouping column too), deleting and
// moving keys in both source tables, in transactions of one to five
// statements. Once the writer stops, a last life reads to the binlog's
// end: the upsert table must then equal the groups computed from the
// source tables.
func TestCrashBinlog(t *testing.T) {
	seed := crashSeed()
	kills := intEnv("ETLD_CRASH_KILLS", 20)
	t.Logf("scenario binlog-groupby-mysql: seed %d (replay with ETLD_CRASH_SEED=%d), %d kills", seed, seed, kills)
	rnd := rand.New(rand.NewPCG(seed, 1))
	db, _ := testenv.MySQL(t)
	e := &env{Dir: t.TempDir(), Out: "out", Round: 1, Vars: mysqlVars(t, map[string]string{}, "crashbl"), rnd: rnd}
	src := e.Vars["table"] + "_src"
	e.Vars["src"], e.Vars["stop"] = src, ""
	for _, s := range []string{"_a", "_b"} {
		testenv.Exec(t, db, "CREATE TABLE "+src+s+" (id BIGINT PRIMARY KEY, k INT NOT NULL, v BIGINT)")
		t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + src + s) })
		var vals []string
		for i := 1; i <= 3000; i++ {
			vals = append(vals, fmt.Sprintf("(%d, %d, %d)", i, rnd.IntN(40), rnd.IntN(1000)))
		}
		testenv.Exec(t, db, "INSERT INTO "+src+s+" VALUES "+strings.Join(vals, ","))
	}

	w := startWriter(t, db, src, seed)
	state := filepath.Join(e.Dir, "state")
	killed, restores := 0, 0
	for attempt := 0; killed < kills; attempt++ {
		if attempt > 3*kills {
			t.Fatalf("%d lives, %d killed: the lives end by themselves", attempt, killed)
		}
		e.Life++
		file := e.render(t, binlogGroupByToMySQL.pipeline, "out")
		delay := 300*time.Millisecond + time.Duration(rnd.Int64N(int64(900*time.Millisecond)))
		before := latestID(state)
		res := runLife(t, file, state, childInterval, killAt{delay, waitsForCheckpoint(killed, kills, restores)})
		if os.Getenv("ETLD_CRASH_VERBOSE") != "" {
			logLife(t, res, attempt, delay, delay, before, latestID(state))
		}
		restores += strings.Count(res.stderr, "restored checkpoint")
		if !res.killed {
			t.Fatalf("life %d ended by itself: %v\nstderr:\n%s", e.Life, res.err, res.stderr)
		}
		killed++
	}
	changes := w.stop()

	e.Life++
	e.Vars["stop"] = "latest"
	file := e.render(t, binlogGroupByToMySQL.pipeline, "out")
	res := runChild(t, file, state, 0)
	if res.err != nil {
		t.Fatalf("the last life failed: %v\nstderr:\n%s", res.err, res.stderr)
	}
	restores += strings.Count(res.stderr, "restored checkpoint")
	t.Logf("%d kills, %d restores from a checkpoint, %d changes made by the writer", killed, restores, changes)
	if restores == 0 {
		t.Errorf("no run restored a checkpoint: the kills tested nothing")
	}
	want := tableRows(t, db, fmt.Sprintf("(SELECT k, COUNT(*) AS n, SUM(v) AS total, MAX(v) AS top FROM (SELECT * FROM %s_a UNION ALL SELECT * FROM %s_b) u GROUP BY k) AS truth", src, src))
	got := tableRows(t, db, e.Vars["table"]+"_out")
	if !slices.Equal(got, want) {
		t.Errorf("table after crashes has %d rows, the source tables' groups %d; first differences:\n%s", len(got), len(want), diffLines(want, got))
	} else {
		t.Logf("table %s_out: %d groups, equal to the source tables'", e.Vars["table"], len(got))
	}
}

// writer changes the source tables in transactions until stopped.
type writer struct {
	t       *testing.T
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	changes int
	err     error
}

// startWriter changes tables SRC_a and SRC_b at random with its own seed
// (ids up to 6000: inserts of new ids, updates of k and v, deletes, an
// id moved to another).
func startWriter(t *testing.T, db *sql.DB, src string, seed uint64) *writer {
	w := &writer{t: t, done: make(chan struct{})}
	rnd := rand.New(rand.NewPCG(seed, 2))
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			select {
			case <-w.done:
				return
			default:
			}
			tx, err := db.Begin()
			if err != nil {
				w.fail(err)
				return
			}
			n := 1 + rnd.IntN(5)
			for range n {
				table := src + []string{"_a", "_b"}[rnd.IntN(2)]
				id := 1 + rnd.IntN(6000)
				var q string
				switch rnd.IntN(5) {
				case 0:
					q = fmt.Sprintf("INSERT IGNORE INTO %s VALUES (%d, %d, %d)", table, id, rnd.IntN(40), rnd.IntN(1000))
				case 1:
					q = fmt.Sprintf("UPDATE %s SET k = %d WHERE id BETWEEN %d AND %d", table, rnd.IntN(40), id, id+20)
				case 2:
					q = fmt.Sprintf("UPDATE %s SET v = v + %d WHERE id = %d", table, rnd.IntN(100), id)
				case 3:
					q = fmt.Sprintf("DELETE FROM %s WHERE id = %d", table, id)
				case 4:
					q = fmt.Sprintf("UPDATE IGNORE %s SET id = %d WHERE id = %d", table, 1+rnd.IntN(6000), id)
				}
				if _, err := tx.Exec(q); err != nil {
					tx.Rollback()
					w.fail(fmt.Errorf("%s: %w", q, err))
					return
				}
			}
			if err := tx.Commit(); err != nil {
				w.fail(err)
				return
			}
			w.mu.Lock()
			w.changes += n
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.stop() })
	return w
}

func (w *writer) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
}

// stop ends the writer and returns the statements it committed; it
// fails the test if the writer failed. Call it from the test's
// goroutine.
func (w *writer) stop() int {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		w.t.Errorf("the writer failed: %v", w.err)
		w.err = nil
	}
	return w.changes
}

package crashtest

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// seedOf is the run's seed: ETLD_CRASH_SEED, else the clock; logged so
// that a failing run can be replayed.
func seedOf(t *testing.T, scenario string) *rand.Rand {
	seed := crashSeed()
	t.Logf("scenario %s: seed %d (replay with ETLD_CRASH_SEED=%d)", scenario, seed, seed)
	return rand.New(rand.NewPCG(seed, 1))
}

// outagePipeline is datagen -> GROUP BY -> MySQL upsert: rows at rate,
// into table of the server at ${envDSN}.
func outagePipeline(name, envDSN, table string, rows, rate, keys int) string {
	return fmt.Sprintf(`version: 1
name: %s
checkpoint_interval: 200ms
sources:
  - name: gen
    type: datagen
    rows: %d
    rate: %d
    schema:
      - id BIGINT
    fields:
      id: { kind: sequence, start: 1, end: %d }
transforms:
  - name: stats
    sql: |
      SELECT MOD(id, %d) AS k, COUNT(*) AS n, SUM(id) AS total
      FROM gen
      GROUP BY MOD(id, %d)
sinks:
  - name: db
    from: stats
    type: mysql
    dsn: ${%s}
    table: %s
    key: [k]
    create_table: true
`, name, rows, rate, rows, keys, keys, envDSN, table)
}

// outageWant is outagePipeline's table, computed directly.
func outageWant(rows, keys int) []string {
	var want []string
	for k := range int64(keys) {
		var n, total int64
		for id := int64(1); id <= int64(rows); id++ {
			if id%int64(keys) == k {
				n++
				total += id
			}
		}
		want = append(want, fmt.Sprintf("%d, %d, %d", k, n, total))
	}
	return want
}

// rowsCounted is SUM(n) of the table: the input rows it accounts for.
func rowsCounted(db *sql.DB, table string) (int64, error) {
	var n sql.NullInt64
	err := db.QueryRow("SELECT SUM(n) FROM " + table).Scan(&n)
	return n.Int64, err
}

// TestRealServerRestart stops a private MariaDB for real (SIGTERM, a
// clean shutdown, as systemd would) in the middle of a run, keeps it down
// for a seeded 2-6 s, and starts it again on the same port and data: the
// pipeline, in a child process, must wait, write again soon after the
// server's return, and end with the exact table. It logs the time from
// the server's readiness to the first new rows in the table.
func TestRealServerRestart(t *testing.T) {
	rnd := seedOf(t, "real server restart")
	m := testenv.StartMariaDB(t)
	db := m.Open()
	const rows, rate, keys = 40_000, 5_000, 50 // eight seconds of input
	table := "restart_" + strconv.Itoa(rnd.IntN(1_000_000))
	dir := t.TempDir()
	file := filepath.Join(dir, "restart.yaml")
	if err := os.WriteFile(file, []byte(outagePipeline("restart", "ETLD_PRIVATE_DSN", table, rows, rate, keys)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ETLD_PRIVATE_DSN", m.DSN)

	done := make(chan childResult, 1)
	go func() { done <- runChild(t, file, filepath.Join(dir, "state"), 0) }()

	// A seeded moment of the run, once rows are in the table.
	at := int64(rows/10 + rnd.IntN(rows/2))
	testenv.Eventually(t, time.Minute, fmt.Sprintf("%d rows counted in the table", at), func() error {
		n, err := rowsCounted(db, table)
		if err != nil {
			return err
		}
		if n < at {
			return fmt.Errorf("%d rows counted", n)
		}
		return nil
	})
	before, err := rowsCounted(db, table)
	if err != nil {
		t.Fatal(err)
	}
	down := time.Duration(2000+rnd.IntN(4000)) * time.Millisecond
	stopped := time.Now()
	m.Restart(down)
	ready := time.Now()
	t.Logf("server stopped with %d of %d rows counted, back after %s (down %s, start included)", before, rows, ready.Sub(stopped).Round(time.Millisecond), down)
	if before >= rows {
		t.Fatalf("every row was counted before the restart: it did not land mid-run")
	}

	// Recovery: the first rows written after the server is ready.
	var recovered time.Duration
	testenv.Eventually(t, time.Minute, "new rows after the restart", func() error {
		n, err := rowsCounted(db, table)
		if err != nil {
			return err
		}
		if n <= before {
			return fmt.Errorf("still %d rows counted", n)
		}
		recovered = time.Since(ready)
		return nil
	})
	t.Logf("first write %s after the restarted server was ready", recovered.Round(time.Millisecond))
	if recovered > testenv.RecoveryBound {
		t.Errorf("writes resumed %s after the restarted server was ready, want within %s", recovered.Round(time.Millisecond), testenv.RecoveryBound)
	}

	var res childResult
	select {
	case res = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the pipeline did not end")
	}
	if res.err != nil {
		t.Fatalf("the pipeline failed across the restart: %v\n%s", res.err, res.stderr)
	}
	if got, want := tableRows(t, db, table), outageWant(rows, keys); !slices.Equal(got, want) {
		t.Errorf("table %s after the restart has %d rows, want %d:\n%s", table, len(got), len(want), diffLines(want, got))
	}
}

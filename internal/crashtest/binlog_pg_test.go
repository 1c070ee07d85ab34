package crashtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// binlogToPostgres captures two tables from the binlog and upserts their
// rows, as they are, into one PostgreSQL table keyed by (src, id). Vars:
// dsn, src (the tables are SRC_a and SRC_b), pgdsn, pgtable, and stop
// ("latest" in the last life).
var binlogToPostgres = scenario{
	name: "binlog-postgres",
	pipeline: `version: 1
name: crash-binlog-pg-{{.Vars.src}}
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
sinks:
  - name: pg
    from: rows
    type: postgres
    dsn: "{{.Vars.pgdsn}}"
    table: {{.Vars.pgtable}}
    key: [src, id]
    create_table: true
`,
}

// TestCrashBinlogToPostgres: a binlog capture -> PostgreSQL upsert,
// killed with SIGKILL at random moments (ETLD_CRASH_KILLS, 20 by
// default: in the snapshot and in the binlog, mid-transaction too)
// while the writer of TestCrashBinlog keeps inserting, updating,
// deleting and moving keys in both MariaDB tables. Once the writer
// stops, a last life reads to the binlog's end: the PostgreSQL table
// must then hold exactly the rows of the MariaDB tables.
//
// The first life is killed only once it has written a checkpoint: a run
// killed before its first one starts the next from nothing (a new
// snapshot), and the upsert table may keep a row that run wrote and the
// writer deleted before the new snapshot (docs/design.md, Checkpoints
// and recovery).
func TestCrashBinlogToPostgres(t *testing.T) {
	seed := crashSeed()
	kills := intEnv("ETLD_CRASH_KILLS", 20)
	t.Logf("scenario binlog-postgres: seed %d (replay with ETLD_CRASH_SEED=%d), %d kills", seed, seed, kills)
	rnd := rand.New(rand.NewPCG(seed, 3))
	db, _ := testenv.MySQL(t)
	pool, pgDSN := testenv.Postgres(t)
	e := &env{Dir: t.TempDir(), Out: "out", Round: 1, Vars: mysqlVars(t, map[string]string{}, "crashblpg"), rnd: rnd}
	src := e.Vars["table"] + "_src"
	pgTable := testenv.PostgresTable(t, pool, "")
	e.Vars["src"], e.Vars["stop"], e.Vars["pgdsn"], e.Vars["pgtable"] = src, "", pgDSN, pgTable
	for _, s := range []string{"_a", "_b"} {
		testenv.Exec(t, db, "CREATE TABLE "+src+s+" (id BIGINT PRIMARY KEY, k INT NOT NULL, v BIGINT)")
		t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + src + s) })
		var vals []string
		for i := 1; i <= 2000; i++ {
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
		file := e.render(t, binlogToPostgres.pipeline, "out")
		// A life long enough for a checkpoint on a busy machine (the
		// sink connects and fences before the first one).
		delay := 500*time.Millisecond + time.Duration(rnd.Int64N(int64(time.Second)))
		before := latestID(state)
		res := runLife(t, file, state, childInterval, killAt{delay, before == 0 || waitsForCheckpoint(killed, kills, restores)})
		if os.Getenv("ETLD_CRASH_VERBOSE") != "" {
			logLife(t, res, attempt, delay, delay, before, latestID(state))
		}
		restores += strings.Count(res.stderr, "restored checkpoint")
		if !res.killed {
			t.Fatalf("life %d ended by itself: %v\nstdout:\n%s\nstderr:\n%s", e.Life, res.err, res.stdout, res.stderr)
		}
		killed++
	}
	changes := w.stop()

	e.Life++
	e.Vars["stop"] = "latest"
	file := e.render(t, binlogToPostgres.pipeline, "out")
	res := runChild(t, file, state, 0)
	if res.err != nil {
		t.Fatalf("the last life failed: %v\nstderr:\n%s", res.err, res.stderr)
	}
	restores += strings.Count(res.stderr, "restored checkpoint")
	t.Logf("%d kills, %d restores from a checkpoint, %d changes made by the writer", killed, restores, changes)
	if restores == 0 {
		t.Errorf("no run restored a checkpoint: the kills tested nothing")
	}
	want := tableRows(t, db, fmt.Sprintf("(SELECT CONCAT(id, '|', k, '|', COALESCE(v, 'NULL'), '|%[1]s_a') AS r FROM %[1]s_a UNION ALL SELECT CONCAT(id, '|', k, '|', COALESCE(v, 'NULL'), '|%[1]s_b') FROM %[1]s_b) AS truth", src))
	got := testenv.PostgresLines(t, pool, pgTable, "|", "NULL")
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("table after crashes has %d rows, the MariaDB tables %d; differences:\n%s", len(got), len(want), diffSets(want, got))
	} else {
		t.Logf("table %s: %d rows, equal to the MariaDB tables'", pgTable, len(got))
	}
}

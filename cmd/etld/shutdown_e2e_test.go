package main

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
)

// TestStopDuringAnOutage stops etld while its MySQL sink's server is
// away (a proxy between them turns every connection away; the shared
// server itself is never touched), three times:
//
//  1. the daemon, SIGTERM: it must exit 1 once shutdown_timeout has
//     passed, not before and not much later, naming the checkpoint its
//     next start resumes from;
//  2. a one-shot run from that checkpoint, SIGTERM twice: the second
//     signal abandons at once, with the same line;
//  3. the server back, a one-shot run resumes from the same checkpoint
//     and finishes: the table is exactly the query's result.
func TestStopDuringAnOutage(t *testing.T) {
	dsn := testenv.MySQLDSN(t)
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	px := testenv.NewProxy(t, cfg.Addr)
	px.Up()
	cfg.Addr = px.Addr()
	db, err := sql.Open("mysql", dsn) // straight to the server
	if err != nil {
		t.Fatal(err)
	}
	table := testenv.UniqueName(t, "stop_outage")
	t.Cleanup(func() {
		db.Exec("DROP TABLE IF EXISTS " + table)
		db.Close()
	})

	// Ten seconds of input at 3000 rows/s: the outage lands mid-run.
	const rows, rate, keys = 30_000, 3_000, 50
	pipelineFile := fmt.Sprintf(`version: 1
name: stop-outage
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
    dsn: ${STOP_OUTAGE_DSN}
    table: %s
    key: [k]
    create_table: true
`, rows, rate, rows, keys, keys, table)
	work, dir := pipelinesDir(t, map[string]string{"stop-outage.yaml": pipelineFile})
	state := t.TempDir()
	env := []string{"STOP_OUTAGE_DSN=" + cfg.FormatDSN(), "ETLD_STATE_DIR=" + state}
	const timeout = 3 * time.Second

	// 1. The daemon, stopped during the outage, waits shutdown_timeout.
	d := startDaemon(t, work, env, "--daemon", "--pipelines", dir, "--admin-enabled=false",
		"--log-format", "json", "--shutdown-timeout", timeout.String())
	// A checkpoint that holds rows, so that there is one to resume from.
	d.waitLog("pipeline finished: its input ended", "pipeline", "messages")
	testenv.Eventually(t, 30*time.Second, "a checkpoint after the first rows reached the table", func() error {
		var n int
		if err := db.QueryRow("SELECT COALESCE(SUM(n), 0) FROM " + table).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("table %s is empty", table)
		}
		return nil
	})
	// Rows reach the table at a barrier's flush, before the checkpoint
	// of that barrier is complete: wait for the stored checkpoint too,
	// or the outage can come first and leave none to resume from.
	store, err := checkpoint.Open(state, "stop-outage")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "a stored checkpoint", func() error {
		cp, err := store.Latest()
		if err == nil && cp == nil {
			err = errors.New("none yet")
		}
		return err
	})
	px.Down()
	px.WaitRefused(t, px.Refused()+1) // the sink has met the outage
	stopAt := time.Now()
	d.signal(syscall.SIGTERM)
	if code := d.exitCode(); code != 1 {
		t.Errorf("daemon stopped during an outage: exit %d, want 1", code)
	}
	took := time.Since(stopAt)
	t.Logf("daemon exited %s after SIGTERM (shutdown_timeout %s)", took.Round(time.Millisecond), timeout)
	if took < timeout || took > timeout+4*time.Second {
		t.Errorf("daemon exited %s after SIGTERM, want shutdown_timeout %s plus at most 4s", took.Round(time.Millisecond), timeout)
	}
	line := d.logged("pipeline did not stop in time: abandoned; nothing is lost, the next start resumes from its last checkpoint and reads the pending rows again", "pipeline", "stop-outage")
	if line == nil {
		t.Fatalf("no abandon line for the pipeline")
	}
	resume := fmt.Sprint(line["resume_from_checkpoint"])
	if resume == "0" || resume == "<nil>" {
		t.Errorf("abandon line names checkpoint %s: %v", resume, line)
	}
	if want := fmt.Sprintf("shutdown_timeout %s passed", timeout); line["reason"] != want {
		t.Errorf("abandon reason %q, want %q", line["reason"], want)
	}
	// The sink is stuck writing rows that came after the checkpoint.
	if bySink, _ := line["pending_rows_by_sink"].(map[string]any); fmt.Sprint(bySink["db"]) == "0" || bySink["db"] == nil {
		t.Errorf("abandon line shows no pending rows for the db sink: %v", line)
	}
	if d.logged("stopped before every pipeline could drain: exit status 1; the next start resumes from the checkpoints named above") == nil {
		t.Error("no final line says why the exit status is 1")
	}

	// 2. Still away: a one-shot run resumes, then a second signal
	// abandons at once, naming the same checkpoint.
	file := filepath.Join(dir, "stop-outage.yaml")
	once := startDaemon(t, work, env, "--log-format", "json", "--state-dir", state, "--shutdown-timeout", "1m", file)
	once.waitLog("restored checkpoint", "pipeline", "stop-outage", "checkpoint", resume)
	px.WaitRefused(t, px.Refused()+1)
	once.signal(syscall.SIGTERM)
	once.waitLog("stopping: draining in-flight rows and flushing sinks; signal again to abort")
	stopAt = time.Now()
	once.signal(syscall.SIGTERM)
	if code := once.exitCode(); code != 1 {
		t.Errorf("one-shot run aborted by a second signal: exit %d, want 1", code)
	}
	took = time.Since(stopAt)
	t.Logf("one-shot run exited %s after the second signal", took.Round(time.Millisecond))
	if took > 3*time.Second {
		t.Errorf("one-shot run exited %s after the second signal, want at once", took.Round(time.Millisecond))
	}
	line = once.logged("pipeline did not stop in time: abandoned; nothing is lost, the next start resumes from its last checkpoint and reads the pending rows again", "pipeline", "stop-outage")
	if line == nil {
		t.Fatal("the second signal logged no abandon line")
	}
	if got := fmt.Sprint(line["resume_from_checkpoint"]); got != resume {
		t.Errorf("after the second signal: resume from checkpoint %s, want %s (no checkpoint can complete while the server is away)", got, resume)
	}
	if !strings.HasPrefix(fmt.Sprint(line["reason"]), "second signal") {
		t.Errorf("abandon reason %q, want the second signal", line["reason"])
	}

	// 3. The server is back: a run resumes and finishes, and the table
	// is the query's result, computed here.
	px.Up()
	last := startDaemon(t, work, env, "--log-format", "json", "--state-dir", state, file)
	if code := last.exitCode(); code != 0 {
		t.Fatalf("final run: exit %d", code)
	}
	if last.logged("restored checkpoint", "pipeline", "stop-outage", "checkpoint", resume) == nil {
		t.Errorf("the final run did not resume from checkpoint %s", resume)
	}
	var want []string
	for k := range int64(keys) {
		var n, total int64
		for id := int64(1); id <= rows; id++ {
			if id%keys == k {
				n++
				total += id
			}
		}
		want = append(want, fmt.Sprintf("%d %d %d", k, n, total))
	}
	var got []string
	rs, err := db.Query("SELECT k, n, total FROM " + table + " ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var k, n, total int64
		if err := rs.Scan(&k, &n, &total); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %d %d", k, n, total))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("table %s after the stops:\n got %v\nwant %v", table, got, want)
	}
}

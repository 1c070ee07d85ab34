package crashtest

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/row"
)

// backfilledPipeline is fileGroupByBackfilled's template.
const backfilledPipeline = `version: 1
name: crash-bf-{{.Out}}
backfill: true
sources:
{{template "readings" .}}
transforms:
  - name: stats
    sql: |
{{- if .Old}}
      SELECT sensor, COUNT(*) AS n, CAST(NULL AS DOUBLE) AS max_temp, SUM(id) AS ids
{{- else}}
      SELECT sensor, COUNT(*) AS n, MAX(temp) AS max_temp, SUM(id) AS ids
{{- end}}
      FROM readings
      GROUP BY sensor
sinks:
{{template "mysql sink" args . "name" "db" "from" "stats" "key" "sensor"}}
`

// (b) file -> GROUP BY -> MySQL upsert, edited with `backfill: true`:
// before the crashing lives a run of the old version (no MAX) stops
// mid-input with a checkpoint; every life runs the edited version, which
// backfills the GROUP BY from the file's start before it reads on. The
// kills land in the backfill's replays, in its writes to the table and
// after it: a life killed before the rebuilt checkpoint is stored leaves
// the old one, and the next life backfills again. The table must end as
// the uninterrupted run of the edited pipeline leaves it.
var fileGroupByBackfilled = scenario{
	name:     "file-groupby-backfilled",
	pipeline: backfilledPipeline,
	needs: func(t *testing.T) map[string]string {
		return mysqlVars(t, map[string]string{}, "crashbf")
	},
	setup: func(t *testing.T, e *env) {
		writesReadings(3)(t, e)
		oldFirstRun(t, e)
		killsInBackfill(t, e)
	},
	check: fileGroupByToMySQL.check,
	reset: func(t *testing.T, e *env) {
		dropOut(t, e)
		oldFirstRun(t, e)
	},
}

// killsInBackfill kills two lives of the edited version at moments of
// its backfill, found by what the backfill writes, not by time: as soon
// as its replays' directory exists (the replay of the edited plan has
// begun), and as soon as the replay of the old plan stored its final
// checkpoint (the sinks' differences are being computed and written).
// The first must leave the old checkpoint; the random kills follow.
func killsInBackfill(t *testing.T, e *env) {
	t.Helper()
	state := filepath.Join(e.Dir, "state")
	dir := filepath.Join(state, "crash-bf-out")
	before := latestID(state)
	file := e.render(t, backfilledPipeline, "out")
	exists := func(pattern string) func() bool {
		return func() bool {
			m, _ := filepath.Glob(filepath.Join(dir, pattern))
			return len(m) > 0
		}
	}
	res := runChildUntil(t, file, state, childInterval, 0, exists(".backfill-*"))
	if !res.killed {
		t.Fatalf("the life to kill in the replay was not killed: %v\n%s", res.err, res.stderr)
	}
	if after := latestID(state); after != before {
		t.Fatalf("a kill in the backfill's replay left checkpoint %d, not the old version's %d", after, before)
	}
	res = runChildUntil(t, file, state, childInterval, 0, exists(".backfill-*/old/MANIFEST"))
	if !res.killed {
		t.Fatalf("the life to kill in the backfill's writes was not killed: %v\n%s", res.err, res.stderr)
	}
	t.Logf("killed in the backfill's replay, then after its replays (checkpoint %d -> %d)", before, latestID(state))
}

// Old tells fileGroupByBackfilled's template to render the version
// before the edit.
func (e *env) Old() bool { old, _ := e.data["old"].(bool); return old }

// oldFirstRun runs the old version in this process into the crashing
// runs' state directory and stops it as its sink takes its first rows:
// the checkpoint is mid-input, the table holds the old version's rows.
func oldFirstRun(t *testing.T, e *env) {
	t.Helper()
	e.data["old"] = true
	file := e.render(t, backfilledPipeline, "out")
	e.data["old"] = false
	p, err := pipeline.Load(file, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var once sync.Once
	if _, err := p.Run(context.Background(), pipeline.RunOptions{StateDir: filepath.Join(e.Dir, "state"), Stop: stop, BatchSize: 100,
		Tap: func(string, *row.Batch) { once.Do(func() { close(stop) }) }}); err != nil {
		t.Fatal(err)
	}
	db, _ := testenv.MySQL(t)
	if rows := tableRows(t, db, e.Vars["table"]+"_out"); len(rows) == 0 {
		t.Fatal("the old version's first run wrote nothing")
	}
	if latestID(filepath.Join(e.Dir, "state")) == 0 {
		t.Fatal("the old version's first run stored no checkpoint")
	}
}

func TestCrashBackfill(t *testing.T) { runScenario(t, fileGroupByBackfilled) }

package daemon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
)

const (
	bfBase   = "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM src GROUP BY k"
	bfEdited = "SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS m FROM src GROUP BY k"
)

// serveHarness is a daemon running backfillYAML's GROUP BY over a
// followed file into a MySQL table, with a hook that stops each
// backfill at its phases until the test lets it go on.
type serveHarness struct {
	*harness
	db      *sql.DB
	table   string
	input   string
	reached chan string
	release chan error
}

func newServeHarness(t *testing.T) *serveHarness {
	db, dsn := testenv.MySQL(t)
	t.Setenv("DAEMON_BACKFILL_DSN", dsn)
	h := &serveHarness{harness: newHarness(t), db: db, input: t.TempDir(), reached: make(chan string), release: make(chan error)}
	h.table = testenv.MySQLTable(t, db, "")
	testenv.Exec(t, db, "CREATE TABLE "+h.table+" (k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT, m BIGINT)")
	h.sup.hook = func(phase string) error {
		h.reached <- phase
		return <-h.release
	}
	appendRows(t, h.input, 0, 2000)
	h.write("g.yaml", backfillYAML(h.input, h.table, bfBase, ""))
	h.reload()
	h.waitState("g.yaml", Running)
	h.waitTable(groups(2000, false))
	testenv.Eventually(t, 20*time.Second, "a checkpoint", func() error {
		store, err := checkpoint.OpenExisting(filepath.Join(h.dir, ".state"), "g")
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

// waitTable waits until the table holds want.
func (h *serveHarness) waitTable(want []string) {
	h.t.Helper()
	testenv.Eventually(h.t, 20*time.Second, "the table", func() error {
		if got := testenv.TableLines(h.t, h.db, h.table, ",", "null"); !slices.Equal(got, want) {
			return fmt.Errorf("%d rows, first %q, want %d, first %q", len(got), got[:min(1, len(got))], len(want), want[:min(1, len(want))])
		}
		return nil
	})
}

// editedTakesOver waits for the edited version to run with the backfill
// done, appends rows 2500-3000, and waits for the table to equal a
// from-scratch run of the edited query over all of them.
func (h *serveHarness) editedTakesOver() {
	t := h.t
	t.Helper()
	testenv.Eventually(t, 20*time.Second, "the edited version running", func() error {
		if st := h.status("g.yaml"); st.State != Running || st.Backfill != nil {
			return fmt.Errorf("state %s, backfill %+v", st.State, st.Backfill)
		}
		return nil
	})
	appendRows(t, h.input, 2500, 3000)
	want := h.fromScratch()
	if !slices.Equal(want, groups(3000, true)) {
		t.Fatalf("a from-scratch run gives %d rows, not the edited query's", len(want))
	}
	h.waitTable(want)
}

// at waits for the backfill to reach phase.
func (h *serveHarness) at(phase string) {
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

// latest is the pipeline's newest checkpoint.
func (h *serveHarness) latest() *checkpoint.Checkpoint {
	h.t.Helper()
	store, err := checkpoint.OpenExisting(filepath.Join(h.dir, ".state"), "g")
	if err != nil {
		h.t.Fatal(err)
	}
	cp, err := store.Latest()
	if err != nil || cp == nil {
		h.t.Fatalf("no checkpoint (%v)", err)
	}
	return cp
}

// fromScratch is what a run of the edited pipeline over the whole
// input from its start (no state, a plain read) writes to a new table.
func (h *serveHarness) fromScratch() []string {
	h.t.Helper()
	fresh := testenv.MySQLTable(h.t, h.db, "_fresh")
	testenv.Exec(h.t, h.db, "CREATE TABLE "+fresh+" (k VARCHAR(16) PRIMARY KEY, n BIGINT NOT NULL, s BIGINT, m BIGINT)")
	text := strings.Replace(backfillYAML(h.input, fresh, bfEdited, ""), "    follow: true\n    monitor_interval: 20ms\n", "", 1)
	p, err := h.sup.opt.Load(filepath.Join(h.t.TempDir(), "fresh.yaml"), []byte(text))
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		h.t.Fatal(err)
	}
	return testenv.TableLines(h.t, h.db, fresh, ",", "null")
}

// An edit backfilled while the old version serves: rows appended while
// the backfill runs reach the old version's table (its GROUP BY without
// the new column) before the backfill takes over; the status shows the
// backfill; the catch-up reads what the old version read after the
// checkpoint the replay ran up to; and the final table, rows appended
// after the take-over included, equals a from-scratch run of the edited
// pipeline.
func TestBackfillWhileServing(t *testing.T) {
	h := newServeHarness(t)
	c1 := h.latest()
	h.write("g.yaml", backfillYAML(h.input, h.table, bfEdited, ""))
	if res := baseNames(h.reload()); !slices.Equal(res.Backfilling, []string{"g.yaml"}) || len(res.Restarted) != 0 {
		t.Fatalf("reload = %+v, want g.yaml backfilling", res)
	}
	h.at(pipeline.PhaseWaiting)
	// Both plans read the same records up to C1: rows replayed are even.
	st := h.status("g.yaml")
	if st.State != Backfilling || st.Backfill == nil || st.Backfill.Phase != pipeline.PhaseWaiting || st.Backfill.RowsReplayed == 0 || st.Backfill.RowsReplayed%2 != 0 ||
		st.Backfill.Checkpoint < c1.ID || !slices.Equal(st.Backfill.Operators, []string{"transform/q/group_aggregate#1"}) {
		t.Fatalf("status while backfilling: state %s, backfill %+v", st.State, st.Backfill)
	}
	if ready, why := h.sup.Ready(false); !ready {
		t.Errorf("not ready while the old version serves: %v", why)
	}
	// A reload of the same content goes on with the backfill.
	if res := baseNames(h.reload()); !slices.Equal(res.Backfilling, []string{"g.yaml"}) {
		t.Errorf("second reload = %+v", res)
	}
	// The old version serves: rows appended now reach its table.
	appendRows(t, h.input, 2000, 2500)
	h.waitTable(groups(2500, false))
	if st := h.status("g.yaml"); st.State != Backfilling || st.Restarts != 0 {
		t.Fatalf("old version %s, %d restarts", st.State, st.Restarts)
	}
	h.release <- nil
	h.at(pipeline.PhaseCatchUp)
	if c2 := h.latest(); c2.ID <= st.Backfill.Checkpoint {
		t.Fatalf("the old version's final checkpoint is %d, not after %d: nothing to catch up", c2.ID, st.Backfill.Checkpoint)
	}
	// The take-over: the old version stopped, the catch-up about to run
	// (Finish). Still backfilling, not serving, and ready: a planned
	// hand-over, as a reload's stop and start.
	if st := h.status("g.yaml"); st.State != Backfilling || st.Backfill == nil || st.Backfill.Serving || !st.Backfill.TakingOver {
		t.Errorf("status during the take-over: state %s, backfill %+v", st.State, st.Backfill)
	}
	if ready, why := h.sup.Ready(false); !ready {
		t.Errorf("not ready during the take-over: %v", why)
	}
	h.release <- nil
	h.editedTakesOver()
	if st := h.status("g.yaml"); st.ReloadError != "" || st.Restarts != 0 {
		t.Errorf("after the backfill: reload error %q, %d restarts", st.ReloadError, st.Restarts)
	}
}

// A backfill that fails leaves the old version running with the reason,
// never retrying: during the replay (the old version never stopped) and
// after the old version stopped for the catch-up (it starts again from
// its final checkpoint, and goes on serving).
func TestBackfillFailureKeepsOldVersion(t *testing.T) {
	h := newServeHarness(t)
	for i, phase := range []string{pipeline.PhaseWaiting, pipeline.PhaseCatchUp} {
		h.write("g.yaml", backfillYAML(h.input, h.table, bfEdited, fmt.Sprintf("# try %d\n", i)))
		h.reload()
		if phase == pipeline.PhaseCatchUp {
			h.at(pipeline.PhaseWaiting)
			h.release <- nil
		}
		h.at(phase)
		h.release <- errors.New("the target is gone")
		testenv.Eventually(t, 20*time.Second, "the old version running with the reason", func() error {
			st := h.status("g.yaml")
			if st.State != Running || st.Backfill != nil || !strings.Contains(st.ReloadError, "backfill failed: the target is gone") {
				return fmt.Errorf("state %s, backfill %+v, reload error %q", st.State, st.Backfill, st.ReloadError)
			}
			return nil
		})
		n := 2000 + 500*(i+1)
		appendRows(t, h.input, n-500, n)
		h.waitTable(groups(n, false))
	}
}

// A kill during the catch-up (the old version stopped, the sinks not yet
// written) leaves the old version's checkpoint, and the copy of the file
// it was built with; at the next start the edited file backfills again
// and the table ends as a from-scratch run of the edited pipeline's; that
// backfill shows as state backfilling with no version serving (not
// ready).
func TestBackfillCrashDuringCatchUp(t *testing.T) {
	h := newServeHarness(t)
	h.write("g.yaml", backfillYAML(h.input, h.table, bfEdited, ""))
	h.reload()
	h.at(pipeline.PhaseWaiting)
	appendRows(t, h.input, 2000, 2500)
	h.waitTable(groups(2500, false))
	h.release <- nil
	h.at(pipeline.PhaseCatchUp)
	c2 := h.latest()
	h.release <- errCrash
	// The crashed backfill holds no lock: a reload goes through.
	testenv.Eventually(t, 20*time.Second, "the crashed backfill gone", func() error {
		if st := h.status("g.yaml"); st.Backfill != nil {
			return fmt.Errorf("backfill %+v", st.Backfill)
		}
		return nil
	})
	if cp := h.latest(); cp.ID != c2.ID {
		t.Fatalf("after the kill the newest checkpoint is %d, want the old version's final %d", cp.ID, c2.ID)
	}
	store, err := checkpoint.OpenExisting(filepath.Join(h.dir, ".state"), "g")
	if err != nil {
		t.Fatal(err)
	}
	if note, err := store.Note("pipeline-file"); err != nil || !strings.Contains(string(note), bfBase) {
		t.Fatalf("after the kill the state's copy of the file is %q (%v), want the old version's", note, err)
	}
	if left, _ := filepath.Glob(filepath.Join(h.dir, ".state", "g", ".backfill-*")); len(left) == 0 {
		t.Fatal("the killed backfill left no replay directory: the test does not kill it where it means to")
	}

	h.restart()
	h.sup.hook = func(phase string) error {
		h.reached <- phase
		return <-h.release
	}
	h.reload()
	// The edited version backfills before it starts: nothing serves.
	h.at(hookAtStart)
	st := h.status("g.yaml")
	if st.State != Backfilling || st.Backfill == nil || st.Backfill.Serving || st.Backfill.Checkpoint != c2.ID {
		t.Errorf("status of the backfill at the start: state %s, backfill %+v", st.State, st.Backfill)
	}
	if ready, _ := h.sup.Ready(false); ready {
		t.Error("ready while a backfill runs with no version serving")
	}
	h.release <- nil
	h.editedTakesOver()
	if left, _ := filepath.Glob(filepath.Join(h.dir, ".state", "g", ".backfill-*")); len(left) != 0 {
		t.Errorf("replay directories left after the backfill at the restart: %q", left)
	}
}

// An edit being backfilled that the file reverts before the take-over:
// the backfill is cancelled, writes nothing and leaves its replays'
// directory gone; the old version runs on with no reload error.
func TestBackfillCancelledByRevert(t *testing.T) {
	h := newServeHarness(t)
	h.write("g.yaml", backfillYAML(h.input, h.table, bfEdited, ""))
	h.reload()
	h.at(pipeline.PhaseWaiting)
	h.write("g.yaml", backfillYAML(h.input, h.table, bfBase, ""))
	if res := baseNames(h.reload()); !slices.Equal(res.Unchanged, []string{"g.yaml"}) {
		t.Fatalf("reload of the reverted file = %+v, want it unchanged", res)
	}
	if st := h.status("g.yaml"); st.Backfill != nil || st.State != Running {
		t.Fatalf("after the revert: state %s, backfill %+v", st.State, st.Backfill)
	}
	h.release <- nil
	testenv.Eventually(t, 20*time.Second, "the cancelled backfill's directory gone", func() error {
		if left, _ := filepath.Glob(filepath.Join(h.dir, ".state", "g", ".backfill-*")); len(left) != 0 {
			return fmt.Errorf("left: %q", left)
		}
		return nil
	})
	appendRows(t, h.input, 2000, 2500)
	h.waitTable(groups(2500, false))
	if st := h.status("g.yaml"); st.State != Running || st.ReloadError != "" || st.Restarts != 0 {
		t.Errorf("old version %s, reload error %q, %d restarts", st.State, st.ReloadError, st.Restarts)
	}
}

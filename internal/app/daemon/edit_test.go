package daemon

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
)

// statefulYAML is a pipeline with a GROUP BY over an endless probe,
// checkpointed every 20 ms; sql is its transform's query.
func statefulYAML(sql string) string {
	return fmt.Sprintf(`version: 1
name: g
checkpoint_interval: 20ms
sources:
  - name: src
    type: probe
    rows: 9
    endless: true
    schema: [x INT]
transforms:
  - name: q
    sql: %s
sinks:
  - name: out
    from: q
    type: blackhole
`, sql)
}

// An edit of a running pipeline whose saved state does not fit (an
// aggregate added to its GROUP BY) leaves the old version running and
// shows the new one refused with the reason, never retrying; an edit
// that fits (a filter after the aggregate) restarts it from its state.
func TestEditWhoseStateDoesNotFitKeepsTheOldVersion(t *testing.T) {
	h := newHarness(t)
	const base = "SELECT MOD(x, 3) AS k, COUNT(*) AS n FROM src GROUP BY MOD(x, 3)"
	h.write("g.yaml", statefulYAML(base))
	h.reload()
	h.waitState("g.yaml", Running)
	testenv.Eventually(t, 10*time.Second, "a checkpoint", func() error {
		store, err := checkpoint.OpenExisting(filepath.Join(h.dir, ".state"), "g")
		if err != nil {
			return err
		}
		cp, err := store.Latest()
		if err == nil && cp == nil {
			err = fmt.Errorf("none yet")
		}
		return err
	})

	h.write("g.yaml", statefulYAML("SELECT MOD(x, 3) AS k, COUNT(*) AS n, MAX(x) AS m FROM src GROUP BY MOD(x, 3)"))
	res := h.reload()
	if !slices.Contains(res.Failed, filepath.Join(h.dir, "g.yaml")) {
		t.Errorf("reload %+v does not list the refused edit as failed", res)
	}
	st := h.status("g.yaml")
	if st.State != Running || st.Restarts != 0 {
		t.Errorf("after a refused edit the pipeline is %s with %d restarts, want the old version running", st.State, st.Restarts)
	}
	for _, want := range []string{"does not fit the edited pipeline", "transform/q/group_aggregate#1", "MAX(x)", "--reset-state"} {
		if !strings.Contains(st.ReloadError, want) {
			t.Errorf("reload error %q does not say %q", st.ReloadError, want)
		}
	}

	h.write("g.yaml", statefulYAML("SELECT * FROM ("+base+") WHERE n > 0"))
	h.reload()
	st = h.waitState("g.yaml", Running)
	if st.ReloadError != "" {
		t.Errorf("an edit that fits is still refused: %q", st.ReloadError)
	}
	testenv.Eventually(t, 10*time.Second, "the edited version restored its state", func() error {
		if st := h.status("g.yaml"); st.Checkpoints.Restored == 0 {
			return fmt.Errorf("restored %d (state %s, error %q)", st.Checkpoints.Restored, st.State, st.Error)
		}
		return nil
	})
}

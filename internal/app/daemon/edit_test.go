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

// windowJoinYAML is statefulYAML with an event time over the probe's x
// (x seconds), for a window, and sql as its transform's query.
func windowJoinYAML(sql string) string {
	return strings.Replace(statefulYAML(sql), "    schema: [x INT]\n",
		"    schema: [x INT, \"ts AS TO_TIMESTAMP_LTZ(CAST(x AS BIGINT) * 1000, 3)\"]\n    watermark: ts - INTERVAL '1' SECOND\n", 1)
}

// The daemon's edits under reload for a window and a join, as for the
// GROUP BY above: the operator itself changed is refused and the old
// version keeps running; a projection added after it restarts it from
// its state.
func TestEditOfWindowAndJoin(t *testing.T) {
	for _, c := range []struct {
		name, base, changed, want string
	}{
		{"window",
			"SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
			"SELECT window_start, window_end, COUNT(*) AS n, SUM(x) AS s FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
			"transform/q/window_aggregate#1"},
		{"join",
			"SELECT a.x, b.x AS y FROM src a JOIN src b ON a.x = b.x",
			"SELECT a.x, b.x AS y FROM src a JOIN src b ON MOD(a.x, 3) = MOD(b.x, 3)",
			"transform/q/join#1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.write("g.yaml", windowJoinYAML(c.base))
			h.reload()
			h.waitState("g.yaml", Running)
			testenv.Eventually(t, 10*time.Second, "a checkpoint with the operator's state", func() error {
				store, err := checkpoint.OpenExisting(filepath.Join(h.dir, ".state"), "g")
				if err != nil {
					return err
				}
				cp, err := store.Latest()
				switch {
				case err != nil:
					return err
				case cp == nil:
					return fmt.Errorf("none yet")
				case cp.Find(c.want) == nil:
					return fmt.Errorf("checkpoint %d holds no %s", cp.ID, c.want)
				}
				return nil
			})

			h.write("g.yaml", windowJoinYAML(c.changed))
			res := h.reload()
			if !slices.Contains(res.Failed, filepath.Join(h.dir, "g.yaml")) {
				t.Errorf("reload %+v does not list the refused edit as failed", res)
			}
			st := h.status("g.yaml")
			if st.State != Running || st.Restarts != 0 {
				t.Errorf("after a refused edit the pipeline is %s with %d restarts, want the old version running", st.State, st.Restarts)
			}
			for _, want := range []string{"does not fit the edited pipeline", c.want, "the operator itself changed"} {
				if !strings.Contains(st.ReloadError, want) {
					t.Errorf("reload error %q does not say %q", st.ReloadError, want)
				}
			}

			h.write("g.yaml", windowJoinYAML("SELECT *, 1 AS one FROM ("+c.base+")"))
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
		})
	}
}

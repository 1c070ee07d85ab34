package daemon

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
)

// groupsIn waits for a checkpoint of pipeline g newer than after whose
// GROUP BY holds state, and returns its ID and the GROUP BY's group count.
func groupsIn(t *testing.T, h *harness, after int64) (id, groups int64) {
	t.Helper()
	const op = "transform/q/group_aggregate#1"
	testenv.Eventually(t, 10*time.Second, "a checkpoint with the GROUP BY's state", func() error {
		store, err := checkpoint.OpenExisting(filepath.Join(h.dir, ".state"), "g")
		if err != nil {
			return err
		}
		cp, err := store.Latest()
		switch {
		case err != nil:
			return err
		case cp == nil || cp.ID <= after:
			return fmt.Errorf("no checkpoint after %d yet", after)
		case cp.Find(op) == nil:
			return fmt.Errorf("checkpoint %d holds no %s", cp.ID, op)
		}
		id, groups = cp.ID, cp.Find(op).Entries
		return nil
	})
	return id, groups
}

// A reload whose edit widens a column of a running pipeline's GROUP BY
// (its key, INT to BIGINT) migrates the state in place: the new version
// starts, restored, with no reload error, and its groups are the old
// ones (the probe hands its 9 rows again to each run: they count into
// the 9 saved groups, not 9 more); a narrowing is refused and leaves the
// old version running.
func TestReloadWidensState(t *testing.T) {
	h := newHarness(t)
	typed := func(typ string) string {
		return statefulYAML("SELECT k, COUNT(*) AS n FROM (SELECT CAST(x AS " + typ + ") AS k FROM src) GROUP BY k")
	}
	h.write("g.yaml", typed("INT"))
	h.reload()
	h.waitState("g.yaml", Running)
	first, groups := groupsIn(t, h, 0)
	if groups != 9 {
		t.Fatalf("%d groups before the edit, want 9", groups)
	}

	h.write("g.yaml", typed("BIGINT"))
	h.reload()
	st := h.waitState("g.yaml", Running)
	if st.ReloadError != "" {
		t.Fatalf("the widening was refused: %q", st.ReloadError)
	}
	testenv.Eventually(t, 10*time.Second, "the edited version restored its state", func() error {
		if st := h.status("g.yaml"); st.Checkpoints.Restored == 0 {
			return fmt.Errorf("restored %d (state %s, error %q)", st.Checkpoints.Restored, st.State, st.Error)
		}
		return nil
	})
	if _, groups := groupsIn(t, h, first); groups != 9 {
		t.Errorf("%d groups after the widening, want the 9 saved ones", groups)
	}

	h.write("g.yaml", typed("SMALLINT"))
	h.reload()
	st = h.status("g.yaml")
	if st.State != Running || !strings.Contains(st.ReloadError, "changed from BIGINT to SMALLINT") {
		t.Errorf("a narrowing: %s, reload error %q; want the old version running and the edit refused", st.State, st.ReloadError)
	}
}

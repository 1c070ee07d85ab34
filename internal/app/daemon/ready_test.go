package daemon

import (
	"path/filepath"
	"testing"
	"time"
)

// A version stopped for its file's next one (a reload's restart) leaves
// the daemon ready, the status saying stopped and replacing; a version
// stopped for no successor does not.
func TestReadyThroughAReloadsHandOver(t *testing.T) {
	h := newHarness(t)
	h.write("a.yaml", pipelineYAML("a", "    endless: true"))
	h.write("b.yaml", pipelineYAML("b", "    endless: true"))
	h.reload()
	h.waitState("a.yaml", Running)
	h.waitState("b.yaml", Running)
	unit := func(file string) *unit {
		h.sup.mu.Lock()
		defer h.sup.mu.Unlock()
		return h.sup.units[filepath.Join(h.dir, file)]
	}
	// What apply does before it starts the new version.
	unit("a.yaml").stopForReplace(5 * time.Second)
	if st := h.status("a.yaml"); st.State != Stopped || !st.Replacing {
		t.Fatalf("a stopped for its next version: state %s, replacing %v", st.State, st.Replacing)
	}
	if ready, why := h.sup.Ready(true); !ready {
		t.Errorf("not ready during a reload's hand-over: %v", why)
	}
	unit("b.yaml").stopWithin(5 * time.Second)
	if ready, why := h.sup.Ready(false); ready || len(why) != 1 || why[0] != "pipeline b is stopped" {
		t.Errorf("Ready = %v %q, want not ready for b, stopped with nothing after it", ready, why)
	}
}

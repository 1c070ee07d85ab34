package crashtest

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKillAfterCheckpoint: a kill that waits for a checkpoint lands after
// one however early its moment: a life to be killed 1 ms after its start,
// long before the child can have written a checkpoint, leaves one, and
// the next life restores it. A kill at its moment alone restores nothing.
func TestKillAfterCheckpoint(t *testing.T) {
	for _, wait := range []bool{false, true} {
		e := &env{Dir: t.TempDir(), Vars: map[string]string{}, rnd: rand.New(rand.NewPCG(1, 1)), data: map[string]any{}}
		writesReadings(3)(t, e)
		e.Life = 1
		file := e.render(t, fileGroupByToFile.pipeline, "out")
		state := filepath.Join(e.Dir, "state")
		// Checkpoints every 5 ms: the run takes many before it ends.
		res := runLife(t, file, state, 5*time.Millisecond, killAt{time.Millisecond, wait})
		if !res.killed {
			t.Fatalf("wait=%v: the life was not killed: %v\nstderr:\n%s", wait, res.err, res.stderr)
		}
		if got := latestID(state); (got > 0) != wait {
			t.Fatalf("wait=%v: the killed life left checkpoint %d", wait, got)
		}
		if !wait {
			continue
		}
		res = runChild(t, file, state, 0)
		if res.err != nil {
			t.Fatalf("the next life: %v\nstderr:\n%s", res.err, res.stderr)
		}
		if !strings.Contains(res.stderr, "restored checkpoint") {
			t.Errorf("the next life restored no checkpoint\nstderr:\n%s", res.stderr)
		}
		referenceRun(t, e, fileGroupByToFile.pipeline)
		e.Out = "out"
		fileGroupByToFile.check(t, e)
	}
}

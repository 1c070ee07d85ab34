package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// A panic while one pipeline is planned, opened or read fails that
// pipeline, for good and with its stack in the log; the daemon and the
// other pipelines go on, at start-up as after a reload.
func TestPanicFailsOnlyItsPipeline(t *testing.T) {
	h := newHarness(t)
	h.write("a-good.yaml", pipelineYAML("good", "    endless: true"))
	h.write("b-plan.yaml", pipelineYAML("plan", "    panic: new"))
	h.write("c-open.yaml", pipelineYAML("open", "    panic: open\n    endless: true"))
	h.write("d-read.yaml", pipelineYAML("read", "    panic: read\n    endless: true"))
	res := h.reload()
	if len(res.Started) != 3 || len(res.Failed) != 1 {
		t.Errorf("reload = %+v, want 3 started and b-plan.yaml failed", baseNames(res))
	}
	h.waitState("a-good.yaml", Running)
	for file, want := range map[string]string{
		"b-plan.yaml": "panic: probe: options bug",
		"c-open.yaml": `source "src": panic: probe: open bug`,
		"d-read.yaml": `source "src": panic: runtime error: index out of range`,
	} {
		st := h.waitState(file, Failed)
		if !strings.Contains(st.Error, want) || st.Restarts != 0 {
			t.Errorf("%s: error %q after %d restarts, want %q and no restart", file, st.Error, st.Restarts, want)
		}
	}
	logs := h.logs.String()
	for _, want := range []string{`"stack":"goroutine `, "daemon_test.go"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log has no %q: the panic's stack is not logged:\n%s", want, logs)
		}
	}

	// Added by a reload, and an edit of a running file: the same.
	h.write("e-added.yaml", pipelineYAML("added", "    panic: new"))
	h.write("a-good.yaml", pipelineYAML("good", "    endless: true\n    panic: new"))
	res = h.reload()
	if len(res.Failed) != 2 {
		t.Errorf("reload = %+v, want e-added.yaml and a-good.yaml failed", baseNames(res))
	}
	if st := h.status("e-added.yaml"); st.State != Failed || !strings.Contains(st.Error, "panic: probe: options bug") {
		t.Errorf("added file: %+v", st)
	}
	if st := h.status("a-good.yaml"); st.State != Running || !strings.Contains(st.ReloadError, "panic: probe: options bug") {
		t.Errorf("edited file: %+v, want the old version running with the panic as reload error", st)
	}
}

// A record that does not decode under on_error: fail is a data error:
// the pipeline fails with the record's position and is not restarted
// until its file changes, while a transient error keeps its backoff
// (TestTransientFailureIsRetried).
func TestBadRecordFailsUntilTheFileChanges(t *testing.T) {
	h := newHarness(t)
	h.write("p.yaml", pipelineYAML("p", "    bad_record: true\n    endless: true"))
	h.reload()
	st := h.waitState("p.yaml", Failed)
	if !strings.Contains(st.Error, "probe.log:3: column x: not an integer") || st.Restarts != 0 || h.opens.Load() != 1 {
		t.Errorf("status %+v after %d opens, want failed at probe.log:3 without a restart", st, h.opens.Load())
	}
	ready, reasons := h.sup.Ready(true)
	if ready || len(reasons) != 1 || !strings.Contains(reasons[0], "probe.log:3") {
		t.Errorf("Ready = %v %q, want not ready, naming the record's position", ready, reasons)
	}
	if res := h.reload(); len(res.Unchanged) != 1 {
		t.Errorf("reload of an unchanged file = %+v", baseNames(res))
	}
	if st := h.status("p.yaml"); st.State != Failed || h.opens.Load() != 1 {
		t.Errorf("an unchanged file was restarted: %s after %d opens", st.State, h.opens.Load())
	}
	h.write("p.yaml", pipelineYAML("p", "    endless: true"))
	if res := h.reload(); len(res.Restarted) != 1 {
		t.Errorf("reload of the fixed file = %+v, want it restarted", baseNames(res))
	}
	h.waitState("p.yaml", Running)
}

// A row the sink's target refuses for good under on_error: fail is a
// data error too.
func TestRefusedRowFailsForGood(t *testing.T) {
	h := newHarness(t)
	h.write("p.yaml", strings.Replace(pipelineYAML("p", "    rows: 3\n    endless: true"), "type: blackhole", "type: refuser", 1))
	h.reload()
	st := h.waitState("p.yaml", Failed)
	if !strings.Contains(st.Error, `sink "out"`) || !strings.Contains(st.Error, "sink out, change 1 of the batch: data too long for column x") || st.Restarts != 0 {
		t.Errorf("status %+v, want failed at the refused change without a restart", st)
	}
}

// A changed file that does not load is listed with its error in
// /pipelines and in /readyz while its old version keeps running.
func TestChangedFileThatDoesNotLoadIsNotReady(t *testing.T) {
	h := newHarness(t)
	h.write("p.yaml", pipelineYAML("p", "    endless: true"))
	h.reload()
	h.waitState("p.yaml", Running)
	if ready, reasons := h.sup.Ready(true); !ready {
		t.Fatalf("not ready: %q", reasons)
	}
	h.write("p.yaml", pipelineYAML("p", "    endless: true\n    prot: 2"))
	h.reload()
	st := h.status("p.yaml")
	if st.State != Running || !strings.Contains(st.ReloadError, `p.yaml:8:5: sources[0].prot: unknown key`) {
		t.Errorf("status %+v, want running with the reload error", st)
	}
	ready, reasons := h.sup.Ready(true)
	if ready || len(reasons) != 1 || !strings.Contains(reasons[0], "does not load") || !strings.Contains(reasons[0], "prot") {
		t.Errorf("Ready = %v %q, want not ready because the changed file does not load", ready, reasons)
	}
	// Removing the file stops the pipeline and forgets the error.
	if err := os.Remove(filepath.Join(h.dir, "p.yaml")); err != nil {
		t.Fatal(err)
	}
	h.reload()
	if ready, reasons := h.sup.Ready(true); !ready {
		t.Errorf("not ready after the file was removed: %q", reasons)
	}
}

// Reverting a refused edit brings the file back to the content that
// runs: the reload leaves the pipeline running, untouched, and forgets
// the refusal (the status, readiness, the file view), or the daemon
// would stay not ready with nothing left to fix.
func TestRevertedEditClearsTheReloadError(t *testing.T) {
	h := newHarness(t)
	good := pipelineYAML("p", "    endless: true")
	h.write("p.yaml", good)
	h.reload()
	before := h.waitState("p.yaml", Running)
	h.write("p.yaml", pipelineYAML("p", "    endless: true\n    prot: 2"))
	h.reload()
	if st := h.status("p.yaml"); st.ReloadError == "" {
		t.Fatalf("the bad edit was not refused: %+v", st)
	}
	h.write("p.yaml", good)
	if res := h.reload(); len(res.Unchanged) != 1 || len(res.Failed) != 0 {
		t.Errorf("reload of the reverted file = %+v, want it unchanged", baseNames(res))
	}
	st := h.status("p.yaml")
	if st.State != Running || st.ReloadError != "" || !st.StartedAt.Equal(*before.StartedAt) {
		t.Errorf("status %+v, want the same run without a reload error", st)
	}
	if ready, reasons := h.sup.Ready(true); !ready {
		t.Errorf("not ready after the edit was reverted: %q", reasons)
	}
	if v, _ := h.sup.File("p"); v.Refused || len(v.Errors) != 0 || v.Text != good {
		t.Errorf("file view %+v, want the running content without errors", v)
	}
}

// Readiness without details names each pipeline that is not ready and
// its state, never its error: an error may quote a record, and /readyz
// shows it so to whoever may not read /pipelines.
func TestReadyWithoutDetailsShowsStatesOnly(t *testing.T) {
	h := newHarness(t)
	h.write("bad.yaml", pipelineYAML("bad", "    bad_record: true\n    endless: true"))
	h.write("edit.yaml", pipelineYAML("edit", "    endless: true"))
	h.reload()
	h.waitState("bad.yaml", Failed)
	h.waitState("edit.yaml", Running)
	h.write("edit.yaml", pipelineYAML("edit", "    endless: true\n    prot: 2"))
	h.reload()
	ready, reasons := h.sup.Ready(false)
	text := strings.Join(reasons, "\n")
	if ready || len(reasons) != 2 || !strings.Contains(text, "pipeline bad is failed") || !strings.Contains(text, "pipeline edit: the changed file does not load") {
		t.Errorf("Ready(false) = %v %q, want both pipelines named with their states", ready, reasons)
	}
	for _, detail := range []string{"probe.log", "not an integer", "prot", h.dir} {
		if strings.Contains(text, detail) {
			t.Errorf("Ready(false) shows %q: %q", detail, reasons)
		}
	}
	if _, reasons := h.sup.Ready(true); !strings.Contains(strings.Join(reasons, "\n"), "probe.log:3: column x: not an integer") {
		t.Errorf("Ready(true) = %q, want the errors", reasons)
	}
}

// waitSettled waits until file's run is no longer starting or running
// (with a bounded input, finished also counts).
func (h *harness) waitSettled(file string) Status {
	h.t.Helper()
	var st Status
	testenv.Eventually(h.t, 10*time.Second, file+" settled", func() error {
		st = h.status(file)
		if st.State == Starting || st.State == Running {
			return fmt.Errorf("state %s", st.State)
		}
		return nil
	})
	return st
}

// A run refused for good by what the state directory holds is failed,
// not retried for ever: saved state that no longer fits the file, and a
// file sink's output that no checkpoint of the pipeline covers (the
// pipeline was renamed, so it starts with new state). Neither changes
// until the file or the state directory does.
func TestRefusalsOfTheStateFail(t *testing.T) {
	h := newHarness(t)
	bounded := func(sql string) string { return strings.Replace(statefulYAML(sql), "    endless: true\n", "", 1) }
	h.write("p.yaml", bounded("SELECT MOD(x, 3) AS k, COUNT(*) AS n FROM src GROUP BY MOD(x, 3)"))
	h.reload()
	h.waitState("p.yaml", Finished)
	h.write("p.yaml", bounded("SELECT MOD(x, 3) AS k, COUNT(*) AS n, MAX(x) AS m FROM src GROUP BY MOD(x, 3)"))
	h.reload()
	if st := h.waitSettled("p.yaml"); st.State != Failed || st.Restarts != 0 || !strings.Contains(st.Error, "does not fit the edited pipeline") {
		t.Errorf("state that does not fit: %s after %d restarts (%q), want failed at once", st.State, st.Restarts, st.Error)
	}

	out := filepath.Join(t.TempDir(), "out.csv")
	withFile := func(name string) string {
		return strings.Replace(pipelineYAML(name, "    rows: 3"), "type: blackhole", "type: file\n    path: "+out+"\n    format: {type: csv}", 1)
	}
	h.write("f.yaml", withFile("f"))
	h.reload()
	h.waitState("f.yaml", Finished)
	h.write("f.yaml", withFile("f_renamed"))
	h.reload()
	if st := h.waitSettled("f.yaml"); st.State != Failed || st.Restarts != 0 || !strings.Contains(st.Error, "no checkpoint of this pipeline covers") {
		t.Errorf("renamed pipeline's output: %s after %d restarts (%q), want failed at once", st.State, st.Restarts, st.Error)
	}
}

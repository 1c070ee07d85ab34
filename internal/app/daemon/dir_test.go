package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every entry of the pipelines directory is read on its own: one that is
// not a regular file (a device, a directory, a symbolic link loop or to
// nothing) or is larger than MaxFileSize is listed as failed with why,
// and the others load, at start-up as at every reload. A symbolic link to
// a regular file is read (Kubernetes mounts a ConfigMap's files so).
func TestBadEntriesFailAlone(t *testing.T) {
	h := newHarness(t)
	h.write("good.yaml", pipelineYAML("good", "    endless: true"))
	elsewhere := filepath.Join(t.TempDir(), "real.yaml")
	if err := os.WriteFile(elsewhere, []byte(pipelineYAML("linked", "    endless: true")), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"linked.yaml": elsewhere, "zero.yaml": "/dev/zero", "loop.yaml": "loop.yaml", "dangling.yaml": "missing.yaml"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(h.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(h.dir, "dir.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.dir, filepath.Join(h.dir, "dirlink.yaml")); err != nil {
		t.Fatal(err)
	}
	h.write("big.yaml", pipelineYAML("big", "    endless: true")+"#"+strings.Repeat("x", MaxFileSize)+"\n")
	res, err := h.sup.Reload()
	if err != nil {
		t.Fatalf("one bad entry failed the whole reload: %v", err)
	}
	want := ReloadResult{Started: []string{"good.yaml", "linked.yaml"}, Failed: []string{"big.yaml", "dangling.yaml", "dir.yaml", "dirlink.yaml", "loop.yaml", "zero.yaml"}}
	if got := baseNames(res); len(got.Failed) != len(want.Failed) || strings.Join(got.Started, " ") != strings.Join(want.Started, " ") || strings.Join(got.Failed, " ") != strings.Join(want.Failed, " ") {
		t.Errorf("reload = %+v\nwant %+v", got, want)
	}
	h.waitState("good.yaml", Running)
	h.waitState("linked.yaml", Running)
	for file, why := range map[string]string{
		"big.yaml":      "larger than",
		"dangling.yaml": "no such file",
		"dir.yaml":      "not a regular file (a directory)",
		"dirlink.yaml":  "not a regular file (a directory)",
		"loop.yaml":     "too many levels of symbolic links",
		"zero.yaml":     "not a regular file (a device)",
	} {
		if st := h.status(file); st.State != Failed || !strings.Contains(st.Error, why) {
			t.Errorf("%s: %s %q, want failed: %s", file, st.State, st.Error, why)
		}
	}
	if ready, _ := h.sup.Ready(false); ready {
		t.Error("ready with entries that cannot be read")
	}

	// A later reload starts a new file beside the bad entries; one fixed
	// is read again although nothing else changed.
	h.write("new.yaml", pipelineYAML("new", "    endless: true"))
	if err := os.Remove(filepath.Join(h.dir, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere+".2", filepath.Join(h.dir, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(elsewhere+".2", []byte(pipelineYAML("fixed", "    endless: true")), 0o644); err != nil {
		t.Fatal(err)
	}
	res = h.reload()
	if got := baseNames(res); strings.Join(got.Started, " ") != "new.yaml" || strings.Join(got.Restarted, " ") != "dangling.yaml" || len(got.Failed) != 5 {
		t.Errorf("second reload = %+v, want new.yaml started, dangling.yaml in its failed entry's place, 5 still failed", got)
	}
	h.waitState("new.yaml", Running)
	h.waitState("dangling.yaml", Running)

	// A running file that becomes unreadable keeps running, refused.
	if err := os.Remove(filepath.Join(h.dir, "good.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(h.dir, "good.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.reload()
	if st := h.status("good.yaml"); st.State != Running || !strings.Contains(st.ReloadError, "not a regular file") {
		t.Errorf("good.yaml turned into a directory: %+v, want the old version running, refused", st)
	}
}

// restart stops the supervisor and starts another on the same
// directories, as a restart of etld does.
func (h *harness) restart() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.sup.Shutdown(ctx)
	h.sup = New(h.sup.opt)
}

// A pipeline name names checkpoint state: of two files that claim one,
// the file that runs under it keeps it, across a restart of etld too (a
// copy that sorts first must not take over the original's state), and
// the refused file is checked again at every reload, so it starts once
// the name is free.
func TestDuplicateNameStaysWithTheRunningFile(t *testing.T) {
	h := newHarness(t)
	h.write("b-orig.yaml", pipelineYAML("orders", "    endless: true"))
	h.reload()
	h.waitState("b-orig.yaml", Running)
	h.write("a-copy.yaml", pipelineYAML("orders", "    endless: true\n    port: 1"))
	if res := h.reload(); strings.Join(baseNames(res).Failed, " ") != "a-copy.yaml" {
		t.Errorf("reload = %+v, want the copy refused", baseNames(res))
	}

	h.restart()
	res := h.reload()
	if got := baseNames(res); strings.Join(got.Started, " ") != "b-orig.yaml" || strings.Join(got.Failed, " ") != "a-copy.yaml" {
		t.Errorf("after a restart: reload = %+v, want b-orig.yaml started and the copy refused", got)
	}
	h.waitState("b-orig.yaml", Running)
	if st := h.status("a-copy.yaml"); st.State != Failed || !strings.Contains(st.Error, `"orders" is already used by`) || !strings.Contains(st.Error, "b-orig.yaml") {
		t.Errorf("the copy after a restart: %+v", st)
	}

	// The original goes: the unchanged copy gets the name at the next
	// reload, and keeps it when the original comes back.
	if err := os.Remove(filepath.Join(h.dir, "b-orig.yaml")); err != nil {
		t.Fatal(err)
	}
	h.reload()
	h.waitState("a-copy.yaml", Running)
	h.write("b-orig.yaml", pipelineYAML("orders", "    endless: true"))
	h.reload()
	if st := h.status("b-orig.yaml"); st.State != Failed || !strings.Contains(st.Error, "a-copy.yaml") {
		t.Errorf("the original back beside the running copy: %+v", st)
	}
	if st := h.status("a-copy.yaml"); st.State != Running {
		t.Errorf("the copy: %+v", st)
	}
}

// A file edited to give its name up frees it, in the same reload, for a
// file that sorts before it and was refused.
func TestNameGivenUpInTheSameReload(t *testing.T) {
	h := newHarness(t)
	h.write("z.yaml", pipelineYAML("orders", "    endless: true"))
	h.reload()
	h.waitState("z.yaml", Running)
	h.write("a.yaml", pipelineYAML("orders", "    endless: true\n    port: 1"))
	h.reload()
	h.write("z.yaml", pipelineYAML("orders_v2", "    endless: true"))
	res := h.reload()
	if got := baseNames(res); strings.Join(got.Restarted, " ") != "a.yaml z.yaml" || len(got.Failed) != 0 {
		t.Errorf("reload = %+v, want a.yaml in its failed entry's place and z.yaml restarted", got)
	}
	h.waitState("a.yaml", Running)
	if st := h.waitState("z.yaml", Running); st.Name != "orders_v2" {
		t.Errorf("z.yaml runs %q", st.Name)
	}
}

// A second daemon on the same state directory is refused, with the
// process that holds it; the directory is free again once released.
func TestStateDirLock(t *testing.T) {
	dir := t.TempDir()
	release, err := LockStateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockStateDir(dir); err == nil || !strings.Contains(err.Error(), "in use by another etld") || !strings.Contains(err.Error(), "pid ") || !strings.Contains(err.Error(), dir) {
		t.Errorf("second lock: %v, want refused naming the directory and the holder", err)
	}
	release()
	release2, err := LockStateDir(dir)
	if err != nil {
		t.Errorf("lock after release: %v", err)
	} else {
		release2()
	}
	if _, err := LockStateDir(filepath.Join(dir, "missing", "deeper")); err != nil {
		t.Errorf("a state dir that does not exist yet is made: %v", err)
	}
}

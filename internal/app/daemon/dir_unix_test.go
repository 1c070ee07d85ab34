//go:build unix

package daemon

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A named pipe in the directory is refused, without waiting for a writer.
func TestNamedPipeEntryFails(t *testing.T) {
	h := newHarness(t)
	if err := syscall.Mkfifo(filepath.Join(h.dir, "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.write("good.yaml", pipelineYAML("good", ""))
	if res := h.reload(); strings.Join(baseNames(res).Failed, " ") != "fifo.yaml" || len(res.Started) != 1 {
		t.Errorf("reload = %+v", baseNames(res))
	}
	if st := h.status("fifo.yaml"); !strings.Contains(st.Error, "not a regular file (a named pipe)") {
		t.Errorf("fifo.yaml: %q", st.Error)
	}
}

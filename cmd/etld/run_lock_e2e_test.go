package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// lockPipeline follows a file, so that a run of it goes on until it is
// stopped, and counts its rows per key.
const lockPipeline = `version: 1
name: locked
sources:
  - name: a
    type: file
    path: %s
    follow: true
    monitor_interval: 20ms
    schema: [k STRING]
transforms:
  - name: q
    sql: SELECT k, COUNT(*) AS n FROM a GROUP BY k
sinks:
  - name: out
    from: q
    type: blackhole
`

// TestRunLocksTheStateDir: a one-shot `etld run --state-dir` takes the
// daemon's lock on the state directory, so that `etld state reset` and
// a second run beside it are refused, naming the process, rather than
// writing under a run that would undo them; the lock goes with the run.
func TestRunLocksTheStateDir(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.csv")
	writeFile(t, input, "x\ny\n")
	file := filepath.Join(dir, "locked.yaml")
	writeFile(t, file, fmt.Sprintf(lockPipeline, input))
	state := filepath.Join(dir, "state")

	cmd := exec.Command(etldBin, "run", "--quiet", "--state-dir", state, "--checkpoint-interval", "20ms", file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	}()
	pid := strconv.Itoa(cmd.Process.Pid)
	testenv.Eventually(t, 20*time.Second, "the run's pid in the lock file", func() error {
		select {
		case err := <-exited:
			t.Fatalf("etld run ended: %v: %s", err, stderr.String())
		default:
		}
		data, err := os.ReadFile(filepath.Join(state, ".daemon.lock"))
		if err != nil || strings.TrimSpace(string(data)) != pid {
			return fmt.Errorf("lock file: %q, %v", data, err)
		}
		return nil
	})

	code, _, errOut := etldCLI("state", "reset", state, "locked", "--pipeline", file)
	if code != 1 || !strings.Contains(errOut, "held by a running etld (pid "+pid) {
		t.Errorf("state reset beside a run: exit %d: %s", code, errOut)
	}
	code, _, errOut = etldCLI("run", "--quiet", "--state-dir", state, file)
	if code != 1 || !strings.Contains(errOut, "is in use by another etld (pid "+pid+")") {
		t.Errorf("a second run on the state directory: exit %d: %s", code, errOut)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("etld run after SIGTERM: %v: %s", err, stderr.String())
	}
	// The lock went with the run: a reset goes ahead.
	if code, out, errOut := etldCLI("state", "reset", state, "locked", "--pipeline", file); code != 0 || !strings.Contains(out, "removed the state of pipeline locked") {
		t.Errorf("state reset after the run: exit %d: %s%s", code, out, errOut)
	}
}

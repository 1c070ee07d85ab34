package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// sidecarProc is etld running a pipeline that does not end by itself.
type sidecarProc struct {
	cmd    *exec.Cmd
	stderr *testenv.Buffer
	done   chan struct{}
	err    error
}

func startSidecar(t *testing.T, dir string, args ...string) *sidecarProc {
	t.Helper()
	d := &sidecarProc{cmd: exec.Command(etldBin, args...), stderr: &testenv.Buffer{}, done: make(chan struct{})}
	d.cmd.Dir = dir
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		select {
		case <-d.done:
		default:
			d.cmd.Process.Kill()
			<-d.done
		}
	})
	return d
}

// stop sends SIGTERM and returns the exit code.
func (d *sidecarProc) stop(t *testing.T) int {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("etld did not stop within 30 s of SIGTERM; stderr:\n%s", d.stderr)
	}
	if ee, ok := d.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if d.err != nil {
		t.Fatal(d.err)
	}
	return 0
}

// waitFor polls until cond holds, failing with what last printed after
// 20 s. The sidecarProc dying is a failure at once.
func (d *sidecarProc) waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, state := cond()
		if ok {
			return
		}
		select {
		case <-d.done:
			t.Fatalf("etld exited (%v) while waiting for %s; %s\nstderr:\n%s", d.err, what, state, d.stderr)
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; %s\nstderr:\n%s", what, state, d.stderr)
		case <-tick.C:
		}
	}
}

func sidecarAppend(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSidecarFollow runs a follow pipeline over a log that grows, is
// rotated (renamed, with the writer still finishing the old file) and
// truncated, and checks that every line reaches the output exactly once,
// in order, and that SIGTERM ends the run with exit code 0.
func TestSidecarFollow(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "app.log")
	out := filepath.Join(dir, "out", "lines.txt")
	pipeline := `version: 1
name: tail
sources:
  - name: app_log
    type: file
    path: app.log
    follow: true
    monitor_interval: 20ms
    format: raw
    schema: [line STRING]
transforms:
  - name: requests
    sql: SELECT UPPER(line) AS line FROM app_log WHERE line LIKE 'req %'
sinks:
  - name: out
    from: requests
    type: file
    path: out/lines.txt
    format: raw
`
	if err := os.WriteFile(filepath.Join(dir, "tail.yaml"), []byte(pipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	var want []string
	// write appends k request lines and a line the query filters out.
	write := func(path string, k int) {
		var lines []string
		for range k {
			n++
			lines = append(lines, fmt.Sprintf("req %d", n))
			want = append(want, fmt.Sprintf("REQ %d", n))
		}
		sidecarAppend(t, path, append(lines, "debug noise")...)
	}
	outputHasAll := func() (bool, string) {
		data, _ := os.ReadFile(out)
		got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		return slices.Equal(got, want), fmt.Sprintf("output:\n%s\nwant:\n%s", data, strings.Join(want, "\n"))
	}

	write(log, 3)
	d := startSidecar(t, dir, "run", "--quiet", "--log-format", "json", "tail.yaml")
	d.waitFor(t, "the first lines", outputHasAll)
	write(log, 2)
	d.waitFor(t, "appended lines", outputHasAll)

	// Rotation: rename, the writer finishes the old file, a new one
	// takes the name.
	if err := os.Rename(log, log+".1"); err != nil {
		t.Fatal(err)
	}
	write(log+".1", 2)
	write(log, 2)
	d.waitFor(t, "the lines around the rotation", outputHasAll)

	// copytruncate: the content is copied away, the file emptied, and
	// the writer goes on at its start.
	if err := os.Truncate(log, 0); err != nil {
		t.Fatal(err)
	}
	write(log, 1)
	d.waitFor(t, "the line after the truncation", outputHasAll)
	write(log, 3)
	d.waitFor(t, "more lines", outputHasAll)

	if code := d.stop(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM; stderr:\n%s", code, d.stderr)
	}
	if ok, state := outputHasAll(); !ok {
		t.Errorf("after the stop: %s", state)
	}
	if !strings.Contains(d.stderr.String(), "truncated") {
		t.Errorf("the truncation was not logged:\n%s", d.stderr)
	}
}

// TestSidecarExample runs configs/examples/sidecar-logs.yaml, appends a
// line to its log and stops it.
func TestSidecarExample(t *testing.T) {
	dir := workdir(t)
	out := filepath.Join(dir, "out", "app-requests.json")
	d := startSidecar(t, dir, "run", "--quiet", "configs/examples/sidecar-logs.yaml")
	first := `{"ts":"2024-01-01T10:00:00Z","level":"INFO","user_id":42,"path":"/api/orders","status":200,"ms":12,"region":"eu"}`
	added := `{"ts":"2024-01-01T10:00:09Z","level":"INFO","user_id":5,"path":"/api/x","status":201,"ms":7,"region":"ap"}`
	lines := func() []string {
		data, _ := os.ReadFile(out)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	d.waitFor(t, "the example's requests", func() (bool, string) {
		got := lines()
		return len(got) == 3 && got[0] == first, strings.Join(got, "\n")
	})
	sidecarAppend(t, filepath.Join(dir, "configs", "examples", "data", "app.log"),
		`2024-01-01T10:00:09Z INFO user=5 path=/api/x status=201 ms=7 ctx={"region":"ap"}`)
	d.waitFor(t, "the appended request", func() (bool, string) {
		got := lines()
		return len(got) == 4 && got[3] == added, strings.Join(got, "\n")
	})
	if code := d.stop(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM; stderr:\n%s", code, d.stderr)
	}
}

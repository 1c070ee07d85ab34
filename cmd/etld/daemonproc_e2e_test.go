// The daemon end-to-end tests' harness: etld as a child process, its log
// lines, and its admin server's answers; the console and shutdown tests
// use it too.

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// daemonProc is `etld run --daemon|--config` running as a child process,
// its JSON log lines collected as they come.
type daemonProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []map[string]any
	raw   bytes.Buffer
	done  chan struct{}
	err   error
}

// startDaemon starts etld in dir with args and env added to the
// environment.
func startDaemon(t *testing.T, dir string, env []string, args ...string) *daemonProc {
	t.Helper()
	d := &daemonProc{t: t, done: make(chan struct{})}
	d.cmd = exec.Command(etldBin, append([]string{"run"}, args...)...)
	d.cmd.Dir = dir
	// Checkpoints go to the test's own state dir, never /var/lib/etld:
	// pipelines of the same name in other tests would resume from them.
	d.cmd.Env = append(append(os.Environ(), "ETLD_STATE_DIR="+t.TempDir()), env...)
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			_ = json.Unmarshal(sc.Bytes(), &m)
			d.mu.Lock()
			d.raw.Write(sc.Bytes())
			d.raw.WriteByte('\n')
			if m != nil {
				d.lines = append(d.lines, m)
			}
			d.mu.Unlock()
		}
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
		if t.Failed() {
			t.Logf("etld log:\n%s", d.logs())
		}
	})
	return d
}

func (d *daemonProc) logs() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.raw.String()
}

// logged returns the first log line with msg whose attributes match.
func (d *daemonProc) logged(msg string, attrs ...string) map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
next:
	for _, l := range d.lines {
		if l["msg"] != msg {
			continue
		}
		for i := 0; i+1 < len(attrs); i += 2 {
			if fmt.Sprint(l[attrs[i]]) != attrs[i+1] {
				continue next
			}
		}
		return l
	}
	return nil
}

func (d *daemonProc) waitLog(msg string, attrs ...string) map[string]any {
	d.t.Helper()
	var line map[string]any
	testenv.Eventually(d.t, 30*time.Second, "log line "+msg, func() error {
		if line = d.logged(msg, attrs...); line == nil {
			select {
			case <-d.done:
				d.t.Fatalf("etld exited (%v) before logging %q", d.err, msg)
			default:
			}
			return fmt.Errorf("not logged yet")
		}
		return nil
	})
	return line
}

// adminURL waits for the admin server and returns its base URL.
func (d *daemonProc) adminURL() string {
	d.t.Helper()
	return "http://" + fmt.Sprint(d.waitLog("admin server listening")["address"])
}

// exitCode waits for the process to end.
func (d *daemonProc) exitCode() int {
	d.t.Helper()
	select {
	case <-d.done:
	case <-time.After(60 * time.Second):
		d.t.Fatal("etld did not exit")
	}
	if ee, ok := d.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if d.err != nil {
		d.t.Fatal(d.err)
	}
	return 0
}

func (d *daemonProc) signal(sig os.Signal) {
	d.t.Helper()
	if err := d.cmd.Process.Signal(sig); err != nil {
		d.t.Fatal(err)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

type pipelineStatus struct {
	Name        string     `json:"name"`
	File        string     `json:"file"`
	State       string     `json:"state"`
	Error       string     `json:"error"`
	ReloadError string     `json:"reload_error"`
	StartedAt   *time.Time `json:"started_at"`
	Restarts    int        `json:"restarts"`
	Sources     []struct {
		Name string `json:"name"`
		In   int64  `json:"rows_in"`
	} `json:"sources"`
	Sinks []struct {
		Name string `json:"name"`
		Out  int64  `json:"rows_out"`
	} `json:"sinks"`
}

func pipelines(t *testing.T, base string) map[string]pipelineStatus {
	t.Helper()
	code, body := httpGet(t, base+"/pipelines")
	if code != 200 {
		t.Fatalf("/pipelines = %d %s", code, body)
	}
	var list []pipelineStatus
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("/pipelines: %v\n%s", err, body)
	}
	out := map[string]pipelineStatus{}
	for _, p := range list {
		out[filepath.Base(p.File)] = p
	}
	return out
}

// metric returns the value of the series (name plus labels, as printed).
func metric(t *testing.T, base, series string) (float64, bool) {
	t.Helper()
	_, body := httpGet(t, base+"/metrics")
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

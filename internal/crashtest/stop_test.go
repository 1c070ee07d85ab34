package crashtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// buildEtld builds cmd/etld into a directory of t's, for the tests that
// need the real command: its signal handling and shutdown_timeout live
// there.
func buildEtld(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "etld")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/etld/etld/cmd/etld").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/etld: %v\n%s", err, out)
	}
	return bin
}

// etldProc is `etld run` as a child process, its stderr kept.
type etldProc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan struct{}
	err    error
}

type lockedWriter struct{ p *etldProc }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.stderr.Write(b)
}

func startEtld(t *testing.T, bin string, env []string, args ...string) *etldProc {
	t.Helper()
	p := &etldProc{exited: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"run"}, args...)...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = lockedWriter{p}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *etldProc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// line is the first JSON log line whose message starts with msg.
func (p *etldProc) line(msg string) map[string]any {
	sc := bufio.NewScanner(strings.NewReader(p.logs()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && strings.HasPrefix(fmt.Sprint(m["msg"]), msg) {
			return m
		}
	}
	return nil
}

// exitCode waits for the process, at most a minute.
func (p *etldProc) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		t.Fatalf("etld did not exit within a minute\n%s", p.logs())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

// TestStopDuringAnOutage stops etld (the command, with its signal
// handling) while its MySQL sink's server is down for real (a private
// MariaDB, stopped), a seeded 2-3 times, each time by the
// shutdown_timeout or by a second signal (seeded): etld must exit 1 by
// the deadline, naming in its log the checkpoint on disk that the next
// start resumes from. The server is started again between the stops;
// a last run finishes, and the table is exactly the query's result.
func TestStopDuringAnOutage(t *testing.T) {
	rnd := seedOf(t, "stop during an outage")
	bin := buildEtld(t)
	m := testenv.StartMariaDB(t)
	db := m.Open()
	const rows, rate, keys = 60_000, 5_000, 50 // twelve seconds of input
	const timeout = 2 * time.Second
	table := fmt.Sprintf("stop_%d", rnd.IntN(1_000_000))
	dir := t.TempDir()
	file := filepath.Join(dir, "stop.yaml")
	if err := os.WriteFile(file, []byte(outagePipeline("stop", "ETLD_PRIVATE_DSN", table, rows, rate, keys)), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	env := []string{"ETLD_PRIVATE_DSN=" + m.DSN}
	args := []string{"--state-dir", state, "--shutdown-timeout", timeout.String(), "--log-format", "json", "--quiet", file}

	stops := 2 + rnd.IntN(2)
	var counted, resumed int64
	for i := range stops {
		p := startEtld(t, bin, env, args...)
		// Progress since the last stop: the run has checkpoints to lose.
		target := counted + int64(rows/20+rnd.IntN(rows/10))
		testenv.Eventually(t, time.Minute, fmt.Sprintf("stop %d: %d rows counted", i+1, target), func() error {
			select {
			case <-p.exited:
				t.Fatalf("etld exited before the stop: %v\n%s", p.err, p.logs())
			default:
			}
			n, err := rowsCounted(db, table)
			if err != nil {
				return err
			}
			if n < target {
				return fmt.Errorf("%d rows counted", n)
			}
			return nil
		})
		m.Stop()
		second := rnd.IntN(2) == 0
		start := time.Now()
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		limit := timeout + 4*time.Second
		if second {
			testenv.Eventually(t, 30*time.Second, "the stopping line", func() error {
				if p.line("stopping") == nil {
					return errors.New("not logged yet")
				}
				return nil
			})
			start = time.Now()
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			limit = 3 * time.Second
		}
		code := p.exitCode(t)
		took := time.Since(start)
		t.Logf("stop %d (second signal: %v): exit %d after %s", i+1, second, code, took.Round(time.Millisecond))
		if code != 1 {
			t.Errorf("stop %d: exit %d, want 1", i+1, code)
		}
		if took > limit || (!second && took < timeout) {
			t.Errorf("stop %d: exited %s after the signal, want within %s (and not before shutdown_timeout %s without a second signal)", i+1, took.Round(time.Millisecond), limit, timeout)
		}
		line := p.line("pipeline did not stop in time")
		if line == nil {
			t.Fatalf("stop %d: no abandon line\n%s", i+1, p.logs())
		}
		named := fmt.Sprint(line["resume_from_checkpoint"])
		onDisk := fmt.Sprint(latestID(state))
		if named != onDisk || named == "0" {
			t.Errorf("stop %d: the log names checkpoint %s, the newest on disk is %s", i+1, named, onDisk)
		}
		var n int64
		fmt.Sscan(named, &n)
		if n < resumed {
			t.Errorf("stop %d: checkpoint %d, older than the %d resumed from", i+1, n, resumed)
		}
		resumed = n
		m.Start()
		m.WaitReady()
		// Counted once the server is back: read while it was down, the
		// count was 0 and the next stop's target already met, so that
		// stop could signal etld before it had set up its signals.
		c, err := rowsCounted(db, table)
		if err != nil {
			t.Fatal(err)
		}
		if counted = c; counted >= rows {
			t.Fatalf("stop %d: every row was counted: the stops did not land mid-run", i+1)
		}
	}

	last := startEtld(t, bin, env, args...)
	if code := last.exitCode(t); code != 0 {
		t.Fatalf("last run: exit %d\n%s", code, last.logs())
	}
	if got, want := tableRows(t, db, table), outageWant(rows, keys); !slices.Equal(got, want) {
		t.Errorf("table %s after %d stops has %d rows, want %d:\n%s", table, stops, len(got), len(want), diffLines(want, got))
	}
}

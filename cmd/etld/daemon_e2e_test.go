package main

import (
	"context"
	"debug/elf"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

const endlessDatagen = `version: 1
name: %s
sources:
  - name: gen
    type: datagen
    rate: 20
    schema: [n INT]
sinks:
  - name: out
    from: gen
    type: blackhole
`

// pipelinesDir makes a pipelines dir in a copy of the examples, with the
// messages example (5 rows from a CSV file, bounded) and files.
func pipelinesDir(t *testing.T, files map[string]string) (work, dir string) {
	t.Helper()
	work = workdir(t)
	dir = filepath.Join(work, "pipelines")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	msgs := strings.Replace(readFile(t, filepath.Join(work, "configs/examples/messages.yaml")), "type: print", "type: blackhole", 1)
	files["messages.yaml"] = msgs
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	return work, dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDaemonReadyAndMetrics(t *testing.T) {
	work, _ := pipelinesDir(t, map[string]string{"gen.yaml": fmt.Sprintf(endlessDatagen, "gen")})
	// etld.yaml with a relative pipelines dir (from the file's directory)
	// and a variable; the flag's log level wins over the file's.
	writeFile(t, filepath.Join(work, "etld.yaml"), "pipelines: pipelines\nadmin:\n  address: ${ETLD_E2E_ADDR}\nlog:\n  level: warn\n  format: json\n")
	// The examples' data paths are relative to the working directory.
	state := t.TempDir()
	env := []string{"ETLD_E2E_ADDR=127.0.0.1:0", "ETLD_STATE_DIR=" + state}
	d := startDaemon(t, work, env, "--config", filepath.Join(work, "etld.yaml"), "--log-level", "info")
	base := d.adminURL()

	if code, body := httpGet(t, base+"/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	testenv.Eventually(t, 30*time.Second, "/readyz 200", func() error {
		if code, body := httpGet(t, base+"/readyz"); code != 200 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	// The bounded pipeline finishes and stays listed with its counters;
	// the endless one keeps running.
	testenv.Eventually(t, 30*time.Second, "messages finished", func() error {
		if st := pipelines(t, base)["messages.yaml"]; st.State != "finished" {
			return fmt.Errorf("state %q", st.State)
		}
		return nil
	})
	ps := pipelines(t, base)
	if st := ps["messages.yaml"]; st.Name != "messages" || len(st.Sources) != 1 || st.Sources[0].In != 5 || st.Sinks[0].Out != 5 || st.StartedAt == nil {
		t.Errorf("messages status = %+v, want 5 rows in and out", st)
	}
	if st := ps["gen.yaml"]; st.State != "running" {
		t.Errorf("gen status = %+v", st)
	}
	daemonMetricsMatch(t, base, work)
	if _, err := os.Stat(filepath.Join(state, "messages")); err != nil {
		t.Errorf("no checkpoint under the state dir: %v", err)
	}
	secondDaemonRefused(t, work, env)
	// The info line proves the flag overrode the file's warn level.
	if d.logged("started") == nil {
		t.Error("no info line: --log-level did not override the file")
	}
	// etld healthcheck finds the admin address in the same config file
	// (with its ${VAR}) while the daemon runs.
	hc := exec.Command(etldBin, "healthcheck", "--config", filepath.Join(work, "etld.yaml"))
	hc.Env = append(os.Environ(), "ETLD_E2E_ADDR="+strings.TrimPrefix(base, "http://"))
	if out, err := hc.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("etld healthcheck --config: %v %s", err, out)
	}
	d.signal(syscall.SIGTERM)
	if code := d.exitCode(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0", code)
	}
	if l := d.logged("final state", "pipeline", "gen"); l == nil || l["state"] != "stopped" {
		t.Errorf("final state of gen = %v, want stopped", l)
	}
	if l := d.logged("final state", "pipeline", "messages"); l == nil || l["state"] != "finished" || l["rows_out"] != float64(5) {
		t.Errorf("final state of messages = %v, want finished with 5 rows out", l)
	}
	finishedPipelineResumes(t, work, env)
}

// daemonMetricsMatch checks the metrics of the messages and gen pipelines
// that TestDaemonReadyAndMetrics runs in work.
func daemonMetricsMatch(t *testing.T, base, work string) {
	t.Helper()
	want := map[string]float64{
		`etld_source_rows_read_total{pipeline="messages",source="messages"}`: 5,
		`etld_sink_rows_written_total{pipeline="messages",sink="console"}`:   5,
		`etld_pipeline_state{pipeline="messages",state="finished"}`:          1,
		`etld_pipeline_state{pipeline="gen",state="running"}`:                1,
		`etld_pipeline_state{pipeline="gen",state="failed"}`:                 0,
		// The file source counts the bytes of its file (README lists it).
		`etld_source_bytes_total{pipeline="messages",source="messages"}`: float64(len(readFile(t, filepath.Join(work, "configs/examples/data/messages.csv")))),
	}
	for series, v := range want {
		if got, ok := metric(t, base, series); !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, v)
		}
	}
	testenv.Eventually(t, 30*time.Second, "datagen rows counted", func() error {
		if got, _ := metric(t, base, `etld_source_rows_read_total{pipeline="gen",source="gen"}`); got < 1 {
			return fmt.Errorf("%v rows", got)
		}
		return nil
	})
	if got, _ := metric(t, base, `etld_checkpoints_total{pipeline="messages"}`); got < 1 {
		t.Errorf("etld_checkpoints_total{pipeline=\"messages\"} = %v, want the final checkpoint at least", got)
	}
	if _, ok := metric(t, base, `etld_checkpoint_last_size_bytes{pipeline="messages"}`); !ok {
		t.Error("no checkpoint size for messages")
	}
}

// secondDaemonRefused starts a second daemon on the state directory of
// the one running: it is refused at once (the deadline only bounds a
// daemon that would run).
func secondDaemonRefused(t *testing.T, work string, env []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	second := exec.CommandContext(ctx, etldBin, "run", "--config", filepath.Join(work, "etld.yaml"))
	second.Dir, second.Env = work, append(os.Environ(), env...)
	out, _ := second.CombinedOutput()
	cancel()
	if code := second.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "is in use by another etld (pid ") {
		t.Errorf("a second daemon on the same state_dir: exit %d\n%s", code, out)
	}
}

// finishedPipelineResumes starts the daemon again on the same state dir:
// the finished file pipeline resumes from its checkpoint at the end of
// its input, so no row is written twice.
func finishedPipelineResumes(t *testing.T, work string, env []string) {
	t.Helper()
	d := startDaemon(t, work, env, "--config", filepath.Join(work, "etld.yaml"), "--log-level", "info")
	base := d.adminURL()
	testenv.Eventually(t, 30*time.Second, "messages finished again", func() error {
		if st := pipelines(t, base)["messages.yaml"]; st.State != "finished" {
			return fmt.Errorf("state %q", st.State)
		}
		return nil
	})
	if got, ok := metric(t, base, `etld_sink_rows_written_total{pipeline="messages",sink="console"}`); !ok || got != 0 {
		t.Errorf("after a restart the messages sink wrote %v rows, want 0", got)
	}
	d.signal(syscall.SIGTERM)
	if code := d.exitCode(); code != 0 {
		t.Errorf("second run: exit code %d", code)
	}
	// The runtime's restore line names the pipeline its logger is scoped
	// to already: the JSON line has the key once.
	if d.logged("pipeline finished in an earlier run: nothing left to read; to run it again from the start: etld state reset STATE_DIR PIPELINE --pipeline FILE", "pipeline", "messages") == nil {
		t.Error("the second run did not log the restore of the finished pipeline")
	}
	assertUniqueKeys(t, d.logs())
}

func TestDaemonReloadOnSIGHUP(t *testing.T) {
	_, dir := pipelinesDir(t, map[string]string{
		"same.yaml": fmt.Sprintf(endlessDatagen, "same"),
		"edit.yaml": fmt.Sprintf(endlessDatagen, "edit"),
		"typo.yaml": fmt.Sprintf(endlessDatagen, "typo"),
	})
	d := startDaemon(t, filepath.Dir(dir), []string{"ETLD_ADMIN_ADDRESS=127.0.0.1:0", "ETLD_PIPELINES=" + dir}, "--daemon")
	base := d.adminURL()
	testenv.Eventually(t, 30*time.Second, "/readyz 200", func() error {
		if code, body := httpGet(t, base+"/readyz"); code != 200 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	before := pipelines(t, base)

	writeFile(t, filepath.Join(dir, "edit.yaml"), strings.Replace(fmt.Sprintf(endlessDatagen, "edit"), "rate: 20", "rate: 30", 1))
	writeFile(t, filepath.Join(dir, "typo.yaml"), strings.Replace(fmt.Sprintf(endlessDatagen, "typo"), "rate: 20", "rat: 30", 1))
	writeFile(t, filepath.Join(dir, "added.yaml"), fmt.Sprintf(endlessDatagen, "added"))
	// A new file that does not load, and one whose second record does
	// not decode under on_error: fail (the default).
	writeFile(t, filepath.Join(dir, "broken.yaml"), "version: 1\nname: [oops\n")
	badCSV := filepath.Join(t.TempDir(), "bad.csv")
	writeFile(t, badCSV, "1\nnot-a-number\n3\n")
	writeFile(t, filepath.Join(dir, "badrow.yaml"), "version: 1\nname: badrow\nsources:\n  - name: rows\n    type: file\n    path: "+badCSV+"\n    format: csv\n    schema: [n INT]\nsinks:\n  - name: out\n    from: rows\n    type: blackhole\n")
	d.signal(syscall.SIGHUP)
	d.waitLog("reloaded")

	testenv.Eventually(t, 30*time.Second, "reload applied", func() error {
		ps := pipelines(t, base)
		if ps["added.yaml"].State != "running" || ps["edit.yaml"].State != "running" {
			return fmt.Errorf("added %q, edit %q", ps["added.yaml"].State, ps["edit.yaml"].State)
		}
		return nil
	})
	after := pipelines(t, base)
	if !after["same.yaml"].StartedAt.Equal(*before["same.yaml"].StartedAt) {
		t.Errorf("unchanged pipeline restarted: started_at %v, before %v", after["same.yaml"].StartedAt, before["same.yaml"].StartedAt)
	}
	if !after["edit.yaml"].StartedAt.After(*before["edit.yaml"].StartedAt) {
		t.Errorf("changed pipeline not restarted: started_at %v, before %v", after["edit.yaml"].StartedAt, before["edit.yaml"].StartedAt)
	}
	typo := after["typo.yaml"]
	if typo.State != "running" || !typo.StartedAt.Equal(*before["typo.yaml"].StartedAt) || !strings.Contains(typo.ReloadError, "typo.yaml:6:5") || !strings.Contains(typo.ReloadError, `did you mean "rate"?`) {
		t.Errorf("broken edit: %+v, want the old version running and the load error", typo)
	}
	if d.logged("changed pipeline file does not load; the previous version keeps running", "pipeline", "typo") == nil {
		t.Error("the broken edit was not logged")
	}
	if got, _ := metric(t, base, `etld_reloads_total{result="error"}`); got != 1 {
		t.Errorf("etld_reloads_total{result=\"error\"} = %v, want 1", got)
	}
	if got, _ := metric(t, base, `etld_pipeline_reload_failed{pipeline="typo"}`); got != 1 {
		t.Errorf("etld_pipeline_reload_failed{pipeline=\"typo\"} = %v, want 1", got)
	}
	if st := after["broken.yaml"]; st.State != "failed" || !strings.Contains(st.Error, "broken.yaml:") {
		t.Errorf("new file that does not load: %+v, want failed with its file:line:col error", st)
	}
	// A data error is permanent: failed with the record's position, and
	// not restarted.
	var bad pipelineStatus
	testenv.Eventually(t, 30*time.Second, "badrow failed", func() error {
		if bad = pipelines(t, base)["badrow.yaml"]; bad.State != "failed" {
			return fmt.Errorf("state %q, restarts %d, error %q", bad.State, bad.Restarts, bad.Error)
		}
		return nil
	})
	if !strings.Contains(bad.Error, badCSV+":2") || bad.Restarts != 0 {
		t.Errorf("bad record: %+v, want failed at %s:2 without a restart", bad, badCSV)
	}
	code, body := httpGet(t, base+"/readyz")
	for _, want := range []string{"typo.yaml): the changed file does not load", "broken.yaml", badCSV + ":2"} {
		if code != 503 || !strings.Contains(body, want) {
			t.Errorf("/readyz = %d, lacks %q:\n%s", code, want, body)
		}
	}

	// A removed file stops on the next reload.
	if err := os.Remove(filepath.Join(dir, "added.yaml")); err != nil {
		t.Fatal(err)
	}
	d.signal(syscall.SIGHUP)
	testenv.Eventually(t, 30*time.Second, "removed pipeline gone", func() error {
		if st, ok := pipelines(t, base)["added.yaml"]; ok {
			return fmt.Errorf("still listed: %s", st.State)
		}
		return nil
	})
	d.signal(syscall.SIGTERM)
	if code := d.exitCode(); code != 0 {
		t.Errorf("exit code = %d", code)
	}
}

// notifySocket listens where the daemon's NOTIFY_SOCKET points and
// collects the datagrams.
func notifySocket(t *testing.T) (string, func() []string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sd") // unix socket paths are short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var mu sync.Mutex
	var msgs []string
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			mu.Lock()
			msgs = append(msgs, string(buf[:n]))
			mu.Unlock()
		}
	}()
	return path, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), msgs...)
	}
}

func TestDaemonSdNotify(t *testing.T) {
	_, dir := pipelinesDir(t, map[string]string{"gen.yaml": fmt.Sprintf(endlessDatagen, "gen")})
	sock, received := notifySocket(t)
	d := startDaemon(t, filepath.Dir(dir), []string{"NOTIFY_SOCKET=" + sock, "WATCHDOG_USEC=100000"},
		"--daemon", "--pipelines", dir, "--admin-enabled", "false")
	// sequence waits for the messages seen so far, watchdog pings aside,
	// to end with want.
	sequence := func(want ...string) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, strings.Join(want, ", "), func() error {
			var got []string
			for _, m := range received() {
				if m != "WATCHDOG=1" {
					got = append(got, strings.SplitN(m, "\n", 2)[0])
				}
			}
			if len(got) < len(want) || strings.Join(got[len(got)-len(want):], " ") != strings.Join(want, " ") {
				return fmt.Errorf("received %q", got)
			}
			return nil
		})
	}
	sequence("READY=1")
	testenv.Eventually(t, 30*time.Second, "watchdog pings", func() error {
		n := 0
		for _, m := range received() {
			if m == "WATCHDOG=1" {
				n++
			}
		}
		if n < 3 {
			return fmt.Errorf("%d pings", n)
		}
		return nil
	})
	d.signal(syscall.SIGHUP)
	sequence("READY=1", "RELOADING=1", "READY=1")
	for _, m := range received() {
		if strings.HasPrefix(m, "RELOADING=1") && !strings.Contains(m, "\nMONOTONIC_USEC=") {
			t.Errorf("RELOADING=1 without MONOTONIC_USEC: %q", m)
		}
	}
	d.signal(syscall.SIGTERM)
	if code := d.exitCode(); code != 0 {
		t.Errorf("exit code = %d", code)
	}
	sequence("READY=1", "RELOADING=1", "READY=1", "STOPPING=1")
}

func TestDaemonAdminOnLoopbackByDefault(t *testing.T) {
	_, dir := pipelinesDir(t, map[string]string{})
	d := startDaemon(t, filepath.Dir(dir), nil, "--daemon", "--pipelines", dir)
	addr := fmt.Sprint(d.waitLog("admin server listening")["address"])
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() || port != "9464" {
		t.Errorf("default admin address %s is not loopback:9464", addr)
	}
	// The kernel's socket table: nothing of ours listens on a wildcard or
	// outside address on that port.
	if tcp, err := os.ReadFile("/proc/net/tcp"); err == nil {
		p, _ := strconv.Atoi(port)
		suffix := fmt.Sprintf(":%04X", p)
		for _, line := range strings.Split(string(tcp), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) > 3 && f[3] == "0A" && strings.HasSuffix(f[1], suffix) && f[1] != "0100007F"+suffix {
				t.Errorf("a listener on port %d is not 127.0.0.1: %s", p, f[1])
			}
		}
	}
	// etld healthcheck finds the default address by itself.
	if out, stderr, code := etld(t, t.TempDir(), "healthcheck"); code != 0 || strings.TrimSpace(out) != "ok" {
		t.Errorf("etld healthcheck = %d %q %q", code, out, stderr)
	}
	// A page of another site whose name resolves to loopback (DNS
	// rebinding) sends its own name as Host: refused on every path.
	for host, want := range map[string]int{"evil.example.com:" + port: http.StatusMisdirectedRequest, "localhost:" + port: 200} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/pipelines", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /pipelines with Host %s = %d, want %d", host, resp.StatusCode, want)
		}
	}
	d.signal(syscall.SIGINT)
	if code := d.exitCode(); code != 0 {
		t.Errorf("exit code after SIGINT = %d", code)
	}
	if _, _, code := etld(t, t.TempDir(), "healthcheck", "http://"+addr+"/healthz"); code != 1 {
		t.Errorf("etld healthcheck with the daemon gone = %d, want 1", code)
	}
}

func TestStaticBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "etld")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Skipf("not an ELF platform: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary asks for a dynamic loader: not static, it would not run on distroless/static or scratch")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary links %v", libs)
	}
}

func TestRunOnceResumesWithStateDir(t *testing.T) {
	dir, state := workdir(t), t.TempDir()
	out1, stderr, code := etld(t, dir, "run", "--quiet", "--state-dir", state, "configs/examples/messages.yaml")
	if code != 0 || strings.Count(out1, "\n") != 5 {
		t.Fatalf("first run: exit %d, %q, %s", code, out1, stderr)
	}
	// The second run resumes at the end of the file: no row twice.
	out2, stderr, code := etld(t, dir, "run", "--quiet", "--state-dir", state, "configs/examples/messages.yaml")
	if code != 0 || out2 != "" {
		t.Errorf("second run: exit %d, printed %q, %s", code, out2, stderr)
	}
	// Daemon-only settings are refused in a one-shot run.
	if _, stderr, code := etld(t, dir, "run", "--admin-address", "127.0.0.1:0", "configs/examples/messages.yaml"); code != 2 || !strings.Contains(stderr, "daemon setting") {
		t.Errorf("--admin-address in a one-shot run: exit %d, %s", code, stderr)
	}
}

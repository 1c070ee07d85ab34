package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// busyDatagen is enough work for the CPU profile to take samples.
const busyDatagen = `version: 1
name: busy
sources:
  - name: gen
    type: datagen
    rows: 300000
    seed: 1
    schema: [n BIGINT, s STRING, d DOUBLE]
sinks:
  - name: out
    from: gen
    type: blackhole
`

// checkProfile checks that path holds a profile in pprof's format (a gzip
// stream) that go tool pprof reads, and of the sample type want.
func checkProfile(t *testing.T, path, want string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Fatalf("%s: %d bytes, not a gzip stream (pprof's format)", path, len(data))
	}
	cmd := exec.Command("go", "tool", "pprof", "-top", etldBin, path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool pprof -top %s: %v\n%s", path, err, out.String())
	}
	if !strings.Contains(out.String(), "Type: "+want) {
		t.Errorf("go tool pprof -top %s: no \"Type: %s\":\n%s", path, want, out.String())
	}
}

func TestRunWritesProfiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "busy.yaml"), busyDatagen)
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	_, stderr, code := etld(t, dir, "run", "--quiet", "--cpuprofile", cpu, "--memprofile", mem, "busy.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkProfile(t, cpu, "cpu")
	checkProfile(t, mem, "inuse_space")
}

// A profile path that cannot be written fails the run before anything
// starts.
func TestRunProfileBadPath(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "busy.yaml"), busyDatagen)
	for _, flag := range []string{"--cpuprofile", "--memprofile"} {
		out, stderr, code := etld(t, dir, "run", flag, filepath.Join(dir, "no", "such", "dir", "p"), "busy.yaml")
		if code != 2 || !strings.Contains(stderr, "etld run: "+flag+": open ") || out != "" {
			t.Errorf("%s into a missing dir: exit %d, stdout %q, stderr %q; want 2 and the path's error", flag, code, out, stderr)
		}
	}
}

// The daemon writes its CPU profile when it stops, and serves
// /debug/pprof/ with admin.pprof behind the admin token.
func TestDaemonProfileAndPprofEndpoint(t *testing.T) {
	_, dir := pipelinesDir(t, map[string]string{})
	cpu := filepath.Join(t.TempDir(), "cpu.pprof")
	d := startDaemon(t, filepath.Dir(dir), []string{"ETLD_ADMIN_TOKEN=s3cret"}, "--daemon", "--pipelines", dir,
		"--admin-address", "127.0.0.1:0", "--admin-pprof", "true", "--cpuprofile", cpu, "--log-format", "json")
	base := d.adminURL()
	get := func(path, token string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/debug/pprof/", ""); code != 401 {
		t.Errorf("/debug/pprof/ without the token = %d, want 401", code)
	}
	if code := get("/debug/pprof/heap", "s3cret"); code != 200 {
		t.Errorf("/debug/pprof/heap with the token = %d, want 200", code)
	}
	d.signal(syscall.SIGTERM)
	if code := d.exitCode(); code != 0 {
		t.Fatalf("exit code after SIGTERM = %d", code)
	}
	checkProfile(t, cpu, "cpu")
}

// Without admin.pprof the daemon has no /debug/pprof/.
func TestDaemonPprofOffByDefault(t *testing.T) {
	_, dir := pipelinesDir(t, map[string]string{})
	d := startDaemon(t, filepath.Dir(dir), nil, "--daemon", "--pipelines", dir, "--admin-address", "127.0.0.1:0", "--log-format", "json")
	if code, _ := httpGet(t, d.adminURL()+"/debug/pprof/"); code != 404 {
		t.Errorf("/debug/pprof/ without admin.pprof = %d, want 404", code)
	}
	d.signal(syscall.SIGTERM)
	if code := d.exitCode(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d", code)
	}
}

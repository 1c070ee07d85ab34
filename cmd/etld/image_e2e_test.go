package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
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

// imageUser is the uid and gid the image runs as (Dockerfile's USER).
const imageUser = 65532

// The pipeline the image runs in TestImage: a CSV placed beside it in
// /etc/etld/pipelines, filtered into a file under /var/lib/etld, with
// checkpoints there too (the daemon's default state dir). Its zone needs
// the zone database built into the binary: the image has no zoneinfo.
const imagePipeline = `version: 1
name: image-check
local_time_zone: America/Los_Angeles
sources:
  - name: readings
    type: file
    path: /etc/etld/pipelines/data/readings.csv
    schema:
      - id BIGINT
      - temp DOUBLE
transforms:
  - name: hot
    sql: SELECT id, temp FROM readings WHERE temp > 30
sinks:
  - name: out
    from: hot
    type: file
    path: /var/lib/etld/hot.csv
    format: csv
`

// TestImage builds the image of Dockerfile.prebuilt with podman (vfs
// storage, no daemon), exports it as an OCI layout, unpacks it with
// umoci, checks its config, and runs its binary inside the unpacked root
// as the image's user: version, validate, and the image's own command
// (the daemon over /etc/etld/pipelines with state in /var/lib/etld),
// probed with the image's HEALTHCHECK command. podman run is not used:
// it cannot set rlimits in this sandbox.
func TestImage(t *testing.T) {
	podman, umoci := testenv.Podman(t), testenv.Umoci(t)
	if os.Geteuid() != 0 {
		// chroot, and unpacking files owned by 65532, need root.
		if testenv.Required() {
			t.Fatal("the image test needs root (chroot, umoci unpack)")
		}
		t.Skip("the image test needs root (chroot, umoci unpack)")
	}
	start := time.Now()
	work := t.TempDir()
	bin := filepath.Join(work, "etld")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=image-test", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	built := time.Now()

	// A private store, so that parallel runs do not share one, removed
	// with the temp dir.
	store := []string{"--root", filepath.Join(work, "storage"), "--runroot", filepath.Join(work, "run"), "--storage-driver", "vfs"}
	podmanEnv := append(os.Environ(), "TMPDIR="+work)
	const tag = "localhost/etld:image-test"
	script := exec.Command("bash", append([]string{filepath.Join(repoRoot(t), "scripts", "image.sh"), bin, tag}, store...)...)
	script.Env = append(podmanEnv, "PATH="+filepath.Dir(podman)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := script.CombinedOutput(); err != nil {
		t.Fatalf("scripts/image.sh: %v\n%s", err, out)
	}
	run := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = podmanEnv
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
		}
		return out
	}
	// The docker format keeps HEALTHCHECK, which the OCI config has no
	// field for: ask podman for it.
	var health struct {
		Test              []string
		Interval, Timeout time.Duration
		StartPeriod       time.Duration
		Retries           int
	}
	if err := json.Unmarshal(run(podman, append(store, "image", "inspect", "--format", "{{json .Config.Healthcheck}}", tag)...), &health); err != nil {
		t.Fatalf("health check of the image: %v", err)
	}
	if want := []string{"CMD", "/etld", "healthcheck"}; !slices.Equal(health.Test, want) || health.Interval != 15*time.Second || health.Timeout != 5*time.Second || health.StartPeriod != 10*time.Second || health.Retries != 3 {
		t.Errorf("HEALTHCHECK = %+v, want %v every 15s, timeout 5s, start period 10s, 3 retries", health, want)
	}

	layout := filepath.Join(work, "oci")
	run(podman, append(store, "save", "--format", "oci-dir", "-o", layout, tag)...)
	cfg := ociConfig(t, layout)
	checkImageConfig(t, cfg)
	bundle := filepath.Join(work, "bundle")
	run(umoci, "unpack", "--image", layout+":"+tag, bundle)
	rootfs := filepath.Join(bundle, "rootfs")
	built2 := time.Now()
	checkImageFiles(t, rootfs)

	// Inside the image, as its user, with its environment.
	chroot := func(env []string, args ...string) *exec.Cmd {
		cmd := exec.Command("chroot", append([]string{fmt.Sprintf("--userspec=%d:%d", imageUser, imageUser), rootfs}, args...)...)
		cmd.Env = env
		return cmd
	}
	output := func(cmd *exec.Cmd) string {
		t.Helper()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s%s", strings.Join(cmd.Args, " "), err, out, stderr.String())
		}
		return string(out)
	}
	entry := cfg.Config.Entrypoint
	if out := output(chroot(cfg.Config.Env, append(slices.Clone(entry), "version")...)); !strings.Contains(out, "etld image-test") {
		t.Errorf("etld version in the image printed %q, want the version built in", out)
	}

	// The pipelines directory the image expects, as a read-only mount
	// would give it: owned by root, readable by all.
	pipelines := filepath.Join(rootfs, "etc", "etld", "pipelines")
	var csv strings.Builder
	hot := 0
	for i := range 1000 {
		temp := float64(i%50) + 0.5
		if temp > 30 {
			hot++
		}
		fmt.Fprintf(&csv, "%d,%g\n", i, temp)
	}
	if err := os.MkdirAll(filepath.Join(pipelines, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(pipelines, "image-check.yaml"), imagePipeline)
	writeFile(t, filepath.Join(pipelines, "data", "readings.csv"), csv.String())
	if out := output(chroot(cfg.Config.Env, append(slices.Clone(entry), "validate", "/etc/etld/pipelines")...)); !strings.Contains(out, "image-check") {
		t.Errorf("etld validate /etc/etld/pipelines printed %q, want the pipeline named", out)
	}

	// The image's own command: the daemon, with its default pipelines
	// and state directories, on a free loopback port.
	addr := freeLoopbackAddr(t)
	env := append(slices.Clone(cfg.Config.Env), "ETLD_ADMIN_ADDRESS="+addr)
	daemon := chroot(env, append(slices.Clone(entry), cfg.Config.Cmd...)...)
	var daemonErr testenv.Buffer
	daemon.Stdout, daemon.Stderr = &daemonErr, &daemonErr
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- daemon.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = daemon.Process.Kill()
			<-exited
		}
	}()
	testenv.Eventually(t, 60*time.Second, "the health check to pass", func() error {
		probe := chroot(env, health.Test[1:]...)
		if out, err := probe.CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %s; daemon: %s", err, out, daemonErr.String())
		}
		return nil
	})
	out := filepath.Join(rootfs, "var", "lib", "etld", "hot.csv")
	testenv.Eventually(t, 60*time.Second, "the pipeline's output", func() error {
		data, err := os.ReadFile(out)
		if err != nil {
			return fmt.Errorf("%w; daemon: %s", err, daemonErr.String())
		}
		if n := strings.Count(string(data), "\n"); n != hot {
			return fmt.Errorf("%d rows in %s, want %d", n, out, hot)
		}
		return nil
	})
	if err := daemon.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("the daemon exited with %v after SIGTERM:\n%s", err, daemonErr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the daemon did not stop within 60s of SIGTERM:\n%s", daemonErr.String())
	}
	// Output and checkpoints belong to the image's user.
	state := filepath.Join(rootfs, "var", "lib", "etld", "image-check")
	entries, err := os.ReadDir(state)
	if err != nil || len(entries) == 0 {
		t.Fatalf("no checkpoint under /var/lib/etld/image-check: %v %v", entries, err)
	}
	for _, p := range []string{out, state} {
		if uid := ownerOf(t, p); uid != imageUser {
			t.Errorf("%s is owned by uid %d, want %d", p, uid, imageUser)
		}
	}
	t.Logf("go build %s, image build+save+unpack %s, runs %s", built.Sub(start).Round(time.Millisecond), built2.Sub(built).Round(time.Millisecond), time.Since(built2).Round(time.Millisecond))
}

// imageConfig is the part of an OCI image config the test checks.
type imageConfig struct {
	Config struct {
		User         string
		Env          []string
		Entrypoint   []string
		Cmd          []string
		Volumes      map[string]struct{}
		ExposedPorts map[string]struct{}
		StopSignal   string
	} `json:"config"`
}

// ociConfig reads the config of the one image in an OCI layout.
func ociConfig(t *testing.T, layout string) imageConfig {
	t.Helper()
	blob := func(digest string) []byte {
		algo, hex, _ := strings.Cut(digest, ":")
		data, err := os.ReadFile(filepath.Join(layout, "blobs", algo, hex))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	var index struct {
		Manifests []struct{ Digest string }
	}
	data, err := os.ReadFile(filepath.Join(layout, "index.json"))
	if err == nil {
		err = json.Unmarshal(data, &index)
	}
	if err != nil || len(index.Manifests) != 1 {
		t.Fatalf("OCI index: %v, %d manifests", err, len(index.Manifests))
	}
	var manifest struct {
		Config struct{ Digest string }
	}
	if err := json.Unmarshal(blob(index.Manifests[0].Digest), &manifest); err != nil {
		t.Fatal(err)
	}
	var cfg imageConfig
	if err := json.Unmarshal(blob(manifest.Config.Digest), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func checkImageConfig(t *testing.T, cfg imageConfig) {
	t.Helper()
	c := cfg.Config
	if c.User != "65532:65532" {
		t.Errorf("user = %q, want 65532:65532", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/etld"}) || !slices.Equal(c.Cmd, []string{"run", "--daemon"}) {
		t.Errorf("entrypoint %q, cmd %q; want [/etld] and [run --daemon]", c.Entrypoint, c.Cmd)
	}
	if _, ok := c.Volumes["/var/lib/etld"]; !ok || len(c.Volumes) != 1 {
		t.Errorf("volumes = %v, want /var/lib/etld", c.Volumes)
	}
	if _, ok := c.ExposedPorts["9464/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("exposed ports = %v, want 9464/tcp", c.ExposedPorts)
	}
	if c.StopSignal != "SIGTERM" {
		t.Errorf("stop signal = %q, want SIGTERM", c.StopSignal)
	}
}

// checkImageFiles checks the image's users, directories and CA bundle.
func checkImageFiles(t *testing.T, rootfs string) {
	t.Helper()
	for path, want := range map[string]string{
		"etc/passwd": "etld:x:65532:65532:etld:/var/lib/etld:/sbin/nologin\n",
		"etc/group":  "etld:x:65532:\n",
	} {
		if got, err := os.ReadFile(filepath.Join(rootfs, path)); err != nil || string(got) != want {
			t.Errorf("/%s = %q (%v), want %q", path, got, err, want)
		}
	}
	host, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(rootfs, "etc/ssl/certs/ca-certificates.crt")); err != nil || !bytes.Equal(got, host) {
		t.Errorf("the image's CA bundle differs from the host's (%v)", err)
	}
	for _, d := range []struct {
		path string
		uid  int
		mode os.FileMode
	}{
		{"var/lib/etld", imageUser, 0o755 | os.ModeDir},
		{"etc/etld/pipelines", 0, 0o755 | os.ModeDir},
		{"tmp", 0, 0o777 | os.ModeDir | os.ModeSticky},
		{"etld", 0, 0o755},
	} {
		p := filepath.Join(rootfs, d.path)
		st, err := os.Stat(p)
		if err != nil {
			t.Errorf("/%s: %v", d.path, err)
			continue
		}
		if st.Mode() != d.mode || ownerOf(t, p) != d.uid {
			t.Errorf("/%s: mode %v uid %d, want %v uid %d", d.path, st.Mode(), ownerOf(t, p), d.mode, d.uid)
		}
	}
}

func ownerOf(t *testing.T, path string) int {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(st.Sys().(*syscall.Stat_t).Uid)
}

// freeLoopbackAddr returns a 127.0.0.1 address no one listens on now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

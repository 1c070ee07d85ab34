package sdnotify

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFromEnv(t *testing.T) {
	pid := strconv.Itoa(os.Getpid())
	cases := []struct {
		name     string
		env      map[string]string
		enabled  bool
		watchdog time.Duration
	}{
		{"no socket", map[string]string{"WATCHDOG_USEC": "1000000"}, false, 0},
		{"socket only", map[string]string{"NOTIFY_SOCKET": "/run/x"}, true, 0},
		{"watchdog", map[string]string{"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000"}, true, 15 * time.Second},
		{"watchdog for us", map[string]string{"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "2000", "WATCHDOG_PID": pid}, true, time.Millisecond},
		{"watchdog for another pid", map[string]string{"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "2000", "WATCHDOG_PID": "1"}, true, 0},
		{"bad usec", map[string]string{"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "soon"}, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := FromEnv(func(k string) string { return tc.env[k] })
			if n.Enabled() != tc.enabled {
				t.Errorf("Enabled = %v, want %v", n.Enabled(), tc.enabled)
			}
			if got := n.WatchdogInterval(); got != tc.watchdog {
				t.Errorf("WatchdogInterval = %v, want %v", got, tc.watchdog)
			}
		})
	}
}

func TestNotify(t *testing.T) {
	dir, err := os.MkdirTemp("", "sd") // short: socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n := FromEnv(func(k string) string {
		if k == "NOTIFY_SOCKET" {
			return path
		}
		return ""
	})
	read := func() string {
		t.Helper()
		buf := make([]byte, 512)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		k, err := conn.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:k])
	}
	if err := n.Notify("READY=1"); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "READY=1" {
		t.Errorf("got %q, want READY=1", got)
	}
	if err := n.Reloading(); err != nil {
		t.Fatal(err)
	}
	got := read()
	lines := strings.Split(got, "\n")
	if lines[0] != "RELOADING=1" || len(lines) != 2 || !strings.HasPrefix(lines[1], "MONOTONIC_USEC=") {
		t.Fatalf("got %q, want RELOADING=1 and MONOTONIC_USEC", got)
	}
	if us, err := strconv.ParseInt(strings.TrimPrefix(lines[1], "MONOTONIC_USEC="), 10, 64); err != nil || us <= 0 {
		t.Errorf("MONOTONIC_USEC %q is not a positive number", lines[1])
	}
}

func TestDisabledSendsNothing(t *testing.T) {
	var n *Notifier
	if err := n.Notify("READY=1"); err != nil {
		t.Fatal(err)
	}
	if n.WatchdogInterval() != 0 {
		t.Error("a nil notifier has a watchdog")
	}
}

// Package sdnotify speaks systemd's notify protocol: one datagram of
// newline-separated KEY=VALUE lines to the unix socket named by
// $NOTIFY_SOCKET. It is written here rather than taken from go-systemd
// because the protocol is a single unixgram write and the daemon needs
// nothing else from that module.
package sdnotify

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// Notifier sends states to systemd. The zero value, and one made when
// NOTIFY_SOCKET is unset, sends nothing: etld run outside systemd.
type Notifier struct {
	addr     *net.UnixAddr
	watchdog time.Duration
}

// FromEnv reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID through
// getenv (os.Getenv in the binary). WATCHDOG_PID, when set, must be our
// pid: the watchdog is someone else's otherwise.
func FromEnv(getenv func(string) string) *Notifier {
	n := &Notifier{}
	if sock := getenv("NOTIFY_SOCKET"); sock != "" {
		// An abstract socket starts with @, which Go's net package
		// spells the same way.
		n.addr = &net.UnixAddr{Name: sock, Net: "unixgram"}
	}
	if usec, err := strconv.ParseInt(getenv("WATCHDOG_USEC"), 10, 64); err == nil && usec > 0 {
		pid := getenv("WATCHDOG_PID")
		if pid == "" || pid == strconv.Itoa(os.Getpid()) {
			n.watchdog = time.Duration(usec) * time.Microsecond
		}
	}
	return n
}

// Enabled reports whether there is a socket to notify.
func (n *Notifier) Enabled() bool { return n != nil && n.addr != nil }

// WatchdogInterval is how often to send WATCHDOG=1 (half of
// WATCHDOG_USEC, as sd_watchdog_enabled advises), or 0 when systemd
// watches nothing.
func (n *Notifier) WatchdogInterval() time.Duration {
	if !n.Enabled() {
		return 0
	}
	return n.watchdog / 2
}

// Notify sends state, e.g. "READY=1" or "STOPPING=1".
func (n *Notifier) Notify(state string) error {
	if !n.Enabled() {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", state, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify %s: %w", state, err)
	}
	return nil
}

// Reloading tells systemd a reload began. Type=notify-reload wants
// MONOTONIC_USEC with it; plain Type=notify ignores it.
func (n *Notifier) Reloading() error {
	state := "RELOADING=1"
	if us, ok := monotonicUsec(); ok {
		state += "\nMONOTONIC_USEC=" + strconv.FormatInt(us, 10)
	}
	return n.Notify(state)
}

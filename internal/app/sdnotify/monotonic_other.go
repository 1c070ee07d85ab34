//go:build !linux

package sdnotify

// monotonicUsec is only needed under systemd, which is Linux only.
func monotonicUsec() (int64, bool) { return 0, false }

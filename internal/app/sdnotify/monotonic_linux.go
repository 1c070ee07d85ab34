package sdnotify

import (
	"syscall"
	"unsafe"
)

// monotonicUsec reads CLOCK_MONOTONIC, the clock systemd compares
// MONOTONIC_USEC with; Go's time package keeps its monotonic reading
// private.
func monotonicUsec() (int64, bool) {
	const clockMonotonic = 1
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return ts.Nano() / 1000, true
}

//go:build !unix

package daemon

// LockStateDir takes no lock where flock(2) does not exist: etld's
// daemon runs under systemd or in a container, both Linux.
func LockStateDir(dir string) (release func(), err error) { return func() {}, nil }

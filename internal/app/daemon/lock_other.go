//go:build !unix

package daemon

// LockStateDir takes no lock where flock(2) does not exist: etld's
// daemon runs under systemd or in a container, both Linux.
func LockStateDir(dir string) (release func(), err error) { return func() {}, nil }

// HeldError is LockStateDir's error when another process holds the
// lock; never returned here.
type HeldError struct{ Dir, Holder string }

func (e *HeldError) Error() string {
	return "state_dir " + e.Dir + " is in use by another etld (pid " + e.Holder + ")"
}

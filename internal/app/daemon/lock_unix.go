//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// HeldError is LockStateDir's error when another process holds the lock.
type HeldError struct {
	Dir string
	// Holder is the pid the lock file names.
	Holder string
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("state_dir %s is in use by another etld (pid %s): two etld processes on one state directory (daemons, or etld run --state-dir) would overwrite each other's checkpoints; stop that one, or give this one another state_dir", e.Dir, e.Holder)
}

// LockStateDir takes an exclusive lock on the state directory dir (made
// if missing), held until release or the process's end: two daemons on
// one state directory would run the same pipelines from the same
// checkpoints, each overwriting the other's. The lock file holds the
// holder's pid, for the error a second daemon gets. A one-shot `etld
// run --state-dir` and `etld state reset` take the same lock.
func LockStateDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state_dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("state_dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 32))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &HeldError{Dir: dir, Holder: strings.TrimSpace(string(holder))}
		}
		return nil, fmt.Errorf("state_dir %s: lock: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	// Closing the file releases the lock.
	return func() { f.Close() }, nil
}

// Package durable holds what makes a file system change survive a crash
// beyond the file's own fsync.
package durable

import (
	"fmt"
	"os"
)

// SyncDir fsyncs a directory, so that entries created or renamed in it
// (a new file, a published checkpoint) survive a crash: fsyncing a file
// makes its content durable, not its name.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

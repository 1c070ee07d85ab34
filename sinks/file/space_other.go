//go:build !linux

package file

import "os"

// freeBytes is unknown here: the error gives the bytes needed only.
func freeBytes(string) (int64, bool) { return 0, false }

// replaceable is unknown here: publish copies rather than renames.
func replaceable(out, part os.FileInfo) bool { return false }

package file

import (
	"os"
	"syscall"
)

// freeBytes is what dir's file system has free for an unprivileged user.
func freeBytes(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * st.Bsize, true
}

// singleName reports whether st is a file with no other hard link, which
// a rename over it replaces without changing what another name shows.
func singleName(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && sys.Nlink == 1
}

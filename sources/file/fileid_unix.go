//go:build unix

package file

import (
	"os"
	"strconv"
	"syscall"
)

// fileID is a file's identity: it stays when the file is renamed, and
// changes when a new file takes its name (log rotation).
type fileID struct{ Dev, Ino uint64 }

func idOf(st os.FileInfo) fileID {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return fileID{Dev: uint64(sys.Dev), Ino: uint64(sys.Ino)}
	}
	return fileID{}
}

// String is the identity as dead letters show it, "device:inode"; ""
// when unknown.
func (id fileID) String() string {
	if id == (fileID{}) {
		return ""
	}
	return strconv.FormatUint(id.Dev, 10) + ":" + strconv.FormatUint(id.Ino, 10)
}

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

// replaceable reports whether a rename of part onto out changes nothing
// but out's content: out has no other hard link (which would keep the old
// file), and the same owner, group and permissions as part.
func replaceable(out, part os.FileInfo) bool {
	o, ok1 := out.Sys().(*syscall.Stat_t)
	p, ok2 := part.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && o.Nlink == 1 && o.Uid == p.Uid && o.Gid == p.Gid && out.Mode() == part.Mode()
}

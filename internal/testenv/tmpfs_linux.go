package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Tmpfs mounts a file system of size bytes (a tmpfs, in memory) on a new
// temporary directory and unmounts it when the test ends: a small real
// disk for tests of what a full one does. Mounting needs root
// (CAP_SYS_ADMIN); without it the test is skipped, or fails when CI=true
// or ETLD_TEST_REQUIRE=1, as a missing service does.
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	dir := t.TempDir() // its removal runs after the unmount below
	opts := fmt.Sprintf("size=%d,mode=0755", size)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		msg := fmt.Sprintf("mounting a %d-byte tmpfs on %s: %v; this test needs a small real file system to fill (run it as root)", size, dir, err)
		if Required() {
			t.Fatalf("%s (CI=true or %s=1, so it fails instead of skipping)", msg, EnvRequire)
		}
		t.Skip("SKIP: " + msg)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			// Something still holds a file open (a child process the
			// test failed to end): detach it rather than leave it mounted.
			if err2 := syscall.Unmount(dir, syscall.MNT_DETACH); err2 != nil {
				t.Errorf("unmounting the tmpfs on %s: %v, detaching it: %v", dir, err, err2)
			}
		}
	})
	return dir
}

// FreeBytes is what dir's file system has free.
func FreeBytes(t testing.TB, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// Fill writes a file into dir (on a Tmpfs) that leaves about leave bytes
// of its file system free (rounded down to its blocks), and returns the
// file: removing it frees the space again.
func Fill(t testing.TB, dir string, leave int64) string {
	t.Helper()
	f, err := os.CreateTemp(dir, ".fill-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for FreeBytes(t, dir) > leave {
		n := min(int64(len(block)), FreeBytes(t, dir)-leave)
		if _, err := f.Write(block[:n]); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatal(err)
		}
	}
	return filepath.Clean(f.Name())
}

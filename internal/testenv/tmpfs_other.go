//go:build !linux

package testenv

import "testing"

// Tmpfs needs Linux: elsewhere the test is skipped, or fails when
// required (see the Linux version).
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	if Required() {
		t.Fatalf("a tmpfs to fill needs Linux (CI=true or %s=1, so this fails instead of skipping)", EnvRequire)
	}
	t.Skip("SKIP: a tmpfs to fill needs Linux")
	return ""
}

// FreeBytes is not known here.
func FreeBytes(t testing.TB, dir string) int64 { t.Helper(); t.Skip("SKIP: needs Linux"); return 0 }

// Fill is not possible here.
func Fill(t testing.TB, dir string, leave int64) string {
	t.Helper()
	t.Skip("SKIP: needs Linux")
	return ""
}

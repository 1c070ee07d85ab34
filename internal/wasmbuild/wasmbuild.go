// Package wasmbuild builds WebAssembly modules from their sources for
// tests, with the Go toolchain that runs the tests, so that a fresh
// machine needs nothing else and no binary module is kept in the
// repository. Each module is built once per test process.
package wasmbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	dir   string
	built = map[string]string{}
)

// Go builds the Go package dir (a directory of package main, relative to
// the test's working directory or absolute) as a WebAssembly library
// (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared) and returns the module's
// path. A build failure fails the test.
func Go(t testing.TB, pkgDir string) string {
	t.Helper()
	abs, err := filepath.Abs(pkgDir)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[abs]; ok {
		return p
	}
	if dir == "" {
		// One directory for every test process, the modules outliving a
		// test's TempDir: each is written under a name of its own and
		// renamed into place, so that processes building at once never
		// read a half-written one, and the directory does not grow.
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("etld-wasm-%d", os.Getuid()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, strings.ReplaceAll(strings.Trim(abs, string(filepath.Separator)), string(filepath.Separator), "_")+".wasm")
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", tmp, ".")
	cmd.Dir = abs
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s for wasip1: %v\n%s", pkgDir, err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	built[abs] = out
	return out
}

// AssemblyScript compiles the AssemblyScript file src with the compiler
// asc (the stub runtime, optimised) and returns the module's path, in a
// directory of the test's own.
func AssemblyScript(t testing.TB, asc, src string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".ts")+".wasm")
	cmd := exec.Command(asc, src, "--outFile", out, "--runtime", "stub", "--optimize")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling %s with %s: %v\n%s", src, asc, err, b)
	}
	return out
}

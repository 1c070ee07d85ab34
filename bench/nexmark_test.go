package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/wasmbuild"
	"github.com/etld/etld/pipeline"
)

// TestNexmarkFiles makes every file `go run ./bench -nexmark` runs, from
// the repository's queries, and loads etld's: the json file source in
// place of the generator must plan as the generator does (the queries
// etld refuses are refused for the same reason), and each Flink script
// must have its placeholders filled and NOW() around its INSERT.
func TestNexmarkFiles(t *testing.T) {
	root := filepath.Join("nexmark")
	dir := t.TempDir()
	dump := filepath.Join(dir, "events.json")
	if err := os.WriteFile(dump, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	jar := filepath.Join(dir, "count_char.jar") // Flink's q14 adds it
	e := &env{etld: "/bin/true", flink: "/bin/true", timeout: 1e9, udfJar: jar}
	// q14 calls count_char, built as make udf-examples builds it.
	udf := t.TempDir()
	wasm, err := os.ReadFile(wasmbuild.Go(t, "../sdk/go/examples/count_char"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(udf, "count_char.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"NEXMARK_DIR": dir, "NEXMARK_SIDE_INPUT": filepath.Join(root, "side_input.txt"), "NEXMARK_UDF_DIR": udf}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	for i := range 24 {
		name := fmt.Sprintf("q%d", i)
		gen, err := nexmarkYAML(root, name, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		file, err := nexmarkYAML(root, name, dump, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(gen, "    events: 1000\n") || strings.Contains(file, "type: nexmark") || !strings.Contains(file, "format: json") {
			t.Fatalf("%s: the generator's events or the file source not written:\n%s", name, file)
		}
		env := pipeline.Env{Registry: builtin.Registry()}
		_, genErr := pipeline.Parse(name+".yaml", []byte(gen), lookup, env)
		_, fileErr := pipeline.Parse(name+".yaml", []byte(file), lookup, env)
		if unplaced(genErr) != unplaced(fileErr) {
			t.Errorf("%s: from the generator: %v; from the json file: %v", name, genErr, fileErr)
		}

		wd := filepath.Join(dir, name)
		if err := os.MkdirAll(wd, 0o755); err != nil {
			t.Fatal(err)
		}
		_, _ = nexmarkFlink(e, root, name, dump).run(wd) // the script is written; the runner does nothing
		b, err := os.ReadFile(filepath.Join(wd, name+".sql"))
		if err != nil {
			t.Fatalf("%s: no Flink script: %v", name, err)
		}
		script := string(b)
		if strings.Contains(script, "${") || strings.Count(script, "SELECT CAST(NOW() AS STRING);") != 2 || !strings.Contains(script, dump) {
			t.Errorf("%s: the Flink script:\n%s", name, script)
		}
		if addsJar := strings.Contains(script, "ADD JAR '"+jar+"';"); addsJar != (name == "q14") {
			t.Errorf("%s: ADD JAR of the count_char jar: %v", name, addsJar)
		}
	}
}

// TestNexmarkFlinkWithoutUDFJar: with no count_char jar built, Flink's
// q14 is refused with the build's failure and no script is run.
func TestNexmarkFlinkWithoutUDFJar(t *testing.T) {
	wd := t.TempDir()
	e := &env{etld: "/bin/true", flink: "/bin/false", timeout: 1e9, noUDFJar: "udf.sh: exit status 128"}
	_, err := nexmarkFlink(e, "nexmark", "q14", filepath.Join(wd, "events.json")).run(wd)
	if !errors.Is(err, errNeedsUDF) || !strings.Contains(err.Error(), "udf.sh: exit status 128") {
		t.Fatalf("got %v, want errNeedsUDF with the build's failure", err)
	}
	if _, err := os.Stat(filepath.Join(wd, "q14.sql")); err == nil {
		t.Error("q14.sql written without the jar")
	}
}

// TestNexmarkUDFJar: the jar is built by the script once, then taken from
// the cache; a failed build or one that writes no jar is an error that
// names the script's output.
func TestNexmarkUDFJar(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	build := script("build.sh", "printf jar > \"$1\"\n")
	fail := script("fail.sh", "echo no clone here >&2; exit 3\n")
	none := script("none.sh", "exit 0\n")
	jar := filepath.Join(dir, "cache", "count_char.jar")

	if err := nexmarkUDFJar(fail, jar); err == nil || !strings.Contains(err.Error(), "no clone here") {
		t.Fatalf("failed build: %v", err)
	}
	if err := nexmarkUDFJar(none, jar); err == nil || !strings.Contains(err.Error(), "wrote no jar") {
		t.Fatalf("no jar written: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := nexmarkUDFJar(build, jar); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(jar); err != nil || string(b) != "jar" {
		t.Fatalf("jar %q, %v", b, err)
	}
	if err := nexmarkUDFJar(fail, jar); err != nil { // cached: the script is not run
		t.Fatalf("second call ran the build again: %v", err)
	}
}

// unplaced is an error's text without its file:line:col.
func unplaced(err error) string {
	return regexp.MustCompile(`^\S+:\d+:\d+: `).ReplaceAllString(fmt.Sprint(err), "")
}

// TestNexmarkFlinkStateBackend: -flink-state puts Flink's state backend
// at the head of every script, the start's too, and nothing without it.
func TestNexmarkFlinkStateBackend(t *testing.T) {
	root := filepath.Join("nexmark")
	for _, backend := range []string{"", "rocksdb"} {
		wd := t.TempDir()
		e := &env{etld: "/bin/true", flink: "/bin/true", timeout: 1e9, flinkState: backend}
		if _, err := nexmarkFlink(e, root, "q20", filepath.Join(wd, "events.json")).run(wd); err != nil && !strings.Contains(err.Error(), ".out") {
			t.Fatal(err) // the runner does nothing: only its output is missing
		}
		b, err := os.ReadFile(filepath.Join(wd, "q20.sql"))
		if err != nil {
			t.Fatal(err)
		}
		set := strings.HasPrefix(string(b), "SET 'state.backend.type' = 'rocksdb';\n")
		if set != (backend == "rocksdb") || strings.Contains(string(b), "state.backend") != set {
			t.Errorf("backend %q: script starts %q", backend, string(b)[:min(len(b), 80)])
		}
	}
}

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
	e := &env{etld: "/bin/true", flink: "/bin/true", timeout: 1e9}
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
		if _, err := nexmarkFlink(e, root, name, dump).run(wd); errors.Is(err, errNeedsUDF) {
			continue
		} // else the script is written; the runner does nothing
		b, err := os.ReadFile(filepath.Join(wd, name+".sql"))
		if err != nil {
			t.Fatalf("%s: no Flink script: %v", name, err)
		}
		script := string(b)
		if strings.Contains(script, "${") || strings.Count(script, "SELECT CAST(NOW() AS STRING);") != 2 || !strings.Contains(script, dump) {
			t.Errorf("%s: the Flink script:\n%s", name, script)
		}
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

package pipeline_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline"
)

// An error in one place hides none elsewhere: the spec's errors (an
// unknown top-level key, a dangling from:, an unset ${VAR}) and the
// connectors' (their unknown options) come in one list, in file order,
// each once, without the follow-ons of an unset variable.
func TestLoadReportsAllErrorsAtOnce(t *testing.T) {
	const file = `version: 1
name: t
colour: blue
sources:
  - name: f
    type: file
    pth: x.csv
    schema: [n BIGINT]
    on_eror: skip
  - name: g
    type: datagen
    bogus: 1
    schema: [n BIGINT]
sinks:
  - name: out
    from: nothere
    type: print
    print_identifer: x
  - name: out2
    from: f
    type: file
    path: "${ETLD_TEST_UNSET_VARIABLE}"
`
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		t.Fatal("loaded")
	}
	want := []string{
		"p.yaml:3:1: colour: unknown key",
		"p.yaml:5:5: sources[0].path: missing required key",
		"p.yaml:7:5: sources[0].pth: unknown key",
		"p.yaml:9:5: sources[0].on_eror: unknown key",
		"p.yaml:12:5: sources[1].bogus: unknown key",
		"p.yaml:16:11: sinks[0].from: \"nothere\" is not a source or transform",
		"p.yaml:18:5: sinks[0].print_identifer: unknown key",
		"p.yaml:22:11: sinks[1].path: environment variable ETLD_TEST_UNSET_VARIABLE is not set",
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Errorf("%d errors, want %d:\n%s", len(lines), len(want), err)
	}
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], dir+string(filepath.Separator)+w) {
			t.Errorf("error %d: want %q, in:\n%s", i, w, err)
		}
	}
}

// Planning a partial pipeline (one the spec found errors in) never
// panics, and every error it reports points into the file.
func FuzzParse(f *testing.F) {
	f.Add([]byte("version: 1\nname: t\nsources: [{name: a, type: datagen, rows: 1, schema: [n BIGINT, t FLAOT]}]\ntransforms: [{name: x, sql: SELECT t FROM a}]\nsinks: [{name: o, from: x, type: print, mode: sideways}]\n"))
	f.Add([]byte("version: 1\nsources: [foo, {type: file}, {name: b, type: datagen, watermark: ''}]\ntransforms: [{sql: ''}, {name: y}]\nsinks: [{from: b}, {name: p, from: y, type: blackhole, key: [z]}]\n"))
	f.Add([]byte("colour: blue\nsources:\n  - name: s\n    type: file\n    pth: x\n    schema: [a AS b + 1, b INT]\n    watermark: b\nsinks: [{name: o, from: s, type: file, path: ${NOPE}}]\n"))
	// Every golden plan's pipeline: the fuzzer starts from files that
	// reach deep into the planner (joins, windows, Top-N, TTL, errors).
	goldens, err := filepath.Glob(filepath.Join("plan", "testdata", "*.plantest"))
	if err != nil || len(goldens) == 0 {
		f.Fatalf("no golden plans to seed from (%v)", err)
	}
	for _, path := range goldens {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		yaml, _, _ := bytes.Cut(data, []byte("\n----\n"))
		f.Add(yaml)
	}
	reg := builtin.Registry()
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := pipeline.Parse("f.yaml", data, func(string) (string, bool) { return "", false }, pipeline.Env{Registry: reg})
		if err == nil {
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(line, "f.yaml:") && !strings.HasPrefix(line, " ") {
				t.Fatalf("error without a position: %q in\n%v", line, err)
			}
		}
	})
}

// A directory stands for its pipelines: NAME_test.yaml holds the tests of
// NAME.yaml (etld test) and is no pipeline to run.
func TestFilesLeavesOutTestsFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.yaml", "a.yml", "b_test.yaml", "a_test.yml", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := pipeline.Files([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.yml"), filepath.Join(dir, "b.yaml")}
	if !slices.Equal(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
}

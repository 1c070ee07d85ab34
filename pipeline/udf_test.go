package pipeline_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/etld/etld/internal/wasmbuild"
)

// wasmExample builds an example module of the Go SDK and copies it to
// dir/udf/NAME.wasm, where a pipeline file in dir names it relatively.
func wasmExample(t *testing.T, dir, name string) {
	t.Helper()
	built := wasmbuild.Go(t, filepath.Join("..", "sdk", "go", "examples", name))
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "udf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "udf", name+".wasm"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWasmScalarFunction runs a WebAssembly function, declared with a
// path relative to the pipeline file, in the select list, the WHERE
// and as a GROUP BY key, NULLs passing without a call.
func TestWasmScalarFunction(t *testing.T) {
	dir := t.TempDir()
	wasmExample(t, dir, "count_char")
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("1,abcabc\n2,cc\n3,\n4,xyz\n5,c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sel, grp := filepath.Join(dir, "sel.csv"), filepath.Join(dir, "grp.csv")
	runFile(t, dir, `version: 1
name: udf
functions:
  - name: count_char
    wasm: udf/count_char.wasm
    params: [s STRING, c STRING]
    returns: BIGINT
sources:
  - name: src
    type: file
    path: `+in+`
    schema: [id INT, s STRING]
transforms:
  - name: sel
    sql: SELECT id, count_char(s, 'c'), count_char(s, 'c') * 10 AS tens FROM src WHERE id > 1 AND count_char(s, 'x') = 0
  - name: grp
    sql: SELECT count_char(NULLIF(s, ''), 'c') AS n, COUNT(*) AS rows_ FROM src GROUP BY count_char(NULLIF(s, ''), 'c')
sinks:
  - name: sel_out
    from: sel
    type: file
    path: `+sel+`
  - name: grp_out
    from: grp
    type: file
    path: `+grp+`
    mode: retract
`)
	want := []string{"2,2,20", "3,0,0", "5,1,10"}
	if got := readLines(t, sel); !equalLines(got, want) {
		t.Errorf("select: got %q, want %q", got, want)
	}
	// abcabc 2, cc 2, NULL (NULLIF of an empty field: no call), xyz 0,
	// c 1.
	wantGrp := []string{",1", "0,1", "1,1", "2,2"}
	if got := fold(t, grp); !equalLines(got, wantGrp) {
		t.Errorf("group by: got %q, want %q", got, wantGrp)
	}
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

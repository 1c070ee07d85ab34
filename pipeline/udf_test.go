package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/internal/wasmbuild"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/pipetest"
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

// TestFunctionRecordErrors makes a row a WebAssembly function traps on a
// record error under the source's on_error: dead-letter keeps it with
// its source position and the function's name, the other rows pass;
// fail stops the run with the same.
func TestFunctionRecordErrors(t *testing.T) {
	dir := t.TempDir()
	module := wasmbuild.Go(t, filepath.Join("..", "pipeline", "udf", "testdata", "wasm", "sandbox"))
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("1,x\n2,trap\n3,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, dead := filepath.Join(dir, "out.csv"), filepath.Join(dir, "dead.jsonl")
	file := func(onError string) string {
		return `version: 1
name: traps
functions:
  - name: trap
    wasm: ` + module + `
    params: [s STRING]
    returns: STRING
sources:
  - name: src
    type: file
    path: ` + in + `
    schema: [id INT, s STRING]
    on_error: ` + onError + `
transforms:
  - name: q
    sql: SELECT id, trap(s) AS s FROM src
sinks:
  - name: out
    from: q
    type: file
    path: ` + out + `
`
	}
	runFile(t, dir, file("{policy: dead-letter, file: "+dead+"}"))
	if got, want := readLines(t, out), []string{"1,x", "3,y"}; !equalLines(got, want) {
		t.Errorf("out: got %q, want %q", got, want)
	}
	letters := readLines(t, dead)
	if len(letters) != 1 || !strings.Contains(letters[0], `"position":"`+in+`:2"`) || !strings.Contains(letters[0], "function trap: wasm error: unreachable") ||
		!strings.Contains(letters[0], `"transform":"q"`) {
		t.Errorf("dead letters: %q", letters)
	}
	p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, file("fail"))
	_, err := p.Run(context.Background(), pipeline.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), in+":2") || !strings.Contains(err.Error(), "function trap: wasm error: unreachable (the module wrote: panic: trapped)") {
		t.Errorf("on_error: fail: %v", err)
	}
}

// TestFunctionValidateErrors reports, with the rest of the file's
// errors, a module without the declared export, a call with arguments
// no declaration takes, and a call where no function can be computed.
func TestFunctionValidateErrors(t *testing.T) {
	dir := t.TempDir()
	wasmExample(t, dir, "count_char")
	path := pipefile.Write(t, dir, `version: 1
name: bad
functions:
  - name: count_char
    wasm: udf/count_char.wasm
    params: [s STRING, c STRING]
    returns: BIGINT
  - name: missing
    wasm: udf/count_char.wasm
    params: [s STRING]
    returns: BIGINT
sources:
  - name: src
    type: datagen
    rows: 1
    schema:
      - id INT
      - s STRING
      - n AS count_char(s, 'a')
  - {name: src2, type: datagen, rows: 1, schema: [id INT]}
transforms:
  - name: q
    sql: SELECT count_char(id, 'c') FROM src2
sinks:
  - {name: out, from: q, type: print}
`)
	_, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry()})
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		path + ":9:11: functions[1].wasm: function missing: the module does not export missing; it exports count_char",
		path + ":19:14: sources[0].schema[2]: count_char, a scalar function of this file, cannot be called here; call it in a transform's SELECT list",
		path + ":23:17: transforms[0].sql: function count_char takes (STRING, STRING), not (INT, STRING)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing error %q in\n%v", want, err)
		}
	}
}

// TestJavaScriptScalarFunction runs an inline JavaScript function in a
// pipeline, beside a WebAssembly one, a row it throws on skipped under
// on_error: skip.
func TestJavaScriptScalarFunction(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("1,Hello World\n2,boom\n3,A.B.C\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.csv")
	sum := runFile(t, dir, `version: 1
name: js
functions:
  - name: slug
    language: javascript
    params: [s STRING]
    returns: STRING
    code: |
      function slug(s) {
        if (s === 'boom') throw new Error('no slug for boom');
        return s.toLowerCase().replace(/[^a-z0-9]+/g, '-');
      }
sources:
  - name: src
    type: file
    path: `+in+`
    schema: [id INT, s STRING]
    on_error: skip
transforms:
  - name: q
    sql: SELECT id, slug(s) AS slug, UPPER(slug(s)) AS up FROM src
sinks:
  - {name: out, from: q, type: file, path: `+out+`}
`)
	if got, want := readLines(t, out), []string{"1,hello-world,HELLO-WORLD", "3,a-b-c,A-B-C"}; !equalLines(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if sum.Sources[0].Skipped != 1 {
		t.Errorf("skipped %d rows, want 1", sum.Sources[0].Skipped)
	}
}

// TestTableFunctions joins each row with a WebAssembly table function's
// rows (CROSS JOIN LATERAL TABLE) and a JavaScript one's (LEFT JOIN ...
// ON TRUE, keeping the rows it gives nothing for).
func TestTableFunctions(t *testing.T) {
	dir := t.TempDir()
	wasmExample(t, dir, "words")
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("1,to be or\n2,\n3,not\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cross, left := filepath.Join(dir, "cross.csv"), filepath.Join(dir, "left.csv")
	runFile(t, dir, `version: 1
name: tables
functions:
  - name: words
    kind: table
    wasm: udf/words.wasm
    params: [s STRING, sep STRING]
    returns: [word STRING, pos INT]
  - name: chars
    kind: table
    language: javascript
    params: [s STRING]
    returns: STRING
    code: |
      function* chars(s) { for (const c of s) if (c !== 'o') yield c; }
sources:
  - name: src
    type: file
    path: `+in+`
    schema: [id INT, s STRING]
transforms:
  - name: cross_
    sql: |
      SELECT id, t.word, t.pos FROM src CROSS JOIN LATERAL TABLE(words(s, ' ')) AS t(word, pos) WHERE t.pos > 1
  - name: left_
    sql: |
      SELECT src.id, c.ch FROM src LEFT JOIN LATERAL TABLE(chars(s)) AS c(ch) ON TRUE
sinks:
  - {name: cross_out, from: cross_, type: file, path: `+cross+`}
  - {name: left_out, from: left_, type: file, path: `+left+`}
`)
	if got, want := readLines(t, cross), []string{"1,be,2", "1,or,3"}; !equalLines(got, want) {
		t.Errorf("cross: got %q, want %q", got, want)
	}
	if got, want := readLines(t, left), []string{"1, ", "1, ", "1,b", "1,e", "1,r", "1,t", "2,", "3,n", "3,t"}; !equalLines(got, want) {
		t.Errorf("left: got %q, want %q", got, want)
	}
}

// TestAggregateFunction runs a WebAssembly aggregate (a weighted
// average): over an insert-only input, over an updating one (an inner
// GROUP BY's changes, which retract), with FILTER, and in a HOP window
// whose slices merge. The values are exact in binary, so the averages
// are exact.
func TestAggregateFunction(t *testing.T) {
	dir := t.TempDir()
	wasmExample(t, dir, "wavg")
	in := filepath.Join(dir, "in.csv")
	// key, value, weight, event second
	data := "a,1,1,1\na,3,1,2\nb,2,2,3\na,5,2,4\nb,4,2,11\nc,8,0,12\n"
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, upd, win := filepath.Join(dir, "plain.csv"), filepath.Join(dir, "upd.csv"), filepath.Join(dir, "win.csv")
	runFile(t, dir, `version: 1
name: udaf
functions:
  - name: wavg
    kind: aggregate
    wasm: udf/wavg.wasm
    params: [v DOUBLE, w DOUBLE]
    returns: DOUBLE
sources:
  - name: src
    type: file
    path: `+in+`
    schema:
      - k STRING
      - v DOUBLE
      - w DOUBLE
      - sec INT
      - ts AS TO_TIMESTAMP_LTZ(sec * 1000, 3)
    watermark: ts
transforms:
  - name: plain
    sql: |
      SELECT k, wavg(v, w), wavg(v, w) FILTER (WHERE v > 1) AS over1, COUNT(*) AS n FROM src GROUP BY k
  - name: latest
    sql: SELECT k, LAST_VALUE(v) AS v, SUM(w) AS w FROM src GROUP BY k
  - name: upd
    sql: SELECT wavg(v, w) AS avg_latest FROM latest
  - name: win
    sql: |
      SELECT window_start, wavg(v, w) AS wa
      FROM TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
      GROUP BY window_start, window_end
sinks:
  - {name: plain_out, from: plain, type: file, path: `+plain+`, mode: retract}
  - {name: upd_out, from: upd, type: file, path: `+upd+`, mode: retract}
  - {name: win_out, from: win, type: file, path: `+win+`}
`)
	// a: (1+3+10)/4 = 3.5, over 1: (3+10)/3; b: (4+8)/4 = 3, over 1: 3;
	// c: weight 0 gives NULL.
	if got, want := fold(t, plain), []string{"a,3.5,4.333333333333333,3", "b,3.0,3.0,2", "c,,,1"}; !equalLines(got, want) {
		t.Errorf("plain: got %q, want %q", got, want)
	}
	// The latest of each key weighted by its total weight: a 5*4, b 4*4,
	// c 8*0: (20+16)/8; each update retracts the key's row before.
	if got, want := fold(t, upd), []string{"4.5"}; !equalLines(got, want) {
		t.Errorf("updating input: got %q, want %q", got, want)
	}
	// Windows [-5,5) a1 a3 b2 a5: (1+3+4+10)/6 = 3; [0,10) the same;
	// [5,15) b4 c8: 8/2 = 4; [10,20) the same.
	want := []string{"1969-12-31 23:59:55,3.0", "1970-01-01 00:00:00,3.0", "1970-01-01 00:00:05,4.0", "1970-01-01 00:00:10,4.0"}
	if got := readLines(t, win); !equalLines(got, want) {
		t.Errorf("hop windows: got %q, want %q", got, want)
	}
}

// TestFunctionsInEtldTest runs a pipeline's unit tests (etld test) over
// a WebAssembly and a JavaScript function, a row the latter throws on
// among the source's dead letters; a wrong expectation fails.
func TestFunctionsInEtldTest(t *testing.T) {
	dir := t.TempDir()
	wasmExample(t, dir, "count_char")
	file := func(a int) string {
		return fmt.Sprintf(`version: 1
name: fn-tests
functions:
  - name: slug
    language: javascript
    params: [s STRING]
    returns: STRING
    code: |
      function slug(s) { if (s === 'boom') throw new Error('boom'); return s.toLowerCase().replace(/ /g, '-'); }
  - name: count_char
    wasm: udf/count_char.wasm
    params: [s STRING, c STRING]
    returns: BIGINT
sources:
  - name: src
    type: file
    path: in.csv
    schema: [id INT, s STRING]
    on_error: dead-letter
    dead_letter: dead.jsonl
transforms:
  - name: q
    sql: SELECT id, slug(s) AS slug, count_char(s, 'a') AS a FROM src
sinks:
  - {name: out, from: q, type: print}
tests:
  - name: slugs and counts
    inputs:
      src:
        lines: |
          1,Hello World
          2,banana split
          3,boom
    expect:
      out:
        changes:
          - +I: {id: 1, slug: hello-world, a: 0}
          - +I: {id: 2, slug: banana-split, a: %d}
    dead_letters:
      src:
        - {record: '{"id":3,"s":"boom"}', error: "function slug: Error: boom"}
`, a)
	}
	for _, tc := range []struct {
		a    int
		pass bool
	}{{3, true}, {4, false}} {
		s, err := pipetest.Load(pipefile.Write(t, dir, file(tc.a)), pipetest.Env{Registry: builtin.Registry()})
		if err != nil {
			t.Fatal(err)
		}
		res := s.Run(context.Background(), nil)
		if len(res) != 1 || res[0].Passed() != tc.pass || res[0].Err != nil {
			t.Errorf("a=%d: results %+v, want passed=%v", tc.a, res, tc.pass)
		}
	}
}

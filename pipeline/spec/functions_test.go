package spec

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const functionsHead = `version: 1
name: f
sources:
  - {name: s, type: datagen, schema: [x STRING]}
sinks:
  - {name: o, type: print, from: s}
functions:
`

func TestFunctionsParse(t *testing.T) {
	p, err := Parse("dir/p.yaml", []byte(functionsHead+`  - name: count_char
    wasm: udf/count_char.wasm
    params: [s STRING, c STRING]
    returns: BIGINT
    memory_limit: 16MiB
    timeout: 250ms
  - name: words
    kind: table
    language: javascript
    params: [s STRING]
    returns: [word STRING, len INT]
    deterministic: false
    code: |
      function words(s) { return s.split(' ').map(w => [w, w.length]); }
  - name: pair
    kind: table
    wasm: /abs/pair.wasm
    export: pairs
    null_tolerant: true
    params: []
    returns: ROW<a INT, b STRING>
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Functions) != 3 {
		t.Fatalf("%d functions", len(p.Functions))
	}
	cc, words, pair := p.Functions[0], p.Functions[1], p.Functions[2]
	if cc.Language != "wasm" || cc.File != filepath.Join("dir", "udf", "count_char.wasm") || cc.Export != "count_char" ||
		len(cc.Params) != 2 || cc.Returns.String() != "BIGINT" || cc.MemoryLimit != 16<<20 || cc.Timeout != 250*time.Millisecond || !cc.Deterministic || cc.NullTolerant {
		t.Errorf("count_char = %+v", cc)
	}
	if words.Language != "javascript" || words.Kind != "table" || len(words.Columns) != 2 || words.Columns[1].Name != "len" || words.Deterministic ||
		!strings.HasPrefix(words.Code, "function words") || words.CodePos.Line != 21 {
		t.Errorf("words = %+v", words)
	}
	if pair.File != "/abs/pair.wasm" || pair.Export != "pairs" || !pair.NullTolerant || len(pair.Params) != 0 || len(pair.Columns) != 2 || pair.Columns[0].Name != "a" {
		t.Errorf("pair = %+v", pair)
	}
}

func TestFunctionsErrors(t *testing.T) {
	_, err := Parse("p.yaml", []byte(functionsHead+`  - name: a
    wasm: https://example.org/a.wasm
    params: [s STRING]
    returns: BIGINT
  - name: b
    language: python
    params: [s STRING]
    returns: BIGINT
  - name: c
    wasm: c.wasm
    params: [s STRING, "n INTEGRAL"]
    returns: BIGNUM
    kind: tabel
    timeout: 0
    memory_limit: 1KiB
  - name: d
    language: javascript
    params: [d DECIMAL(10, 2)]
    returns: [x INT]
  - name: e
    wasm: e.wasm
    returns: INT
    colour: red
`), env(nil))
	want := []string{
		"p.yaml:9:11: functions[0].wasm: \"https://example.org/a.wasm\" is a URL",
		"p.yaml:13:15: functions[1].language: unknown language \"python\"",
		"p.yaml:18:24: functions[2].params[1]: parameter \"n\"",
		"p.yaml:19:14: functions[2].returns:",
		"p.yaml:20:11: functions[2].kind: unknown function kind \"tabel\": want scalar, table or aggregate; did you mean \"table\"?",
		"p.yaml:21:14: functions[2].timeout: a call's time limit must be above 0",
		"p.yaml:22:19: functions[2].memory_limit: want a size from 64KiB",
		"p.yaml:23:5: functions[3].code: missing required key",
		"p.yaml:25:14: functions[3].params[0]: parameter \"d DECIMAL(10, 2)\" is cut at its comma",
		"p.yaml:26:14: functions[3].returns: a list of result columns is a table function's",
		"p.yaml:27:5: functions[4].params: missing required key",
		"p.yaml:30:5: functions[4].colour: unknown key",
	}
	if err == nil {
		t.Fatal("no error")
	}
	got := strings.Split(err.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(got), len(want), err)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s...", i, got[i], want[i])
		}
	}
}

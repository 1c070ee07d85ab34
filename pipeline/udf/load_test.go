package udf

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/internal/wasmbuild"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

func writeModule(t testing.TB, code []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(p, code, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// loadErr loads d and returns its one error's text.
func loadErr(t *testing.T, d *spec.Function) string {
	t.Helper()
	d.WasmPos = spec.Pos{File: "p.yaml", Line: 7, Col: 11}
	r, errs := Load(context.Background(), []*spec.Function{d}, nil)
	defer r.Close(context.Background())
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(errs), errs)
	}
	return errs[0].Error()
}

// TestLoadErrors checks what etld validate says of modules that cannot
// serve: each error at the wasm: line, naming what is wrong.
func TestLoadErrors(t *testing.T) {
	sandbox := wasmbuild.Go(t, "testdata/wasm/sandbox")
	str := []row.Type{row.Of(row.String)}
	tests := []struct {
		name string
		d    *spec.Function
		want string
	}{
		{"no file", decl("f", filepath.Join(t.TempDir(), "none.wasm"), str, row.Of(row.String)), "cannot read the module"},
		{"not a module", decl("f", writeModule(t, []byte("this is not WebAssembly")), str, row.Of(row.String)), "the module does not load"},
		{"missing export", func() *spec.Function { d := decl("f", sandbox, str, row.Of(row.String)); d.Export = "nope"; return d }(),
			"the module does not export nope; it exports "},
		{"wrong signature", func() *spec.Function {
			d := decl("f", sandbox, str, row.Of(row.String))
			d.Export = "etld_alloc"
			return d
		}(),
			"export etld_alloc has the signature (i32) -> (i32), want (i32, i32) -> (i64)"},
		{"no abi exports", decl("f", writeModule(t, tinyModule(true, nil, []tinyFunc{{export: "f", params: []byte{wI32, wI32}, results: []byte{wI64}}})), str, row.Of(row.String)),
			"the module does not export etld_alloc, etld_abi_version"},
		{"no memory", decl("f", writeModule(t, tinyModule(false, nil, abiFuncs(1))), str, row.Of(row.String)),
			"the module does not export memory (a memory)"},
		{"a command", decl("f", writeModule(t, tinyModule(true, nil, []tinyFunc{{export: "_start"}})), str, row.Of(row.String)),
			"it is a command (it exports _start): build it as a library"},
		{"other version", decl("f", writeModule(t, tinyModule(true, nil, abiFuncs(2))), str, row.Of(row.String)),
			"the module speaks version 2 of etld's function ABI"},
		{"unknown import", decl("f", writeModule(t, tinyModule(true, []tinyImport{{module: "env", name: "socket", params: []byte{wI32}}}, abiFuncs(1))), str, row.Of(row.String)),
			"the module does not start"},
		{"abi signature", decl("f", writeModule(t, tinyModule(true, nil, []tinyFunc{
			{export: "etld_abi_version", results: []byte{wI64}, ret: 1},
			{export: "etld_alloc", params: []byte{wI32}, results: []byte{wI32}},
			{export: "f", params: []byte{wI32, wI32}, results: []byte{wI64}}})), str, row.Of(row.String)),
			"export etld_abi_version has the signature () -> (i64), want () -> (i32)"},
		// A dozen bytes declaring 2^32-1 items: refused before wazero,
		// which would allocate the count first (16 GiB for functions).
		{"function count past its bytes", decl("f", writeModule(t, hugeVector(3)), str, row.Of(row.String)),
			"not a valid module: section 3: offset 5: a vector of 4294967295 items in 1 bytes"},
		{"export count past its bytes", decl("f", writeModule(t, hugeVector(7)), str, row.Of(row.String)),
			"not a valid module: section 7: offset 5: a vector of 4294967295 items in 1 bytes"},
		{"data count past its bytes", decl("f", writeModule(t, hugeVector(11)), str, row.Of(row.String)),
			"not a valid module: section 11: offset 5: a vector of 4294967295 items in 1 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := loadErr(t, tc.d)
			if !strings.HasPrefix(got, "p.yaml:7:11: functions[0].wasm: function f: ") || !strings.Contains(got, tc.want) {
				t.Errorf("got  %s\nwant p.yaml:7:11: functions[0].wasm: function f: ...%s...", got, tc.want)
			}
		})
	}
}

// TestLoadTinyModule loads a module that has the ABI's exports and
// nothing else, to show that the errors above are about what each
// module lacks.
func TestLoadTinyModule(t *testing.T) {
	d := decl("f", writeModule(t, tinyModule(true, nil, abiFuncs(1))), []row.Type{row.Of(row.String)}, row.Of(row.String))
	loadOne(t, d)
}

// TestNameTaken refuses a declaration with a built-in's name, and two
// of one name and parameter types.
func TestNameTaken(t *testing.T) {
	file := writeModule(t, tinyModule(true, nil, abiFuncs(1)))
	a := decl("upper", file, []row.Type{row.Of(row.String)}, row.Of(row.String))
	b, c := decl("f", file, []row.Type{row.Of(row.Int)}, row.Of(row.String)), decl("F", file, []row.Type{row.Of(row.Int)}, row.Of(row.String))
	b.Export, c.Export = "f", "f"
	r, errs := Load(context.Background(), []*spec.Function{a, b, c}, func(n string) bool { return strings.EqualFold(n, "upper") })
	defer r.Close(context.Background())
	if len(errs) != 2 || !strings.Contains(errs[0].Msg, `"upper" is the name of a built-in SQL function`) || !strings.Contains(errs[1].Msg, "function F(INT) is declared twice") {
		t.Fatalf("errors: %v", errs)
	}
}

// FuzzLoadModule loads random bytes as a module: an error, never a
// panic or a hang.
//
// Inputs are of 192 bytes at most (the seeds take 104 and 126), written
// over one file: the fuzzer minimizes each input that finds new code by
// removing every run of its bytes (the square of its length, a load
// each), and inputs of 360 bytes held it for its minute each, 1185
// inputs in 76 s.
func FuzzLoadModule(f *testing.F) {
	f.Add(tinyModule(true, nil, abiFuncs(1)))
	f.Add(tinyModule(true, []tinyImport{{module: "env", name: "abort", params: []byte{wI32, wI32, wI32, wI32}}}, abiFuncs(1)))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Add([]byte{})
	path := filepath.Join(f.TempDir(), "m.wasm")
	f.Fuzz(func(t *testing.T, code []byte) {
		if len(code) > 192 {
			return
		}
		if err := os.WriteFile(path, code, 0o644); err != nil {
			t.Fatal(err)
		}
		d := decl("f", path, []row.Type{row.Of(row.String)}, row.Of(row.String))
		r, _ := Load(context.Background(), []*spec.Function{d}, nil)
		r.Close(context.Background())
	})
}

// hugeVector is a module of one section, id, whose vector count is
// 2^32-1 with one byte after it.
func hugeVector(id byte) []byte {
	return append(append([]byte{}, wasmHeader...), id, 6, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x60)
}

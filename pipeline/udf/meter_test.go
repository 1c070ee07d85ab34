package udf

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/etld/etld/internal/wasmbuild"
	"github.com/etld/etld/pipeline/row"
)

// fnBody assembles a function body: no locals but the i32s asked for.
func fnBody(i32Locals int, code ...byte) []byte {
	body := []byte{0x00}
	if i32Locals > 0 {
		body = []byte{0x01, byte(i32Locals), wI32}
	}
	body = append(append(body, code...), 0x0b)
	return append(uleb(uint64(len(body))), body...)
}

func v128(lanes ...uint32) []byte {
	var b []byte
	for _, l := range lanes {
		b = append(b, byte(l), byte(l>>8), byte(l>>16), byte(l>>24))
	}
	return b
}

// kitchenModule is a module with every place a function index goes: an
// imported function, calls, call_indirect through element segments of
// both forms (indexes and expressions), ref.func in code and in a
// global's initialiser, a start function, exports and a name section;
// and a loop, br_table, SIMD and bulk memory instructions for the
// reader. kitchenWant is what its exports return.
func kitchenModule() []byte {
	types := [][]byte{
		{0x60, 0x00, 0x01, wI32},             // 0: () -> i32
		{0x60, 0x01, wI32, 0x01, wI32},       // 1: (i32) -> i32
		{0x60, 0x00, 0x00},                   // 2: () -> ()
		{0x60, 0x02, wI32, wI32, 0x01, wI32}, // 3: (i32, i32) -> i32
	}
	imports := [][]byte{append(append(wname("host"), wname("add1")...), 0x00, 0x01)} // func 0
	funcTypes := []byte{1, 3, 1, 2, 0, 1, 0, 1, 1, 0}                                // funcs 1..10
	shuffle := []byte{0xfd, 13}
	for i := byte(16); i < 32; i++ {
		shuffle = append(shuffle, i)
	}
	simd := []byte{
		0x41, 0x00, 0x41, 0x05, 0x41, 0x08, 0xfc, 0x0b, 0x00, // memory.fill(0, 5, 8)
		0x41, 0x10, 0x41, 0x00, 0x41, 0x08, 0xfc, 0x0a, 0x00, 0x00, // memory.copy(16, 0, 8)
		0x41, 0x11, 0x2d, 0x00, 0x00, // i32.load8_u(17): 5
		0x41, 0x20, 0xfd, 0x0c} // v128.const
	simd = append(simd, v128(10, 20, 30, 40)...)
	simd = append(simd, 0xfd, 0x0b, 0x04, 0x00, // v128.store(32)
		0x41, 0x24, 0x28, 0x02, 0x00, 0x6a, // + i32.load(36): 20
		0xfd, 0x0c)
	simd = append(simd, v128(1, 2, 3, 4)...)
	simd = append(simd, 0xfd, 0x0c)
	simd = append(simd, v128(10, 20, 30, 40)...)
	simd = append(simd, shuffle...)
	simd = append(simd, 0xfd, 0x1b, 0x01, 0x6a) // + i32x4.extract_lane 1 of the shuffle: 20
	codes := [][]byte{
		// 1 sum(n): 0+1+...+n-1 by a loop.
		fnBody(2, 0x02, 0x40, 0x03, 0x40, // block, loop
			0x20, 0x01, 0x20, 0x00, 0x46, 0x0d, 0x01, // if i == n: out of the block
			0x20, 0x02, 0x20, 0x01, 0x6a, 0x21, 0x02, // acc += i
			0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01, // i++
			0x0c, 0x00, 0x0b, 0x0b, // br 0, end, end
			0x20, 0x02),
		// 2 callSlot(x, slot)
		fnBody(0, 0x20, 0x00, 0x20, 0x01, 0x11, 0x01, 0x00),
		// 3 double(x)
		fnBody(0, 0x20, 0x00, 0x20, 0x00, 0x6a),
		// 4 start: g1 = 7
		fnBody(0, 0x41, 0x07, 0x24, 0x00),
		// 5 getG
		fnBody(0, 0x23, 0x00),
		// 6 pick(x): br_table over x, 0 -> 100, else 200
		fnBody(0, 0x02, 0x40, 0x02, 0x40, 0x20, 0x00, 0x0e, 0x01, 0x00, 0x01, 0x0b, 0x41, 0xe4, 0x00, 0x0f, 0x0b, 0x41, 0xc8, 0x01),
		// 7 simd: bulk memory, SIMD
		fnBody(0, simd...),
		// 8 via(x): the import
		fnBody(0, 0x20, 0x00, 0x10, 0x00),
		// 9 refcall(x): table[2] = ref.func double; call it
		fnBody(0, 0x41, 0x02, 0xd2, 0x03, 0x26, 0x00, 0x20, 0x00, 0x41, 0x02, 0x11, 0x01, 0x00),
		// 10 g2call: table[3] = g2 (ref.func via); via(4) through it
		fnBody(0, 0x41, 0x03, 0x23, 0x01, 0x26, 0x00, 0x41, 0x04, 0x41, 0x03, 0x11, 0x01, 0x00),
	}
	globals := [][]byte{
		{wI32, 0x01, 0x41, 0x00, 0x0b}, // g0 (mut i32)
		{0x70, 0x00, 0xd2, 0x08, 0x0b}, // g1 funcref = ref.func via
	}
	elems := [][]byte{
		{0x00, 0x41, 0x00, 0x0b, 0x01, 0x03},             // table[0] = double
		{0x04, 0x41, 0x01, 0x0b, 0x01, 0xd2, 0x08, 0x0b}, // table[1] = ref.func via
		{0x03, 0x00, 0x02, 0x01, 0x05},                   // declarative: sum, getG
		{0x05, 0x70, 0x01, 0xd0, 0x70, 0x0b},             // passive: ref.null
	}
	export := func(name string, kind, idx byte) []byte { return append(wname(name), kind, idx) }
	exports := [][]byte{
		export("sum", 0, 1), export("callSlot", 0, 2), export("getG", 0, 5), export("pick", 0, 6),
		export("simd", 0, 7), export("refcall", 0, 9), export("g2call", 0, 10), export("memory", 2, 0),
	}
	names := append(wname("name"), section(1, vec([][]byte{append([]byte{1}, wname("sum")...), append([]byte{3}, wname("double")...)}))...)
	out := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	out = append(out, section(1, vec(types))...)
	out = append(out, section(2, vec(imports))...)
	fidx := make([][]byte, len(funcTypes))
	for i, t := range funcTypes {
		fidx[i] = []byte{t}
	}
	out = append(out, section(3, vec(fidx))...)
	out = append(out, section(4, vec([][]byte{{0x70, 0x00, 0x04}}))...)
	out = append(out, section(5, vec([][]byte{{0x00, 0x01}}))...)
	out = append(out, section(6, vec(globals))...)
	out = append(out, section(7, vec(exports))...)
	out = append(out, section(8, []byte{0x04})...)
	out = append(out, section(9, vec(elems))...)
	out = append(out, section(10, vec(codes))...)
	out = append(out, section(0, names)...)
	out = append(out, section(0, append(wname(".debug_info"), 1, 2, 3))...)
	return out
}

// kitchenWant is what each export of kitchenModule returns for its
// arguments.
var kitchenWant = []struct {
	export string
	args   []uint64
	want   uint64
}{
	{"sum", []uint64{10}, 45},
	{"callSlot", []uint64{5, 0}, 10},
	{"callSlot", []uint64{5, 1}, 6},
	{"getG", nil, 7},
	{"pick", []uint64{0}, 100},
	{"pick", []uint64{1}, 200},
	{"simd", nil, 45},
	{"refcall", []uint64{4}, 8},
	{"g2call", nil, 5},
}

// runKitchen instantiates code (metered or not) and checks its exports'
// results.
func runKitchen(t *testing.T, code []byte, metered bool) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.NewHostModuleBuilder("host").NewFunctionBuilder().
		WithFunc(func(x uint32) uint32 { return x + 1 }).Export("add1").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	if metered {
		if _, err := rt.NewHostModuleBuilder(meterModuleName).NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(meterCheck), nil, []api.ValueType{api.ValueTypeI32}).
			Export(meterFuncName).Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	m, err := rt.Instantiate(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range kitchenWant {
		res, err := m.ExportedFunction(c.export).Call(ctx, c.args...)
		if err != nil || len(res) != 1 || res[0] != c.want {
			t.Errorf("metered %v: %s%v = %v, %v; want %d", metered, c.export, c.args, res, err, c.want)
		}
	}
}

// TestMeterKitchen meters a module with every place a function index
// goes and checks that it computes what it did.
func TestMeterKitchen(t *testing.T) {
	code := kitchenModule()
	runKitchen(t, code, false)
	metered, err := meterModule(code)
	if err != nil {
		t.Fatal(err)
	}
	runKitchen(t, metered, true)
	if bytes.Contains(metered, []byte(".debug_info")) {
		t.Error("the DWARF section was kept; its code offsets no longer hold")
	}
	rt := wazero.NewRuntime(context.Background())
	defer rt.Close(context.Background())
	mod, err := rt.CompileModule(context.Background(), metered)
	if err != nil {
		t.Fatal(err)
	}
	if got := mod.ExportedFunctions()["sum"].Name(); got != "sum" {
		t.Errorf("the name section's function names did not move with their functions: sum is named %q", got)
	}
	imps := mod.ImportedFunctions()
	if last := imps[len(imps)-1]; len(imps) != 2 || last.Index() != 1 {
		t.Errorf("imports %d, the meter's at index %d; want 2, at 1", len(imps), last.Index())
	}
}

// TestMeterRealModules meters the modules the tests and examples build
// (Go's wasip1, and AssemblyScript's when ETLD_TEST_ASC names asc): each
// still compiles, with the meter's import.
func TestMeterRealModules(t *testing.T) {
	paths := []string{
		wasmbuild.Go(t, "testdata/wasm/sandbox"),
		wasmbuild.Go(t, "../../sdk/go/examples/count_char"),
		wasmbuild.Go(t, "../../sdk/go/examples/upper"),
		wasmbuild.Go(t, "../../sdk/go/examples/words"),
	}
	if asc := os.Getenv("ETLD_TEST_ASC"); asc != "" {
		paths = append(paths, wasmbuild.AssemblyScript(t, asc, "../../sdk/assemblyscript/strings.ts"))
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(compileCache))
	defer rt.Close(ctx)
	for _, p := range paths {
		code, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		metered, err := meterModule(code)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		mod, err := rt.CompileModule(ctx, metered)
		if err != nil {
			t.Errorf("%s metered does not compile: %v", p, err)
			continue
		}
		found := false
		for _, f := range mod.ImportedFunctions() {
			m, n, _ := f.Import()
			found = found || (m == meterModuleName && n == meterFuncName)
		}
		if !found {
			t.Errorf("%s metered does not import %s.%s", p, meterModuleName, meterFuncName)
		}
	}
}

// TestMeterLoaded loads the sandbox's module metered: the sandbox
// tests' time limits then hold through the meter.
func TestMeterLoaded(t *testing.T) {
	f := loadOne(t, decl("loop", wasmbuild.Go(t, "testdata/wasm/sandbox"), []row.Type{row.Of(row.String)}, row.Of(row.String)))
	if w := f.impl.(*wasmImpl); !w.metered {
		t.Error("the module was loaded unmetered")
	}
}

// endless is a module whose "spin" loops forever and whose "fib" (of
// an i64, without a loop) recurses for ages at 90.
func endless() []byte {
	types := [][]byte{{0x60, 0x00, 0x00}, {0x60, 0x01, wI64, 0x01, wI64}}
	codes := [][]byte{
		fnBody(0, 0x03, 0x40, 0x0c, 0x00, 0x0b),
		fnBody(0, 0x20, 0x00, 0x42, 0x02, 0x54, 0x04, wI64, 0x20, 0x00, 0x05,
			0x20, 0x00, 0x42, 0x01, 0x7d, 0x10, 0x01, 0x20, 0x00, 0x42, 0x02, 0x7d, 0x10, 0x01, 0x7c, 0x0b),
	}
	out := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	out = append(out, section(1, vec(types))...)
	out = append(out, section(3, vec([][]byte{{0x00}, {0x01}}))...)
	out = append(out, section(7, vec([][]byte{append(wname("spin"), 0, 0), append(wname("fib"), 0, 1)}))...)
	return append(out, section(10, vec(codes))...)
}

// TestMeterStops stops an endless loop and an endless recursion of a
// metered module (compiled as loadWasm does, without wazero's close) at
// their time limit, and both when the context is cancelled.
func TestMeterStops(t *testing.T) {
	ctx := context.Background()
	metered, err := meterModule(endless())
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWasmImpl(ctx, &Function{}, DefaultMemoryLimit, metered, true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close(ctx)
	m, err := w.rt.InstantiateModule(ctx, w.mod, wazero.NewModuleConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		export string
		args   []uint64
	}{{"spin", nil}, {"fib", []uint64{90}}} {
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_, err := m.ExportedFunction(c.export).Call(cctx, c.args...)
		cancel()
		if err := callError(cctx, err); !errors.Is(err, ErrTimeout) {
			t.Errorf("%s: %v, want the time limit", c.export, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: stopped after %v for a limit of 100ms", c.export, d)
		}
		cctx, cancel = context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err = m.ExportedFunction(c.export).Call(cctx, c.args...)
		var exit *sys.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != sys.ExitCodeContextCanceled {
			t.Errorf("%s cancelled: %v, want exit code %d", c.export, err, sys.ExitCodeContextCanceled)
		}
	}
}

// oneFunc is a module of one function () -> () of code.
func oneFunc(code ...byte) []byte {
	out := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	out = append(out, section(1, vec([][]byte{{0x60, 0x00, 0x00}}))...)
	out = append(out, section(3, vec([][]byte{{0x00}}))...)
	return append(out, section(10, vec([][]byte{fnBody(0, code...)}))...)
}

// TestMeterRefuses leaves a module it cannot read to wazero's close: not
// WebAssembly, truncated, an instruction of a proposal it does not know;
// and an index just past the module's own locals, globals or types,
// which the meter's additions would make valid: a hostile module could
// then set the counter and run past its limit.
func TestMeterRefuses(t *testing.T) {
	code := endless()
	for name, b := range map[string][]byte{
		"not wasm":             []byte("not wasm"),
		"truncated":            code[:len(code)-3],
		"exceptions":           oneFunc(0x06, 0x40, 0x0b),             // try
		"the turns' local":     oneFunc(0x41, 0x00, 0x21, 0x00),       // i32.const 0, local.set 0
		"the counter":          oneFunc(0x41, 0x00, 0x24, 0x00),       // i32.const 0, global.set 0
		"the counter read":     oneFunc(0x23, 0x00, 0x1a),             // global.get 0, drop
		"the meter's type":     oneFunc(0x41, 0x00, 0x11, 0x01, 0x00), // call_indirect type 1
		"a block of its type":  oneFunc(0x02, 0x01, 0x41, 0x00, 0x0b, 0x1a),
		"a loop of its type":   oneFunc(0x03, 0x01, 0x41, 0x00, 0x0b, 0x1a),
		"a local out of reach": oneFunc(0x20, 0x05, 0x1a),
	} {
		if _, err := meterModule(b); err == nil {
			t.Errorf("%s: metered", name)
		}
	}
}

// FuzzMeter meters arbitrary bytes: it never panics, a module that
// compiles still compiles metered, and one that does not compile does
// not compile metered either (the meter never makes a module valid).
func FuzzMeter(f *testing.F) {
	f.Add(kitchenModule())
	f.Add(endless())
	f.Add(allTypes())
	f.Add(spinCalls())
	f.Add(tinyModule(true, []tinyImport{{module: "env", name: "x", params: []byte{wI32}}}, abiFuncs(1)))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, code []byte) {
		if checkVectorCounts(code) != nil {
			return // refused before wazero or the meter reads it (wasm_counts.go)
		}
		metered, err := meterModule(code)
		if err != nil {
			return
		}
		orig, origErr := rt.CompileModule(ctx, code)
		if origErr == nil {
			_ = orig.Close(ctx)
		}
		mod, err := rt.CompileModule(ctx, metered)
		if err == nil {
			_ = mod.Close(ctx)
		}
		switch {
		case origErr == nil && err != nil:
			t.Fatalf("compiles, but not metered: %v", err)
		// A custom section is not the module's code: the meter drops all
		// but the name section, and wazero refuses an empty one at a
		// module's very end (its reader's EOF).
		case origErr != nil && err == nil && !strings.Contains(origErr.Error(), "custom section"):
			t.Fatalf("does not compile (%v), but compiles metered", origErr)
		}
	})
}

package udf

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// compileCache keeps the machine code of the modules compiled: planning
// a pipeline again (a reload, each `etld test`, a restart of the
// process) does not compile its modules again, which for a Go module
// takes seconds. It is a directory of the user's cache when there is
// one, else the process's memory.
var compileCache = newCompileCache()

func newCompileCache() wazero.CompilationCache {
	if dir, err := os.UserCacheDir(); err == nil {
		if c, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "etld", "wasm")); err == nil {
			return c
		}
	}
	return wazero.NewCompilationCache()
}

// The exports every module has beside its functions.
const (
	exportAlloc   = "etld_alloc"
	exportVersion = "etld_abi_version"
	exportMemory  = "memory"
	// Go's reactors (-buildmode=c-shared) initialise their runtime in
	// _initialize; a command's _start runs main and exits.
	exportInit  = "_initialize"
	exportStart = "_start"
)

// wasmImpl is a compiled module: its own runtime, which holds the
// function's memory cap.
type wasmImpl struct {
	fn  *Function
	rt  wazero.Runtime
	mod wazero.CompiledModule
	cfg wazero.ModuleConfig
	// metered is whether the module runs metered (meter.go), rather
	// than under wazero's close on the context's end.
	metered bool
}

// loadWasm compiles the module of f and checks its exports, then starts
// it once, so that a module that traps while it initialises fails at
// validate rather than at run.
func loadWasm(ctx context.Context, f *Function) (_ *wasmImpl, err error) {
	d := f.Decl
	code, err := os.ReadFile(d.File)
	if err != nil {
		return nil, fmt.Errorf("cannot read the module: %w", err)
	}
	if err := checkVectorCounts(code); err != nil {
		return nil, err
	}
	limit := d.MemoryLimit
	if limit == 0 {
		limit = DefaultMemoryLimit
	}
	// The time limit: the module metered (meter.go), or, when the meter
	// cannot read it (a proposal it does not know) or its output does
	// not compile, the module as it is under wazero's close on the
	// context's end, slower but as safe.
	var w *wasmImpl
	if metered, merr := meterModule(code); merr == nil {
		w, err = newWasmImpl(ctx, f, limit, metered, true)
	}
	if w == nil {
		w, err = newWasmImpl(ctx, f, limit, code, false)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = w.rt.Close(ctx)
		}
	}()
	if err := checkExports(w.mod, d.Export); err != nil {
		return nil, err
	}
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	if _, ok := w.mod.ExportedFunctions()[exportInit]; ok {
		cfg = cfg.WithStartFunctions(exportInit)
	}
	if !d.Deterministic {
		cfg = cfg.WithSysWalltime().WithSysNanotime().WithSysNanosleep().WithRandSource(rand.Reader)
	}
	w.cfg = cfg
	inst, err := w.start(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer inst.Close(ctx)
	res, err := callWithin(ctx, f.Timeout, inst.ExportedFunction(exportVersion))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", exportVersion, err)
	}
	if v := uint32(res); v != ABIVersion {
		return nil, fmt.Errorf("the module speaks version %d of etld's function ABI (%s), this etld speaks %d", v, exportVersion, ABIVersion)
	}
	return w, nil
}

// newWasmImpl compiles code in a runtime of its own; metered is whether
// code has the meter's countdown, which then replaces wazero's close on
// the context's end.
func newWasmImpl(ctx context.Context, f *Function, limit int64, code []byte, metered bool) (_ *wasmImpl, err error) {
	rcfg := wazero.NewRuntimeConfig().
		WithMemoryLimitPages(uint32(limit / 65536)).
		WithCloseOnContextDone(!metered).
		WithCompilationCache(compileCache)
	rt := wazero.NewRuntimeWithConfig(ctx, rcfg)
	w := &wasmImpl{fn: f, rt: rt, metered: metered}
	defer func() {
		if err != nil {
			_ = rt.Close(ctx)
		}
	}()
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return nil, err
	}
	if _, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(abort).Export("abort").Instantiate(ctx); err != nil {
		return nil, err
	}
	if metered {
		if _, err := rt.NewHostModuleBuilder(meterModuleName).NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(meterCheck), nil, []api.ValueType{api.ValueTypeI32}).
			Export(meterFuncName).Instantiate(ctx); err != nil {
			return nil, err
		}
	}
	if w.mod, err = compile(ctx, rt, code); err != nil {
		return nil, err
	}
	return w, nil
}

// slowClock is a deterministic function's monotonic clock: it advances a
// nanosecond each time it is read. wazero's default fake clock advances a
// millisecond a read, and Go's runtime, which reads it all the time,
// then believes minutes pass within a few hundred thousand calls and
// starts its periodic garbage collection in the background, which a
// module's exported calls never give the time to finish: its heap grows
// until it runs out of memory.
func slowClock() func() int64 {
	var t atomic.Int64
	return func() int64 { return t.Add(1) }
}

// compile compiles code, turning a panic of the compiler into an error:
// a module is the user's bytes.
func compile(ctx context.Context, rt wazero.Runtime, code []byte) (mod wazero.CompiledModule, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the module does not load: %v", r)
		}
	}()
	mod, err = rt.CompileModule(ctx, code)
	if err != nil {
		return nil, fmt.Errorf("the module does not load: %w", err)
	}
	return mod, nil
}

// abort is AssemblyScript's env.abort: the module gave up (a failed
// assertion, an index out of range). Its message, if any, is an
// AssemblyScript string (UTF-16, its byte length before it).
func abort(ctx context.Context, m api.Module, msg, file, line, col uint32) {
	text := "abort"
	if s, ok := asString(m.Memory(), msg); ok && s != "" {
		text = "abort: " + s
	}
	panic(fmt.Errorf("%s (line %d, column %d)", text, line, col))
}

func asString(mem api.Memory, ptr uint32) (string, bool) {
	if mem == nil || ptr < 4 {
		return "", false
	}
	n, ok := mem.ReadUint32Le(ptr - 4)
	if !ok || n > 4096 {
		return "", false
	}
	b, ok := mem.Read(ptr, n)
	if !ok {
		return "", false
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(u)), true
}

// checkExports checks that the module has the ABI's exports with their
// signatures, and the function's.
func checkExports(mod wazero.CompiledModule, export string) error {
	fns := mod.ExportedFunctions()
	sig := func(name string, params, results []api.ValueType) error {
		def, ok := fns[name]
		if !ok {
			return nil
		}
		if !sameTypes(def.ParamTypes(), params) || !sameTypes(def.ResultTypes(), results) {
			return fmt.Errorf("export %s has the signature %s, want %s", name, signature(def.ParamTypes(), def.ResultTypes()), signature(params, results))
		}
		return nil
	}
	var missing []string
	for _, name := range []string{export, exportAlloc, exportVersion} {
		if _, ok := fns[name]; !ok {
			missing = append(missing, name)
		}
	}
	if _, ok := mod.ExportedMemories()[exportMemory]; !ok {
		missing = append(missing, exportMemory+" (a memory)")
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("the module does not export %s", strings.Join(missing, ", "))
		if _, ok := fns[exportStart]; ok {
			msg += "; it is a command (it exports _start): build it as a library (Go: go build -buildmode=c-shared)"
		} else if len(fns) > 0 && !slices.Contains(missing, exportAlloc) {
			msg += fmt.Sprintf("; it exports %s", strings.Join(exportNames(fns), ", "))
		}
		return errors.New(msg)
	}
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	return errors.Join(
		sig(export, []api.ValueType{i32, i32}, []api.ValueType{i64}),
		sig(exportAlloc, []api.ValueType{i32}, []api.ValueType{i32}),
		sig(exportVersion, nil, []api.ValueType{i32}),
	)
}

func exportNames(fns map[string]api.FunctionDefinition) []string {
	var names []string
	for n := range fns {
		if n != exportInit && n != exportAlloc && n != exportVersion {
			names = append(names, n)
		}
	}
	if len(names) > 8 {
		names = append(names[:8], "...")
	}
	return names
}

func sameTypes(a, b []api.ValueType) bool {
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

func signature(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("(%s) -> (%s)", names(params), names(results))
}

// start instantiates the module, its initialisation under the time
// limit of a call; what it writes to stderr goes to stderr (nil: nowhere).
func (w *wasmImpl) start(ctx context.Context, stderr io.Writer) (api.Module, error) {
	sctx, cancel := context.WithTimeout(ctx, w.fn.Timeout)
	defer cancel()
	cfg := w.cfg
	if w.fn.Deterministic {
		cfg = cfg.WithNanotime(slowClock(), 1)
	}
	if stderr != nil {
		cfg = cfg.WithStderr(stderr)
	}
	m, err := w.rt.InstantiateModule(sctx, w.mod, cfg)
	if err != nil {
		return nil, fmt.Errorf("the module does not start: %w", callError(sctx, err))
	}
	return m, nil
}

func (w *wasmImpl) close(ctx context.Context) error { return w.rt.Close(ctx) }

func (w *wasmImpl) newInstance(ctx context.Context) (Instance, error) {
	i := &wasmInstance{w: w, base: ctx, stack: make([]uint64, 2)}
	if err := i.restart(); err != nil {
		return nil, err
	}
	return i, nil
}

// callWithin calls f without arguments under the time limit.
func callWithin(ctx context.Context, limit time.Duration, f api.Function) (uint64, error) {
	if f == nil {
		return 0, errors.New("missing")
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := f.Call(cctx)
	if err != nil {
		return 0, callError(cctx, err)
	}
	if len(res) == 0 {
		return 0, errors.New("returned nothing")
	}
	return res[0], nil
}

// callError names why a call failed: its time limit, or the trap.
func callError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return trimTrap(err)
}

// trimTrap keeps a trap's first line: wazero appends the module's stack.
func trimTrap(err error) error {
	msg := err.Error()
	if first, _, cut := strings.Cut(msg, "\n"); cut {
		return errors.New(first)
	}
	return err
}

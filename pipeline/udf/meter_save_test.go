package udf

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// TestMeterSaveSet checks which locals a function's loops' checks save:
// those live at a loop's header and across no other call.
func TestMeterSaveSet(t *testing.T) {
	// Function (n i32) -> i32 with locals 1 (i) and 2 (acc).
	loopTo := []byte{0x20, 0x01, 0x20, 0x00, 0x46, 0x0d, 0x01} // if i == n: out of the block
	next := []byte{0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01}   // i++
	acc := []byte{0x20, 0x02, 0x20, 0x01, 0x6a, 0x21, 0x02}    // acc += i
	body := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	for _, c := range []struct {
		name string
		code []byte
		want []uint32
	}{
		{"a sum", body([]byte{0x02, 0x40, 0x03, 0x40}, loopTo, acc, next, []byte{0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x02}), []uint32{0, 1, 2}},
		{"no loop", body(acc, []byte{0x20, 0x02}), nil},
		// Every local is live across the call: the compiler keeps them in
		// memory anyway.
		{"a call in the loop", body([]byte{0x02, 0x40, 0x03, 0x40}, loopTo, []byte{0x10, 0x00, 0x1a}, acc, next, []byte{0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x02}), nil},
		// acc is live across the call after the loop, i and n are not.
		{"a call after the loop", body([]byte{0x02, 0x40, 0x03, 0x40}, loopTo, acc, next, []byte{0x0c, 0x00, 0x0b, 0x0b, 0x41, 0x00, 0x10, 0x00, 0x1a, 0x20, 0x02}), []uint32{0, 1}},
		// acc is read before the loop only, then set: not live at its header.
		{"read before", body([]byte{0x20, 0x02, 0x1a, 0x03, 0x40}, next, []byte{0x20, 0x01, 0x20, 0x00, 0x49, 0x0d, 0x00, 0x0b, 0x41, 0x00, 0x21, 0x02, 0x20, 0x01}), []uint32{0, 1}},
		// acc is read in the else branch only, and returned after a
		// br_table out of the loop.
		{"if, else, br_table", body([]byte{0x02, 0x40, 0x03, 0x40, 0x20, 0x01, 0x04, 0x40}, next, []byte{0x05, 0x20, 0x02, 0x1a, 0x0b, 0x20, 0x01, 0x0e, 0x01, 0x00, 0x01, 0x0b, 0x0b, 0x41, 0x00}), []uint32{1, 2}},
	} {
		m := &meter{params: [][]byte{{wI32}}, funcTypes: []uint32{0}, types: 1}
		_, _, err := m.planSaves(vec([][]byte{fnBody(2, c.code...)}))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []uint32
		for _, s := range m.saves[0] {
			got = append(got, s.local)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: saves locals %v, want %v", c.name, got, c.want)
		}
	}
}

// counted instantiates code metered with a check that counts its calls
// (and returns the interval again, as meterCheck does).
func counted(t *testing.T, code []byte) (api.Module, *int) {
	t.Helper()
	ctx := context.Background()
	metered, err := meterModule(code)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	checks := new(int)
	if _, err := rt.NewHostModuleBuilder(meterModuleName).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			*checks++
			stack[0] = meterInterval
		}), nil, []api.ValueType{api.ValueTypeI32}).
		Export(meterFuncName).Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := rt.Instantiate(ctx, metered)
	if err != nil {
		t.Fatal(err)
	}
	return m, checks
}

// spinCalls is a module of spin(n), whose loop's header runs max(n, 1)
// times, leaf(), and calls(n), whose loop calls leaf n times.
func spinCalls() []byte {
	types := [][]byte{{0x60, 0x01, wI32, 0x00}, {0x60, 0x00, 0x00}}
	step := []byte{0x20, 0x01, 0x41, 0x01, 0x6a, 0x22, 0x01, 0x20, 0x00, 0x49, 0x0d, 0x00, 0x0b} // i = i+1; if i < n: again; end
	codes := [][]byte{
		fnBody(1, append([]byte{0x03, 0x40}, step...)...),
		fnBody(0),
		fnBody(1, append([]byte{0x03, 0x40, 0x10, 0x01}, step...)...),
	}
	out := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	out = append(out, section(1, vec(types))...)
	out = append(out, section(3, vec([][]byte{{0x00}, {0x01}, {0x00}}))...)
	out = append(out, section(7, vec([][]byte{append(wname("spin"), 0, 0), append(wname("calls"), 0, 2)}))...)
	return append(out, section(10, vec(codes))...)
}

// meterModel counts as the rewritten code does (meter.go's count and
// turn), l an activation's turns' local, also the count's scratch.
type meterModel struct {
	g      int32
	checks int
}

func (mm *meterModel) count(l *int32) {
	*l = mm.g - 1
	mm.g = *l
	if *l < 1 {
		mm.g = meterInterval
		mm.checks++
	}
}

func (mm *meterModel) turn(l *int32) {
	if *l++; *l&(meterTurns-1) == 0 {
		mm.count(l)
	}
}

// run models spinCalls's export (0 spin, 1 calls) with argument n.
func (mm *meterModel) run(export int, n int) {
	var l int32
	mm.count(&l)
	for range max(n, 1) {
		mm.turn(&l)
		if export == 1 {
			var leaf int32
			mm.count(&leaf)
		}
	}
}

// TestMeterBudget checks when the check is called: at the count that
// takes the counter to zero exactly (a count is a function's entry or,
// at most, meterTurns turns of a loop), no sooner and no later, again
// meterInterval counts after each check, across calls, and through many
// calls of a function.
func TestMeterBudget(t *testing.T) {
	ctx := context.Background()
	// The first spin(n) to reach a check, by the model.
	lo, hi := 1, meterInterval*meterTurns
	for lo < hi {
		mid := (lo + hi) / 2
		mm := &meterModel{g: meterInterval}
		if mm.run(0, mid); mm.checks > 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo > (meterInterval-1)*meterTurns {
		t.Fatalf("the model's first check after %d turns, past %d counts of %d turns", lo, meterInterval-1, meterTurns)
	}
	for _, c := range []struct {
		name  string
		calls [][2]int // export (0 spin, 1 calls), argument
	}{
		{"just short", [][2]int{{0, lo - 1}}},
		{"at the boundary", [][2]int{{0, lo}}},
		// The counter carries over from call to call, and starts again
		// from meterInterval after a check.
		{"across calls", [][2]int{{0, lo - 1}, {0, 1}, {0, lo - 1}, {0, 1}, {0, 1}, {0, 3 * lo}}},
		// Each of leaf's entries counts.
		{"many calls", [][2]int{{1, 10000}, {1, 10000}, {1, 10000}}},
	} {
		m, checks := counted(t, spinCalls())
		mm := &meterModel{g: meterInterval}
		for i, call := range c.calls {
			name := [...]string{"spin", "calls"}[call[0]]
			if _, err := m.ExportedFunction(name).Call(ctx, uint64(call[1])); err != nil {
				t.Fatalf("%s: %s(%d): %v", c.name, name, call[1], err)
			}
			mm.run(call[0], call[1])
			if *checks != mm.checks {
				t.Errorf("%s: after %s(%d) (call %d), %d checks, want %d", c.name, name, call[1], i, *checks, mm.checks)
			}
		}
	}
	mm := &meterModel{g: meterInterval}
	if mm.run(1, 10000); mm.checks < 2 {
		t.Errorf("calls(10000) makes %d checks by the model; want 2 or more (10000 entries and more)", mm.checks)
	}
}

// allTypes is a module whose "run"(n) carries a local of every value
// type round a loop of n turns and returns what it made of them.
func allTypes() []byte {
	f32one := binary.LittleEndian.AppendUint32(nil, math.Float32bits(1))
	f64half := binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.5))
	// Locals: 0 n, 1 i i32, 2 a i64, 3 f f32, 4 d f64, 5 v v128, 6 e externref.
	code := []byte{0x06, 0x01, wI32, 0x01, wI64, 0x01, 0x7d, 0x01, 0x7c, 0x01, 0x7b, 0x01, 0x6f,
		0x03, 0x40,
		0x20, 0x02, 0x20, 0x01, 0xad, 0x7c, 0x21, 0x02, // a += u64(i)
		0x20, 0x03, 0x43}
	code = append(code, f32one...)
	code = append(code, 0x92, 0x21, 0x03, 0x20, 0x04, 0x44) // f += 1; d += 0.5
	code = append(code, f64half...)
	code = append(code, 0xa0, 0x21, 0x04,
		0x20, 0x05, 0x20, 0x01, 0xfd, 0x11, 0xfd, 0xae, 0x01, 0x21, 0x05, // v += splat(i)
		0x20, 0x01, 0x41, 0x01, 0x6a, 0x22, 0x01, 0x20, 0x00, 0x49, 0x0d, 0x00, 0x0b, // i++; again while i < n
		0x20, 0x02, 0x20, 0x03, 0xaf, 0x7c, 0x20, 0x04, 0xb1, 0x7c, // a + u64(f) + u64(d)
		0x20, 0x05, 0xfd, 0x1b, 0x00, 0xad, 0x7c, // + u64(lane 0 of v)
		0x20, 0x06, 0xd1, 0xad, 0x7c, 0x0b) // + (e is null)
	out := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	out = append(out, section(1, vec([][]byte{{0x60, 0x01, wI32, 0x01, wI64}}))...)
	out = append(out, section(3, vec([][]byte{{0x00}}))...)
	out = append(out, section(7, vec([][]byte{append(wname("run"), 0, 0)}))...)
	return append(out, section(10, vec([][]byte{append(uleb(uint64(len(code))), code...)}))...)
}

// TestMeterSavesValues runs a loop carrying a local of every value type
// through several checks, which save and restore them: it computes what
// it does unmetered.
func TestMeterSavesValues(t *testing.T) {
	code := allTypes()
	m := &meter{}
	var err error
	if m.params, err = typeParams(vec([][]byte{{0x60, 0x01, wI32, 0x01, wI64}})); err != nil {
		t.Fatal(err)
	}
	m.funcTypes, m.types = []uint32{0}, 1
	if _, _, err := m.planSaves(lastSection(code)); err != nil {
		t.Fatal(err)
	}
	if got := len(m.saves[0]); got != 7 {
		t.Errorf("the loop's checks save %d locals, want all 7", got)
	}
	const n = 3 * meterInterval * meterTurns // three checks and some
	sum := uint64(n) * (n - 1) / 2
	want := sum + n + n/2 + uint64(uint32(sum)) + 1
	ctx := context.Background()
	mod, checks := counted(t, code)
	res, err := mod.ExportedFunction("run").Call(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if *checks < 3 {
		t.Errorf("%d checks during the loop, want at least 3", *checks)
	}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	plain, err := rt.Instantiate(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	unmetered, err := plain.ExportedFunction("run").Call(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if res[0] != want || unmetered[0] != want {
		t.Errorf("run(%d) = %d metered, %d unmetered; want %d", n, res[0], unmetered[0], want)
	}
}

// lastSection is the body of mod's last section.
func lastSection(mod []byte) []byte {
	r := &wreader{b: mod, off: len(wasmHeader)}
	var last []byte
	for !r.done() {
		r.byte()
		last = r.take(uint64(r.u32()))
	}
	return last
}

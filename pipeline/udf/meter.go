package udf

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// A function's time limit, without wazero's WithCloseOnContextDone.
//
// With that option wazero's compiler makes every loop header leave the
// machine code for Go to see whether the module was closed; a Go module
// runs a loop at each call of a function too, so count_char cost 4 µs a
// row of a 100-byte string, nine tenths of it in those exits. meterModule instead rewrites the module
// before it is compiled, as gas metering does: a new mutable global
// counts down at each function's entry, and at every 256th turn of a
// loop (a new local of each function counts the turns: registers, no
// memory); when it reaches zero (every meterInterval counts) the code
// calls a new import, meterCheck, which returns the count again, or,
// when the call's context is done (its time limit, or the run's end),
// stops the call as wazero's close would, with a sys.ExitError. A call
// that never ends turns a loop or enters functions endlessly, so it
// reaches the check: between two checks run at most meterInterval
// function entries and 2*256*meterInterval loop turns (256 a count, and
// up to 255 in each activation that ended before its turns made one),
// about a millisecond at a nanosecond a turn. The goroutine leaves the
// machine code for Go at each check, where Go's scheduler and collector
// can stop it: between two, a collection's stop of the world waits for
// it, so the interval is short. At a loop's header the call is in a
// branch taken once in meterInterval counts; the locals the loop carries
// are saved in globals around it (meter_save.go), so that the compiler
// keeps none of them in memory for its sake.
//
// The import is a function, so every function index of the module from
// it on moves up by one: calls, ref.func (in code, global initialisers
// and element segments), exports, the start function and the name
// section's maps. The new type, global and import go at the ends of
// their index spaces and move nothing else. Custom sections but the
// names are dropped (DWARF's code offsets no longer hold). An index at
// or past the module's own locals, globals or types is refused: the
// additions would make it valid, and a module could reach the counter.

const (
	meterModuleName = "etld_sandbox"
	meterFuncName   = "check"
	// meterInterval is how many counts (function entries, 256 loop
	// turns) run between two checks: a check costs a call into Go, tens
	// of nanoseconds, and the counts between two take tens of
	// microseconds at least (a count is a function's entry or 256 turns).
	meterInterval = 1 << 12
	// meterTurns is how many turns of a loop make a count (a power of
	// two): the count costs loads and a store of the global; a turn, an
	// add and a test of the local.
	meterTurns = 256
)

// meterCheck is the module's check: the count again, or the call stops
// when its context is done.
func meterCheck(ctx context.Context, _ api.Module, stack []uint64) {
	if err := ctx.Err(); err != nil {
		code := uint32(sys.ExitCodeContextCanceled)
		if errors.Is(err, context.DeadlineExceeded) {
			code = sys.ExitCodeDeadlineExceeded
		}
		panic(sys.NewExitError(code))
	}
	stack[0] = meterInterval
}

// meter holds what the rewriting of one module needs.
type meter struct {
	// importedFuncs is the index of the new import: indexes from it on
	// move up by one.
	importedFuncs uint32
	// global is the counter's index, types the module's own types (the
	// meter's is the next): an instruction's index at or past either is
	// refused, so that no module the rewrite makes valid was not valid
	// before it (a global.set of the counter would disable the limit).
	global uint32
	types  uint32
	// params is the parameters' value types of each type, funcTypes
	// the type of each function the module defines.
	params    [][]byte
	funcTypes []uint32
	// saves is, for each function the module defines, the locals its
	// loops' checks save around the call (meter_save.go), and cur the
	// function's being rewritten.
	saves [][]saved
	cur   []saved
	// scan, while planSaves reads a function, has note record its
	// instructions that liveness reads in events (br_table's depths in
	// targets).
	scan    bool
	events  []event
	targets []uint32
}

func (m *meter) fn(idx uint32) uint32 {
	if idx >= m.importedFuncs {
		return idx + 1
	}
	return idx
}

// count is the code of a count, with l a scratch local: l = g - 1;
// g = l; if l <= 0 { save; g = check(); restore }. Not l == 0: a check
// that stopped a call left g at 0, and the module may be called again.
// saves are the locals to carry over the call in globals (meter_save.go).
// (A count that leaves l alone and starts it again at 0 after the call
// measured slower: wazero then kept the turns' local in memory.)
func (m *meter) count(b []byte, l uint32, saves []saved) []byte {
	b = append(appendU32(append(b, 0x23), m.global), 0x41, 1, 0x6b, 0x22) // global.get g, i32.const 1, i32.sub, local.tee
	b = append(appendU32(b, l), 0x24)                                     // l, global.set
	b = append(appendU32(b, m.global), 0x20)                              // g, local.get
	b = append(appendU32(b, l), 0x41, 1, 0x48, 0x04, 0x40)                // l, i32.const 1, i32.lt_s, if
	for _, s := range saves {
		b = appendU32(append(appendU32(append(b, 0x20), s.local), 0x24), s.global) // local.get, global.set
	}
	b = append(appendU32(append(b, 0x10), m.importedFuncs), 0x24) // call check, global.set
	b = appendU32(b, m.global)                                    // g
	for _, s := range saves {
		b = appendU32(append(appendU32(append(b, 0x23), s.global), 0x21), s.local) // global.get, local.set
	}
	return append(b, 0x0b) // end
}

// turn is the code at a loop's header, with l the turns' local (its
// value after a count does not matter: the next count is at most
// meterTurns turns away all the same): l++; if l % meterTurns == 0 {
// count }.
func (m *meter) turn(b []byte, l uint32) []byte {
	b = append(appendU32(append(b, 0x20), l), 0x41, 1, 0x6a, 0x22) // local.get l, i32.const 1, i32.add, local.tee
	b = append(appendU32(b, l), 0x41)                              // l, i32.const
	b = append(appendS32(b, meterTurns-1), 0x71, 0x45, 0x04, 0x40) // mask, i32.and, i32.eqz, if
	return append(m.count(b, l, m.cur), 0x0b)                      // count, end
}

type wsection struct {
	id   byte
	body []byte
}

// The known sections' order in a module (the tag section, 13, between
// memory and global), for placing one the rewrite adds.
var sectionRank = map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}

var wasmHeader = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

// meterModule returns code with the countdown and its import, or an
// error when code is not a module it can read.
func meterModule(code []byte) ([]byte, error) {
	if !bytes.HasPrefix(code, wasmHeader) {
		return nil, errors.New("not a WebAssembly 1.0 module")
	}
	r := &wreader{b: code, off: len(wasmHeader)}
	var secs []wsection
	for !r.done() {
		id := r.byte()
		body := r.take(uint64(r.u32()))
		if r.err == nil {
			secs = append(secs, wsection{id, body})
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	m := &meter{}
	var globals uint32
	for _, s := range secs {
		var err error
		switch s.id {
		case 1:
			m.params, err = typeParams(s.body)
		case 2:
			m.importedFuncs, globals, err = countImports(s.body)
		case 3:
			m.funcTypes, err = funcTypes(s.body)
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, err)
		}
	}
	for _, s := range secs {
		if s.id == 6 {
			n, err := vecCount(s.body)
			if err != nil {
				return nil, fmt.Errorf("section 6: %w", err)
			}
			globals += n
		}
	}
	m.global = globals
	types := uint32(len(m.params))
	m.types = types
	var saveGlobals []byte
	var nSaves uint32
	for _, s := range secs {
		if s.id == 10 {
			var err error
			if saveGlobals, nSaves, err = m.planSaves(s.body); err != nil {
				return nil, fmt.Errorf("section 10: %w", err)
			}
			break
		}
	}
	addedN := map[byte]uint32{1: 1, 2: 1, 6: 1 + nSaves}
	added := map[byte][]byte{
		1: {0x60, 0x00, 0x01, 0x7f}, // () -> i32
		2: append(append(appendU32(nil, uint32(len(meterModuleName))), meterModuleName...),
			append(append(appendU32(nil, uint32(len(meterFuncName))), meterFuncName...), append([]byte{0x00}, appendU32(nil, types)...)...)...),
		6: append(append([]byte{0x7f, 0x01, 0x41}, append(appendS32(nil, meterInterval), 0x0b)...), saveGlobals...), // mut i32 = interval; the saves
	}
	out := append([]byte(nil), wasmHeader...)
	emit := func(id byte, body []byte) {
		out = append(appendU32(append(out, id), uint32(len(body))), body...)
	}
	// addMissing emits the added sections the module lacks that go
	// before a section of rank.
	addMissing := func(rank int) {
		for _, id := range []byte{1, 2, 6} {
			if add, ok := added[id]; ok && sectionRank[id] < rank {
				emit(id, appendVec(nil, addedN[id], nil, add...))
				delete(added, id)
				delete(addedN, id)
			}
		}
	}
	for _, s := range secs {
		if s.id != 0 {
			addMissing(sectionRank[s.id])
		}
		body, keep, err := m.section(s, added[s.id], addedN[s.id])
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, err)
		}
		delete(added, s.id)
		delete(addedN, s.id)
		if keep {
			emit(s.id, body)
		}
	}
	addMissing(1 << 30)
	return out, nil
}

// appendVec appends a vector of n items: items, then add.
func appendVec(out []byte, n uint32, items []byte, add ...byte) []byte {
	return append(append(appendU32(out, n), items...), add...)
}

// typeParams reads the parameters' value types of the module's
// function types.
func typeParams(body []byte) ([][]byte, error) {
	r := &wreader{b: body}
	n := r.count()
	params := make([][]byte, 0, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		if form := r.byte(); form != 0x60 {
			r.fail("type form 0x%02x: %v", form, errUnsupported)
		}
		p := r.count()
		start := r.off
		for j := uint32(0); j < p; j++ {
			r.valtype()
		}
		ps := r.b[start:r.off]
		for j, k := uint32(0), r.count(); j < k; j++ {
			r.valtype()
		}
		params = append(params, ps)
	}
	if r.err == nil && !r.done() {
		r.fail("bytes after the types")
	}
	return params, r.err
}

// funcTypes reads the function section: the type of each function.
func funcTypes(body []byte) ([]uint32, error) {
	r := &wreader{b: body}
	n := r.count()
	types := make([]uint32, 0, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		types = append(types, r.u32())
	}
	if r.err == nil && !r.done() {
		r.fail("bytes after the function types")
	}
	return types, r.err
}

func vecCount(body []byte) (uint32, error) {
	r := &wreader{b: body}
	n := r.count()
	return n, r.err
}

// countImports counts the functions and globals a module imports.
func countImports(body []byte) (funcs, globals uint32, _ error) {
	r := &wreader{b: body}
	n := r.count()
	for i := uint32(0); i < n && r.err == nil; i++ {
		r.name()
		r.name()
		switch kind := r.byte(); kind {
		case 0x00:
			r.u32()
			funcs++
		case 0x01: // table: a reference type, limits
			r.valtype()
			r.limits()
		case 0x02:
			r.limits()
		case 0x03:
			r.valtype()
			r.byte()
			globals++
		default:
			r.fail("import kind 0x%02x: %v", kind, errUnsupported)
		}
	}
	if r.err == nil && !r.done() {
		r.fail("bytes after the imports")
	}
	return funcs, globals, r.err
}

func (r *wreader) limits() {
	flags := r.byte()
	if flags > 7 {
		r.fail("limits 0x%02x", flags)
	}
	r.leb(10)
	if flags&1 != 0 {
		r.leb(10)
	}
}

// section rewrites one section; add is the addN items the meter adds to
// it (a module with a section twice, not valid, has them in the first
// only). keep is false for a section to drop.
func (m *meter) section(s wsection, add []byte, addN uint32) (body []byte, keep bool, err error) {
	r := &wreader{b: s.body}
	switch s.id {
	case 0:
		name := string(r.name())
		switch {
		case r.err != nil:
			return nil, false, r.err
		case name == "name":
			return m.names(s.body, r.off), true, nil
		}
		// The other custom sections are dropped: DWARF's code offsets no
		// longer hold, and the runtime reads no other (only the meter
		// would, and a malformed one wazero refuses at a module's end it
		// reads past when the meter's sections follow it).
		return nil, false, nil
	case 1, 2:
		n := r.count()
		return appendVec(nil, n+addN, r.b[r.off:], add...), true, r.err
	case 6:
		n := r.count()
		out := appendU32(nil, n+addN)
		for i := uint32(0); i < n && r.err == nil; i++ {
			start := r.off
			r.valtype()
			r.byte()
			out = m.expr(r, append(out, r.b[start:r.off]...), noTurns)
		}
		body = append(out, add...)
	case 7:
		n := r.count()
		body = appendU32(nil, n)
		for i := uint32(0); i < n && r.err == nil; i++ {
			start := r.off
			r.name()
			kind := r.byte()
			body = append(body, r.b[start:r.off]...)
			idx := r.u32()
			switch {
			case kind == 0x00:
				idx = m.fn(idx)
			case kind == 0x03 && idx >= m.global:
				r.fail("export of global %d of %d", idx, m.global)
			}
			body = appendU32(body, idx)
		}
	case 8:
		body = appendU32(nil, m.fn(r.u32()))
	case 9:
		body = m.elements(r)
	case 10:
		body, err = m.code(s.body)
		return body, true, err
	default:
		return s.body, true, nil
	}
	if r.err == nil && !r.done() {
		r.fail("bytes after the section's items")
	}
	return body, true, r.err
}

// elements rewrites the element segments (their eight forms).
func (m *meter) elements(r *wreader) []byte {
	n := r.count()
	out := appendU32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		start := r.off
		flags := r.u32()
		if flags > 7 {
			r.fail("element segment flags %d", flags)
			break
		}
		if flags&1 == 0 { // active
			if flags&2 != 0 {
				r.u32() // table
			}
			out = m.expr(r, append(out, r.b[start:r.off]...), noTurns)
			start = r.off
		}
		if flags&3 != 0 {
			r.byte() // elemkind or reference type
		}
		k := r.count()
		out = append(out, r.b[start:r.off]...)
		for j := uint32(0); j < k && r.err == nil; j++ {
			if flags&4 != 0 {
				out = m.expr(r, out, noTurns)
			} else {
				out = appendU32(out, m.fn(r.u32()))
			}
		}
	}
	return out
}

// names rewrites the name section from off (after its name): the
// function names, local names and label names are maps keyed by function
// index; the other subsections stay. A name section it cannot read is
// dropped: names only serve stack traces.
func (m *meter) names(body []byte, off int) []byte {
	r := &wreader{b: body, off: off}
	out := append([]byte(nil), body[:off]...)
	for !r.done() {
		id := r.byte()
		sub := r.take(uint64(r.u32()))
		if r.err != nil {
			return body[:off]
		}
		if id >= 1 && id <= 3 {
			sr := &wreader{b: sub}
			n := sr.count()
			nb := appendU32(nil, n)
			for i := uint32(0); i < n && sr.err == nil; i++ {
				nb = appendU32(nb, m.fn(sr.u32()))
				start := sr.off
				if id == 1 {
					sr.name()
				} else {
					k := sr.count()
					for j := uint32(0); j < k && sr.err == nil; j++ {
						sr.u32()
						sr.name()
					}
				}
				nb = append(nb, sr.b[start:sr.off]...)
			}
			if sr.err != nil || !sr.done() {
				return body[:off]
			}
			sub = nb
		}
		out = append(appendU32(append(out, id), uint32(len(sub))), sub...)
	}
	return out
}

package udf

import (
	"fmt"
	"sort"
)

// The locals a loop's check carries over its call in globals.
//
// wazero's compiler (wazevo) keeps a value that is live across a call in
// memory, and a value carried round a loop (a local the loop sets and
// reads again: a phi) that is kept in memory anywhere is stored at each
// of its definitions, that is at every turn. A check's call at a loop's
// header, though taken once in a million turns, made every local the
// loop carries live across it: each turn stored them all (and a Go
// module's dispatch read its block number back from memory), which cost
// count_char about as much as the counting. So the check's code saves
// each local the function reads into a global of the meter's before the
// call and sets it again from the global after: no local's value before
// the call is used after it, and only the rare call pays.
//
// The globals go after the counter, one per value type and local a
// function saves of it (the most any function saves), and are out of the
// module's reach as the counter is (an index at or past the module's own
// globals is refused). A function's entry needs no saves (nothing goes
// round a loop there), nor does a function without a loop; one with more
// than maxSaved locals read (or maxScanned locals in all) calls the check
// as before: correct, the turns only dearer.

const (
	maxSaved   = 64
	maxScanned = 1 << 12
)

// saved is a local a function's loops' checks save, and its global.
type saved struct{ local, global uint32 }

// saveTypes are the value types of locals, in the order of their
// globals.
var saveTypes = [...]byte{0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f}

// zeroInit is the initialiser of a global of type t: its zero.
func zeroInit(t byte) []byte {
	switch t {
	case 0x7f:
		return []byte{0x41, 0x00}
	case 0x7e:
		return []byte{0x42, 0x00}
	case 0x7d:
		return append([]byte{0x43}, make([]byte, 4)...)
	case 0x7c:
		return append([]byte{0x44}, make([]byte, 8)...)
	case 0x7b:
		return append([]byte{0xfd, 0x0c}, make([]byte, 16)...)
	}
	return []byte{0xd0, t} // ref.null
}

// localRun is a run of locals of one type, up to end (exclusive).
type localRun struct {
	end uint64
	typ byte
}

// funcLocals is a function's locals: its declarations' count and bytes,
// the number of locals with the parameters, and their runs when asked.
type funcLocals struct {
	decls                uint32
	declsStart, declsEnd int
	n                    uint64
	runs                 []localRun
}

// locals reads the local declarations of function i at fr (after its
// size); withRuns appends the parameters' and locals' runs to runs. A
// malformed declaration is left in fr.err.
func (m *meter) locals(i uint32, fr *wreader, withRuns bool, runs []localRun) (funcLocals, error) {
	t := m.funcTypes[i]
	if int(t) >= len(m.params) {
		return funcLocals{}, fmt.Errorf("function %d: type %d of %d", i, t, len(m.params))
	}
	fl := funcLocals{n: uint64(len(m.params[t]))}
	if withRuns {
		for j, p := range m.params[t] {
			runs = append(runs, localRun{uint64(j + 1), p})
		}
	}
	fl.decls = fr.count()
	fl.declsStart = fr.off
	for j := uint32(0); j < fl.decls && fr.err == nil; j++ {
		fl.n += uint64(fr.u32())
		start := fr.off
		fr.valtype()
		if withRuns && fr.err == nil {
			runs = append(runs, localRun{fl.n, fr.b[start]})
		}
	}
	fl.declsEnd = fr.off
	if fl.n >= 1<<31 {
		fr.fail("%d locals", fl.n)
	}
	fl.runs = runs
	return fl, nil
}

// planSaves reads the code section (body) once before it is rewritten:
// which locals each function with a loop reads, hence saves (m.saves).
// It returns the globals to add after the counter and their number.
func (m *meter) planSaves(body []byte) ([]byte, uint32, error) {
	r := &wreader{b: body}
	n := r.count()
	if int(n) != len(m.funcTypes) {
		return nil, 0, fmt.Errorf("%d bodies for %d functions", n, len(m.funcTypes))
	}
	type want struct {
		local uint32
		typ   int // index in saveTypes
		slot  uint32
	}
	plans := make([][]want, n)
	var slots [len(saveTypes)]uint32
	var runs []localRun
	var scratch []byte
	m.scan, m.cur = true, nil
	defer func() { m.scan, m.events, m.targets = false, nil, nil }()
	for i := uint32(0); i < n && r.err == nil; i++ {
		fr := &wreader{b: r.take(uint64(r.u32()))}
		fl, err := m.locals(i, fr, true, runs[:0])
		if err != nil {
			return nil, 0, err
		}
		runs = fl.runs
		if fl.n > maxScanned || fr.err != nil {
			continue // the rewrite finds the error, if any
		}
		m.events, m.targets = m.events[:0], m.targets[:0]
		scratch = m.expr(fr, scratch[:0], int64(fl.n))
		if fr.err != nil {
			continue
		}
		save, ok := m.saveSet(fl.n)
		if !ok || save.count() > maxSaved {
			continue
		}
		var w []want
		var used [len(saveTypes)]uint32
		for l := uint32(0); uint64(l) < fl.n; l++ {
			if !save.has(l) {
				continue
			}
			k := sort.Search(len(runs), func(k int) bool { return runs[k].end > uint64(l) })
			ti := typeIndex(runs[k].typ)
			w = append(w, want{uint32(l), ti, used[ti]})
			used[ti]++
		}
		plans[i] = w
		for ti, u := range used {
			slots[ti] = max(slots[ti], u)
		}
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	var globals []byte
	var base [len(saveTypes)]uint32
	g := m.global + 1
	for ti, t := range saveTypes {
		base[ti] = g
		for range slots[ti] {
			globals = append(append(append(globals, t, 0x01), zeroInit(t)...), 0x0b)
		}
		g += slots[ti]
	}
	m.saves = make([][]saved, n)
	for i, w := range plans {
		for _, x := range w {
			m.saves[i] = append(m.saves[i], saved{x.local, base[x.typ] + x.slot})
		}
	}
	return globals, g - m.global - 1, nil
}

// typeIndex is t's index in saveTypes (valtype reads no other).
func typeIndex(t byte) int {
	for i, s := range saveTypes {
		if s == t {
			return i
		}
	}
	panic(fmt.Sprintf("value type 0x%02x", t))
}

package udf

import (
	"errors"
	"fmt"
)

// The instructions of a module's code, read well enough to copy them:
// each opcode's immediates (the MVP's, bulk memory and reference types,
// SIMD, threads, tail calls) are skipped, and the three that name a
// function (call, return_call, ref.func) are written again with the
// index shifted past the import meterModule adds. Anything else (the
// proposals wazero does not run: exceptions, typed function references,
// GC) is an error, and the module is then loaded unmetered.

// wreader reads a module's bytes; its first error sticks, and every read
// after it returns zero, so that arbitrary bytes never make it panic.
type wreader struct {
	b   []byte
	off int
	err error
}

func (r *wreader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("offset %d: %s", r.off, fmt.Sprintf(format, args...))
	}
	r.off = len(r.b)
}

func (r *wreader) done() bool { return r.err != nil || r.off >= len(r.b) }

func (r *wreader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.fail("unexpected end")
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *wreader) take(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)-r.off) {
		r.fail("unexpected end (%d bytes wanted)", n)
		return nil
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

// leb reads an LEB128 number of at most maxBytes bytes and returns its
// low 64 bits (unsigned); a signed one is only skipped.
func (r *wreader) leb(maxBytes int) uint64 {
	var v uint64
	for i := 0; i < maxBytes; i++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if i < 10 {
			v |= uint64(c&0x7f) << (7 * i)
		}
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail("LEB128 longer than %d bytes", maxBytes)
	return 0
}

func (r *wreader) u32() uint32 {
	v := r.leb(5)
	if v > 0xFFFFFFFF {
		r.fail("u32 out of range")
		return 0
	}
	return uint32(v)
}

// count reads a vector's length, refusing one that could not fit in the
// bytes left (each item at least a byte), so that no count makes the
// reader loop or allocate for long.
func (r *wreader) count() uint32 {
	n := r.u32()
	if int64(n) > int64(len(r.b)-r.off) {
		r.fail("a vector of %d items in %d bytes", n, len(r.b)-r.off)
		return 0
	}
	return n
}

func (r *wreader) name() []byte { return r.take(uint64(r.u32())) }

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// memarg skips a memory access's alignment, memory (multi-memory: bit 6
// of the alignment) and offset (memory64: up to 64 bits).
func (r *wreader) memarg() {
	align := r.u32()
	if align&0x40 != 0 {
		r.u32()
	}
	r.leb(10)
}

var errUnsupported = errors.New("an instruction the meter does not know")

// noTurns is expr's turns for instructions without loops to count (a
// constant expression).
const noTurns = -1

// expr copies the instructions at r up to the end that closes them to
// out, shifting function indexes; with turns (a local's index, not
// noTurns), the count of turns goes after each loop's block type. It
// returns out.
func (m *meter) expr(r *wreader, out []byte, turns int64) []byte {
	flushed := r.off
	depth := 0
	// edit writes what was read up to the instruction at start, then the
	// instruction's new bytes.
	edit := func(start int, b ...byte) {
		out = append(out, r.b[flushed:start]...)
		out = append(out, b...)
		flushed = r.off
	}
	for !r.done() {
		start := r.off
		op := r.byte()
		switch {
		case op == 0x02 || op == 0x04: // block, if
			m.blockType(r)
			depth++
		case op == 0x03: // loop
			m.blockType(r)
			depth++
			if turns != noTurns {
				edit(r.off)
				out = m.turn(out, uint32(turns))
			}
		case op == 0x0b: // end
			if depth == 0 {
				edit(r.off)
				return out
			}
			depth--
		case op <= 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b || op == 0xd1 || (op >= 0x45 && op <= 0xc4):
			// unreachable, nop, else, return, drop, select, ref.is_null,
			// the numeric instructions: no immediate.
		case op == 0x0c || op == 0x0d: // br, br_if
			r.u32()
		case op == 0x0e: // br_table
			n := r.count()
			for i := uint32(0); i <= n && r.err == nil; i++ {
				r.u32()
			}
		case op == 0x10 || op == 0x12 || op == 0xd2: // call, return_call, ref.func
			idx := r.u32()
			if r.err == nil {
				edit(start, appendU32([]byte{op}, m.fn(idx))...)
			}
		case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
			if t := r.u32(); t >= m.types {
				r.fail("type %d of %d", t, m.types)
			}
			r.u32()
		case op == 0x1c: // select t*
			n := r.count()
			for i := uint32(0); i < n && r.err == nil; i++ {
				r.valtype()
			}
		case op >= 0x20 && op <= 0x22: // local.get, local.set, local.tee
			// The turns' local is the function's last: an index at it or
			// past it is the module's error, not a way to reach the count.
			if l := r.u32(); turns == noTurns || int64(l) >= turns {
				r.fail("local %d out of range", l)
			}
		case op == 0x23 || op == 0x24: // global.get, global.set
			if g := r.u32(); g >= m.global {
				r.fail("global %d out of range", g)
			}
		case op == 0x25 || op == 0x26: // table.get, table.set
			r.u32()
		case op >= 0x28 && op <= 0x3e: // loads, stores
			r.memarg()
		case op == 0x3f || op == 0x40: // memory.size, memory.grow
			r.u32()
		case op == 0x41: // i32.const
			r.leb(5)
		case op == 0x42: // i64.const
			r.leb(10)
		case op == 0x43:
			r.take(4)
		case op == 0x44:
			r.take(8)
		case op == 0xd0: // ref.null
			r.valtype()
		case op == 0xfc:
			r.prefixFC()
		case op == 0xfd:
			r.prefixFD()
		case op == 0xfe:
			r.prefixFE()
		default:
			r.off = start
			r.fail("opcode 0x%02x: %v", op, errUnsupported)
		}
		if m.scan && r.err == nil {
			m.note(op, r.b[start+1:r.off])
		}
	}
	r.fail("instructions without their end")
	return out
}

// blockType reads a block's type: 0x40, a value type (a negative s33),
// or a type index, which must name one of the module's own types (not
// the one the meter adds).
func (m *meter) blockType(r *wreader) {
	start := r.off
	v := r.leb(5)
	if r.err != nil {
		return
	}
	// An s33 in n bytes is negative when the last byte's bit 6 is set.
	if last := r.b[r.off-1]; last&0x40 != 0 {
		if r.off-start != 1 {
			r.fail("block type %x: %v", r.b[start:r.off], errUnsupported)
		}
		return
	}
	if v >= uint64(m.types) {
		r.fail("block type %d of %d", v, m.types)
	}
}

// valtype skips a value type (one byte in the types wazero runs).
func (r *wreader) valtype() {
	switch t := r.byte(); t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
	default:
		r.fail("value type 0x%02x: %v", t, errUnsupported)
	}
}

// prefixFC skips the saturating truncations, bulk memory and table
// instructions.
func (r *wreader) prefixFC() {
	switch sub := r.u32(); {
	case sub <= 7: // trunc_sat
	case sub == 8 || sub == 10 || sub == 12 || sub == 14: // memory.init, memory.copy, table.init, table.copy
		r.u32()
		r.u32()
	case sub <= 17: // data.drop, memory.fill, elem.drop, table.grow/size/fill
		r.u32()
	default:
		r.fail("0xfc %d: %v", sub, errUnsupported)
	}
}

// prefixFD skips a SIMD instruction (relaxed SIMD's have no immediate).
func (r *wreader) prefixFD() {
	switch sub := r.u32(); {
	case sub <= 11 || sub == 92 || sub == 93: // loads, store, load_zero
		r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.take(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		r.take(1)
	case sub >= 84 && sub <= 91: // load_lane, store_lane
		r.memarg()
		r.take(1)
	case sub <= 0x113:
	default:
		r.fail("0xfd %d: %v", sub, errUnsupported)
	}
}

// prefixFE skips an atomic instruction (threads).
func (r *wreader) prefixFE() {
	switch sub := r.u32(); {
	case sub == 3: // atomic.fence
		r.take(1)
	case sub <= 2 || (sub >= 0x10 && sub <= 0x4e):
		r.memarg()
	default:
		r.fail("0xfe %d: %v", sub, errUnsupported)
	}
}

// code rewrites the code section: each body gets a local for its
// loops' turns, a count at its entry and the turns' count at each loop
// header, and its size again.
func (m *meter) code(body []byte) ([]byte, error) {
	r := &wreader{b: body}
	n := r.count()
	if int(n) != len(m.funcTypes) {
		return nil, fmt.Errorf("%d bodies for %d functions", n, len(m.funcTypes))
	}
	out := appendU32(make([]byte, 0, len(body)+len(body)/4), n)
	var fn []byte
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		fr := &wreader{b: r.take(uint64(size))}
		fl, err := m.locals(i, fr, false, nil)
		if err != nil {
			return nil, err
		}
		m.cur = nil
		if int(i) < len(m.saves) {
			m.cur = m.saves[i]
		}
		// The locals again, with one i32 more: the turns' local, also the
		// counts' scratch. The entry's count saves nothing: no value is
		// carried round a loop there.
		fn = appendU32(fn[:0], fl.decls+1)
		fn = append(fn, fr.b[fl.declsStart:fl.declsEnd]...)
		fn = m.count(append(fn, 1, 0x7f), uint32(fl.n), nil)
		fn = m.expr(fr, fn, int64(fl.n))
		if fr.err == nil && !fr.done() {
			fr.fail("bytes after the function's end")
		}
		if fr.err != nil {
			return nil, fmt.Errorf("function %d: %w", i, fr.err)
		}
		out = append(appendU32(out, uint32(len(fn))), fn...)
	}
	if r.err == nil && !r.done() {
		r.fail("bytes after the last function")
	}
	return out, r.err
}

package udf

import "math/bits"

// Which locals a loop's check saves (meter_save.go): those live at a
// loop's header, so live across the check's call there, but live across
// no other call of the function. A local live across another call is
// kept in memory by the compiler anyway (its every definition stored
// already); saving it would only add a definition, at every turn, where
// the restored and the unchanged values meet. The liveness is the
// textbook backward one over the function's structured control (each
// loop's header again until it no longer grows); it decides only what
// the check saves, never what the code computes, so an imprecise answer
// costs time, not correctness.

// event kinds: the instructions liveness reads.
const (
	evBlock = iota
	evLoop
	evIf
	evElse
	evEnd
	evBr
	evBrIf
	evBrTable // arg: the index in targets of the count, then the depths
	evReturn  // return, unreachable, return_call*: nothing is live
	evCall    // any instruction wazero compiles to a call
	evGet
	evSet // local.set, local.tee
)

type event struct {
	kind uint8
	arg  uint32
}

// note records instruction op with immediates imm (already read well
// formed) as an event, if liveness reads it.
func (m *meter) note(op byte, imm []byte) {
	u32 := func() uint32 {
		r := &wreader{b: imm}
		return r.u32()
	}
	switch {
	case op == 0x02:
		m.events = append(m.events, event{kind: evBlock})
	case op == 0x03:
		m.events = append(m.events, event{kind: evLoop})
	case op == 0x04:
		m.events = append(m.events, event{kind: evIf})
	case op == 0x05:
		m.events = append(m.events, event{kind: evElse})
	case op == 0x0b:
		m.events = append(m.events, event{kind: evEnd})
	case op == 0x0c || op == 0x0d:
		k := uint8(evBr)
		if op == 0x0d {
			k = evBrIf
		}
		m.events = append(m.events, event{k, u32()})
	case op == 0x0e:
		r := &wreader{b: imm}
		n := r.count()
		at := uint32(len(m.targets))
		m.targets = append(m.targets, n)
		for i := uint32(0); i <= n && r.err == nil; i++ {
			m.targets = append(m.targets, r.u32())
		}
		m.events = append(m.events, event{evBrTable, at})
	case op == 0x00 || op == 0x0f || op == 0x12 || op == 0x13:
		m.events = append(m.events, event{kind: evReturn})
	case op == 0x10 || op == 0x11 || op == 0x40 || op == 0xfc || op == 0xfe:
		// Calls, memory.grow, bulk memory and tables, atomics: some are
		// calls into Go as wazero compiles them; taking all for calls
		// only saves fewer locals.
		m.events = append(m.events, event{kind: evCall})
	case op == 0x20:
		m.events = append(m.events, event{evGet, u32()})
	case op == 0x21 || op == 0x22:
		m.events = append(m.events, event{evSet, u32()})
	}
}

// lset is a set of locals.
type lset []uint64

func (s lset) has(i uint32) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s lset) add(i uint32)      { s[i/64] |= 1 << (i % 64) }
func (s lset) del(i uint32)      { s[i/64] &^= 1 << (i % 64) }
func (s lset) or(t lset) {
	for i := range s {
		s[i] |= t[i]
	}
}

// saveSet is the locals of m.events (a function of n locals) to save:
// live at a loop's header and across no call. ok is false when the
// events do not nest (never for a module the reader took).
func (m *meter) saveSet(n uint64) (save lset, ok bool) {
	ev := m.events
	words := int(n+63) / 64
	newSet := func() lset { return make(lset, words) }
	// open[k] is the index of the block, loop or if that end k closes.
	open := make([]int32, len(ev))
	var stack []int32
	for k, e := range ev {
		switch e.kind {
		case evBlock, evLoop, evIf:
			stack = append(stack, int32(k))
		case evEnd:
			if len(stack) == 0 {
				return nil, false
			}
			open[k] = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		return nil, false
	}
	header := map[int32]lset{}
	for k, e := range ev {
		if e.kind == evLoop {
			header[int32(k)] = newSet()
		}
	}
	type label struct {
		live, elseLive lset
		hasElse        bool
	}
	across := newSet()
	for pass, changed := 0, true; changed; pass++ {
		if pass == 64 {
			return nil, false
		}
		changed = false
		clear(across)
		var labels []label
		live := newSet()
		target := func(d uint32) lset {
			if int(d) >= len(labels) {
				return nil // the function's end: nothing live
			}
			return labels[len(labels)-1-int(d)].live
		}
		for k := len(ev) - 1; k >= 0; k-- {
			e := ev[k]
			switch e.kind {
			case evEnd:
				l := label{live: append(lset(nil), live...)}
				if ev[open[k]].kind == evLoop {
					l.live = header[open[k]]
				}
				labels = append(labels, l)
			case evElse:
				if len(labels) == 0 {
					return nil, false
				}
				l := &labels[len(labels)-1]
				l.elseLive, l.hasElse = append(lset(nil), live...), true
				copy(live, l.live)
			case evIf, evBlock, evLoop:
				if len(labels) == 0 {
					return nil, false
				}
				l := labels[len(labels)-1]
				labels = labels[:len(labels)-1]
				switch {
				case e.kind == evIf && l.hasElse:
					live.or(l.elseLive)
				case e.kind == evIf:
					live.or(l.live)
				case e.kind == evLoop:
					h := header[int32(k)]
					for i := range h {
						if live[i]&^h[i] != 0 {
							h[i] |= live[i]
							changed = true
						}
					}
				}
			case evBr:
				clear(live)
				live.or0(target(e.arg))
			case evBrIf:
				live.or0(target(e.arg))
			case evBrTable:
				clear(live)
				cnt := m.targets[e.arg]
				for i := uint32(0); i <= cnt; i++ {
					live.or0(target(m.targets[e.arg+1+i]))
				}
			case evReturn:
				clear(live)
			case evCall:
				across.or(live)
			case evGet:
				if uint64(e.arg) < n {
					live.add(e.arg)
				}
			case evSet:
				if uint64(e.arg) < n {
					live.del(e.arg)
				}
			}
		}
	}
	save = newSet()
	for _, h := range header {
		save.or(h)
	}
	for i := range save {
		save[i] &^= across[i]
	}
	return save, true
}

// or0 is or, with nil the empty set.
func (s lset) or0(t lset) {
	if t != nil {
		s.or(t)
	}
}

// count is the number of locals in s.
func (s lset) count() int {
	c := 0
	for _, w := range s {
		c += bits.OnesCount64(w)
	}
	return c
}

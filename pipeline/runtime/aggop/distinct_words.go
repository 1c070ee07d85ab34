package aggop

import "math/bits"

// wordSet is one group's distinct set of int64 words (the fixed-width
// types, wordType) for k members: an open-addressing table with linear
// probing whose entries hold their members' state inline, so that a row
// costs one probe into one cache line. A Go map of the same takes a read
// and then a write of the new bit, each hashing and probing again, and
// its large tables missed the cache on both (Nexmark q16).
//
// An entry is stride words at e[slot*stride:]: the key; the members that
// have it, a bit each (over inserts only, those that saw it; with
// retractions, those whose count is not 0); then, with retractions, a
// count per member. A slot whose bits word is 0 is empty, so that no key
// is kept aside as the empty marker.
//
// Over inserts only, while every key fits in 32 bits (ids, counts, days:
// q16's bidders and auctions) and there are at most 32 members, an entry
// is one word (stride 1, narrow): the key's low 32 bits and the bits
// above them, so that a cache line holds twice the entries: on tables
// larger than the cache the probe's first load is the miss that costs.
// The first key past 32 bits turns the set into one of 2 words an entry
// (widen). An entry whose counts all come back
// to 0 is deleted by shifting the entries after it back into its place
// (backward-shift deletion): no tombstones, so lookups do not slow down
// as values come and go.
type wordSet struct {
	e      []int64
	stride int
	n      int  // entries
	shift  uint // 64 - log2(slots): a hash's top bits are its home slot
}

// wordSetSlots is a new set's slots; a set grows by doubling when more
// than 3/4 of them are taken.
const wordSetSlots = 8

func newWordSet(insertOnly bool, k int) *wordSet {
	t := &wordSet{stride: 2}
	switch {
	case !insertOnly:
		t.stride = 2 + k
	case k <= 32:
		t.stride = 1
	}
	t.alloc(wordSetSlots)
	return t
}

func (t *wordSet) alloc(slots int) {
	t.e = make([]int64, slots*t.stride)
	t.shift = uint(64 - bits.TrailingZeros(uint(slots)))
}

// home is w's home slot: the top bits of a multiplicative hash, after
// folding the high half in so that words differing only there (DOUBLE's
// exponent) still spread.
func (t *wordSet) home(w int64) int {
	h := uint64(w)
	h ^= h >> 32
	return int((h * 0x9E3779B97F4A7C15) >> t.shift)
}

// narrowFits reports whether w can be a key of a narrow set.
func narrowFits(w int64) bool { return w == int64(int32(w)) }

// key and bits are the key and the bits word of the entry at word o.
func (t *wordSet) key(o int) int64 {
	if t.stride == 1 {
		return int64(int32(t.e[o]))
	}
	return t.e[o]
}

func (t *wordSet) bits(o int) uint64 {
	if t.stride == 1 {
		return uint64(t.e[o]) >> 32
	}
	return uint64(t.e[o+1])
}

// slotNarrow is slot in a narrow set, of a w that fits (narrowFits).
func (t *wordSet) slotNarrow(w int64) int {
	mask := len(t.e) - 1
	for i := t.home(w); ; i = (i + 1) & mask {
		if x := t.e[i]; uint64(x)>>32 == 0 || int32(x) == int32(w) {
			return i
		}
	}
}

// widen turns a narrow set into one of 2 words an entry, of as many
// slots.
func (t *wordSet) widen() {
	old := t.e
	t.stride = 2
	t.alloc(len(old))
	mask := len(old) - 1
	for _, x := range old {
		if uint64(x)>>32 == 0 {
			continue
		}
		w := int64(int32(x))
		i := t.home(w)
		for t.e[2*i+1] != 0 {
			i = (i + 1) & mask
		}
		t.e[2*i], t.e[2*i+1] = w, int64(uint64(x)>>32)
	}
}

// slot is the slot of w's entry, or the empty slot where it would go.
func (t *wordSet) slot(w int64) int {
	if t.stride == 1 {
		return t.slotNarrow(w)
	}
	mask := len(t.e)/t.stride - 1
	for i := t.home(w); ; i = (i + 1) & mask {
		o := i * t.stride
		if t.e[o+1] == 0 || t.e[o] == w {
			return i
		}
	}
}

// grow doubles the slots and places every entry again.
func (t *wordSet) grow() {
	old := t.e
	t.alloc(2 * len(old) / t.stride)
	mask := len(t.e)/t.stride - 1
	if t.stride == 1 {
		for _, x := range old {
			if uint64(x)>>32 == 0 {
				continue
			}
			i := t.home(int64(int32(x)))
			for uint64(t.e[i])>>32 != 0 {
				i = (i + 1) & mask
			}
			t.e[i] = x
		}
		return
	}
	for o := 0; o < len(old); o += t.stride {
		if old[o+1] == 0 {
			continue
		}
		i := t.home(old[o])
		for t.e[i*t.stride+1] != 0 {
			i = (i + 1) & mask
		}
		copy(t.e[i*t.stride:(i+1)*t.stride], old[o:o+t.stride])
	}
}

// orNarrow sets bits b in the entry of w in a narrow set, making it if
// absent, and returns the bits it had.
func (t *wordSet) orNarrow(w int64, b uint64) (old uint64) {
	i := t.slotNarrow(w)
	if old = uint64(t.e[i]) >> 32; old == 0 {
		if 4*(t.n+1) > 3*len(t.e) {
			t.grow()
			i = t.slotNarrow(w)
		}
		t.n++
	}
	t.e[i] = int64(uint64(uint32(w)) | (old|b)<<32)
	return old
}

// entry is the entry of w, made (its bits 0, the caller sets them) if it
// has none; not in a narrow set.
func (t *wordSet) entry(w int64) []int64 {
	i := t.slot(w)
	if t.e[i*t.stride+1] == 0 {
		if 4*(t.n+1) > 3*(len(t.e)/t.stride) {
			t.grow()
			i = t.slot(w)
		}
		t.e[i*t.stride] = w
		t.n++
	}
	return t.e[i*t.stride : (i+1)*t.stride]
}

// remove deletes the entry at slot i, moving each entry after it in its
// run back into the hole unless that would put it before its home slot.
func (t *wordSet) remove(i int) {
	s, mask := t.stride, len(t.e)/t.stride-1
	for j := (i + 1) & mask; t.e[j*s+1] != 0; j = (j + 1) & mask {
		// The entry at j may fill the hole at i when i lies cyclically
		// between its home and j.
		if h := t.home(t.e[j*s]); (j-h)&mask >= (j-i)&mask {
			copy(t.e[i*s:(i+1)*s], t.e[j*s:(j+1)*s])
			i = j
		}
	}
	clear(t.e[i*s : (i+1)*s])
	t.n--
}

// step counts w by d for the members of mask and returns the members for
// which w became present or absent (changed), and those for which it is
// present now (of mask). Over inserts only, d > 0.
func (t *wordSet) step(w int64, mask uint64, d int64, k int) (changed, now uint64) {
	if t.stride == 1 {
		if narrowFits(w) {
			old := t.orNarrow(w, mask)
			return mask &^ old, old | mask
		}
		t.widen()
	}
	i := t.slot(w)
	o := i * t.stride
	old := uint64(t.e[o+1])
	if t.stride == 2 {
		if now = old | mask; now != old {
			if old == 0 {
				e := t.entry(w)
				e[1] = int64(now)
			} else {
				t.e[o+1] = int64(now)
			}
		}
		return now &^ old, now
	}
	var e []int64
	if old == 0 {
		e = t.entry(w)
		i = t.slot(w) // entry may have grown the table
	} else {
		e = t.e[o : o+t.stride]
	}
	has, cs := old, e[2:2+k]
	for m := mask; m != 0; m &= m - 1 {
		j := bits.TrailingZeros64(m)
		c := cs[j] + d
		if (cs[j] > 0) != (c > 0) {
			changed |= 1 << j
		}
		if c > 0 {
			now |= 1 << j
		}
		if c != 0 {
			has |= 1 << j
		} else {
			has &^= 1 << j
		}
		cs[j] = c
	}
	e[1] = int64(has)
	if has == 0 {
		// e[1] == 0 leaves slot i looking empty; remove shifts the rest
		// of its run back and counts the entry gone.
		t.remove(i)
	}
	return changed, now
}

// set sets member j's count of w to c: restore, into a set of no
// retractions yet (over inserts only: present when c > 0).
func (t *wordSet) set(w int64, j int, c int64) {
	if c == 0 || t.stride <= 2 && c < 0 {
		return
	}
	if t.stride == 1 {
		if narrowFits(w) && j < 32 {
			t.orNarrow(w, 1<<j)
			return
		}
		t.widen()
	}
	e := t.entry(w)
	e[1] |= 1 << j
	if t.stride > 2 {
		e[2+j] = c
	}
}

// each calls f with every word and, for each member, its count (1 for a
// bit) in cs, which f must not keep.
func (t *wordSet) each(k int, f func(w int64, cs []int64)) {
	var cs []int64
	if t.stride <= 2 {
		cs = make([]int64, k)
	}
	for o := 0; o < len(t.e); o += t.stride {
		b := t.bits(o)
		if b == 0 {
			continue
		}
		if t.stride <= 2 {
			for j := range cs {
				cs[j] = int64(b >> j & 1)
			}
			f(t.key(o), cs)
			continue
		}
		f(t.e[o], t.e[o+2:o+2+k])
	}
}

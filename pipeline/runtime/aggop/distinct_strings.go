package aggop

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"

	"github.com/etld/etld/pipeline/row"
)

// strSet is one group's distinct set of STRING or BYTES values for k
// members, laid out as wordSet is: an open-addressing table with linear
// probing whose entries hold their members' state inline, and whose
// words hold no pointer. A value's bytes sit in the set's own byte
// buffer, the entry keeping its hash and where its bytes are; a lookup
// compares the hash before the bytes. A Go map of Values instead (as
// before) cost each new value a string allocation for its detached
// copy, an entry the GC scanned at every cycle, and a hash of the
// 32-byte Value on every row: COUNT(DISTINCT name) over 10M rows of 10M
// distinct (group, name) pairs spent most of its time in the allocator
// and the GC.
//
// An entry is stride words at e[slot*stride:]: the value's hash; its
// ref, where its bytes are in data (offset << 32 | length) or, for a
// value of up to 7 bytes, the bytes themselves (packStr); the members that have
// it, a bit each (over inserts only, those that saw it; with
// retractions, those whose count is not 0); then, with retractions, a
// count per member. A slot whose bits word is 0 is empty. A deleted
// entry's bytes stay in data until they are more than half of it, when
// data is rewritten with the live values only.
//
// The sets of a store sit in one array (Store.strs), not behind a
// pointer each: a row's lookup then misses the cache on its table
// alone, not first on a set's header somewhere on the heap. The zero
// strSet is a set not made yet; a header is 64 bytes, a cache line.
type strSet struct {
	e      []uint64
	data   []byte
	dead   uint32 // bytes of data no entry points to
	n      uint32 // entries
	stride int32
	shift  uint32 // 64 - log2(slots)
}

// strSetSeed hashes the values of every set; hashes are never written
// to a snapshot, so a seed of the process is enough.
var (
	strSetSeed = maphash.MakeSeed()
	strWordKey = maphash.Comparable(strSetSeed, uint64(0x9E3779B97F4A7C15)) | 1
)

// strHash is s's hash: for a short value (packStr) a mix of its packed
// word with the seed, a few cycles where maphash's call costs more than
// the rest of a lookup; the longer ones through maphash.
func strHash(s string) uint64 {
	if len(s) <= inlineMax {
		return mixWord(packStr(s) ^ strWordKey)
	}
	return maphash.String(strSetSeed, s)
}

// mixWord is a 64-bit finalizer (splitmix64's): every bit of x moves
// every bit of the result, the top ones that home reads included.
func mixWord(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	return x ^ x>>31
}

// A value of at most inlineMax bytes sits in its entry's ref word
// (packStr): inlineBit set, its length in bits 56-58, its bytes in bits
// 0-55. A lookup of it then compares two words and never reads data,
// and its insert appends nothing there: short values (codes, names,
// flags), the common DISTINCT argument, cost no cache miss on the
// buffer. A longer value's ref (offset << 32 | length) has bit 63 clear:
// the buffer's offsets stay below 2 GiB.
const (
	inlineMax = 7
	inlineBit = 1 << 63
)

// packStr is the ref word of s, len(s) <= inlineMax.
func packStr(s string) uint64 {
	var w uint64
	for i := len(s) - 1; i >= 0; i-- {
		w = w<<8 | uint64(s[i])
	}
	return inlineBit | uint64(len(s))<<56 | w
}

// init makes the set: a bit per member over inserts only, else a count.
func (t *strSet) init(insertOnly bool, k int) {
	t.stride = 3
	if !insertOnly {
		t.stride = int32(3 + k)
	}
	t.alloc(wordSetSlots)
}

func (t *strSet) alloc(slots int) {
	st := int(t.stride)
	t.e = make([]uint64, slots*int(st))
	t.shift = uint32(64 - bits.TrailingZeros(uint(slots)))
}

func (t *strSet) home(h uint64) int { return int((h * 0x9E3779B97F4A7C15) >> t.shift) }

// bytesAt is the value of the entry at word offset o: in data, or for
// an inline value in buf.
func (t *strSet) bytesAt(o int, buf *[8]byte) []byte {
	ref := t.e[o+1]
	if ref&inlineBit != 0 {
		binary.LittleEndian.PutUint64(buf[:], ref)
		return buf[:ref>>56&7]
	}
	off := int(ref >> 32)
	return t.data[off : off+int(uint32(ref))]
}

// slot is the slot of s's entry (hash h), or the empty slot where it
// would go.
func (t *strSet) slot(s string, h uint64) int {
	st := int(t.stride)
	mask := len(t.e)/st - 1
	if len(s) <= inlineMax {
		p := packStr(s)
		for i := t.home(h); ; i = (i + 1) & mask {
			o := i * st
			if t.e[o+2] == 0 || t.e[o] == h && t.e[o+1] == p {
				return i
			}
		}
	}
	for i := t.home(h); ; i = (i + 1) & mask {
		o := i * st
		if t.e[o+2] == 0 {
			return i
		}
		if ref := t.e[o+1]; t.e[o] == h && ref&inlineBit == 0 && int(uint32(ref)) == len(s) {
			off := int(ref >> 32)
			if string(t.data[off:off+len(s)]) == s {
				return i
			}
		}
	}
}

// grow doubles the slots and places every entry again.
func (t *strSet) grow() {
	st := int(t.stride)
	old := t.e
	t.alloc(2 * len(old) / st)
	mask := len(t.e)/st - 1
	for o := 0; o < len(old); o += st {
		if old[o+2] == 0 {
			continue
		}
		i := t.home(old[o])
		for t.e[i*st+2] != 0 {
			i = (i + 1) & mask
		}
		copy(t.e[i*st:(i+1)*st], old[o:o+st])
	}
}

// entry is the slot of s's entry (hash h), made (its bits 0, the
// caller sets them) if it has none.
func (t *strSet) entry(s string, h uint64) int {
	st := int(t.stride)
	i := t.slot(s, h)
	if t.e[i*st+2] != 0 {
		return i
	}
	return t.insert(i, s, h)
}

// insert makes s's entry (hash h) at its empty slot i, or at another one
// when the table grows, and returns the slot.
func (t *strSet) insert(i int, s string, h uint64) int {
	st := int(t.stride)
	o := i * st
	if 4*(int(t.n)+1) > 3*(len(t.e)/st) {
		t.grow()
		i = t.slot(s, h)
		o = i * st
	}
	if t.dead > 64 && 2*int(t.dead) > len(t.data) {
		t.compact()
	}
	t.e[o] = h
	t.n++
	if len(s) <= inlineMax {
		t.e[o+1] = packStr(s)
		return i
	}
	// 31 bits of offset: a group's live long distinct values up to 2 GiB.
	t.e[o+1] = uint64(len(t.data))<<32 | uint64(len(s))
	t.data = append(t.data, s...)
	return i
}

// compact rewrites data with the bytes of the live entries only.
func (t *strSet) compact() {
	st := int(t.stride)
	data := make([]byte, 0, len(t.data)-int(t.dead)+len(t.data)/4)
	for o := 0; o < len(t.e); o += st {
		ref := t.e[o+1]
		if t.e[o+2] == 0 || ref&inlineBit != 0 {
			continue
		}
		off := int(ref >> 32)
		t.e[o+1] = uint64(len(data))<<32 | uint64(uint32(ref))
		data = append(data, t.data[off:off+int(uint32(ref))]...)
	}
	t.data, t.dead = data, 0
}

// remove deletes the entry at slot i (backward-shift deletion, as
// wordSet.remove).
func (t *strSet) remove(i int) {
	st := int(t.stride)
	s, mask := st, len(t.e)/st-1
	if ref := t.e[i*s+1]; ref&inlineBit == 0 {
		t.dead += uint32(ref)
	}
	for j := (i + 1) & mask; t.e[j*s+2] != 0; j = (j + 1) & mask {
		if h := t.home(t.e[j*s]); (j-h)&mask >= (j-i)&mask {
			copy(t.e[i*s:(i+1)*s], t.e[j*s:(j+1)*s])
			i = j
		}
	}
	clear(t.e[i*s : (i+1)*s])
	t.n--
	if t.n == 0 {
		t.data, t.dead = t.data[:0], 0
	}
}

// step counts s (hash h) by d for the members of mask and returns the
// members for which s became present or absent (changed), and those for
// which it is present now (of mask). Over inserts only, d > 0.
func (t *strSet) step(s string, h uint64, mask uint64, d int64, k int) (changed, now uint64) {
	st := int(t.stride)
	i := t.slot(s, h)
	o := i * st
	old := t.e[o+2]
	if st == 3 {
		if now = old | mask; now != old {
			if old == 0 {
				o = t.insert(i, s, h) * st
			}
			t.e[o+2] = now
		}
		return now &^ old, now
	}
	if old == 0 {
		i = t.insert(i, s, h)
		o = i * st
	}
	has, cs := old, t.e[o+3:o+3+k]
	for m := mask; m != 0; m &= m - 1 {
		j := bits.TrailingZeros64(m)
		c := int64(cs[j]) + d
		if (int64(cs[j]) > 0) != (c > 0) {
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
		cs[j] = uint64(c)
	}
	t.e[o+2] = has
	if has == 0 {
		t.remove(i)
	}
	return changed, now
}

// set sets member j's count of s to c: restore, into a set of no
// retractions yet (over inserts only: present when c > 0).
func (t *strSet) set(s string, j int, c int64) {
	st := int(t.stride)
	if c == 0 || st == 3 && c < 0 {
		return
	}
	o := t.entry(s, strHash(s)) * st
	t.e[o+2] |= 1 << j
	if st > 3 {
		t.e[o+3+j] = uint64(c)
	}
}

// each calls f with every value and, for each member, its count (1 for
// a bit) in cs. Neither b nor cs may be kept, and f must not change the
// set.
func (t *strSet) each(k int, f func(b []byte, cs []int64)) {
	st := int(t.stride)
	cs := make([]int64, k)
	var buf [8]byte
	for o := 0; o < len(t.e); o += st {
		b := t.e[o+2]
		if b == 0 {
			continue
		}
		for j := range cs {
			if st == 3 {
				cs[j] = int64(b >> j & 1)
			} else {
				cs[j] = int64(t.e[o+3+j])
			}
		}
		f(t.bytesAt(o, &buf), cs)
	}
}

// touchChunk is how many rows of a batch touchStrSets reads ahead of
// their updates: their cache lines (a header and a slot each per set)
// stay well within a core's L2.
const touchChunk = 256

// touchStrSets reads, for a chunk of inserts into slots ids, each row's
// string set headers and then the home slot of its value in each: the
// loads do not depend on one another, so the core has many cache misses
// in flight at once where the updates, one row after the other, wait
// for each in turn. The updates then find their lines in the cache.
// It changes nothing.
func (s *Store) touchStrSets(ids []int32, changes []row.Change) {
	var x uint64
	for gi := range s.sets {
		g := &s.sets[gi]
		if !g.str || g.deferred {
			continue
		}
		for _, id := range ids {
			x += uint64(s.strs[int(id)*s.nstr+g.si].stride)
		}
		for j, id := range ids {
			t := &s.strs[int(id)*s.nstr+g.si]
			if v := changes[j].Row[g.arg]; t.e != nil && !v.IsNull() {
				x += t.e[t.home(strHash(v.Str()))*int(t.stride)+2]
			}
		}
	}
	s.touched = x
}

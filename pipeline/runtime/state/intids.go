package state

import (
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// IntIDs is KeyIDs for keys that are one 64-bit integer (a join's BIGINT
// key): it maps each value to an id it hands out, reusing freed ones, so
// that an owner keeps per-key state in arrays by id. A lookup hashes the
// value (one multiplication) and compares it in its slot: no key bytes
// to encode, and no second array to compare them in (KeyTable's entry),
// which on a table of a million keys is a cache miss of its own.
//
// Open addressing with linear probing, at most half full; a removal
// shifts the later members of its probe run back, so no tombstones
// build up as keys come and go. The slots and the values by id are
// mapped outside the Go heap once large (OffHeap), on huge pages where
// the kernel gives them: their reads are at random.
type IntIDs struct {
	mem   *OffHeap
	seed  [2]uint64
	shift uint
	slots []IntSlot
	// keys holds each id's value, for Key and Has.
	keys []uint64
	n    int
	free []int32
	next int32 // ids handed out so far
}

// IntSlot is one slot of an IntIDs: a value and its id plus one (0: an
// empty slot), 16 bytes, four to a cache line.
type IntSlot struct {
	key uint64
	id1 int32
	_   int32
}

// NewIntIDs returns an empty table.
func NewIntIDs() *IntIDs {
	t := &IntIDs{}
	s := maphash.MakeSeed()
	// A seeded hash, as KeyTable's: values an adversary picked do not
	// share their slots in every process.
	t.seed = [2]uint64{maphash.Comparable(s, 1), maphash.Comparable(s, 2) | 1}
	t.mem = NewOffHeap(t)
	return t
}

// home is k's first slot: the 128-bit product of k and the seed, folded,
// its top bits.
func (t *IntIDs) home(k uint64) uint64 {
	hi, lo := bits.Mul64(k^t.seed[0], t.seed[1])
	return (hi ^ lo) >> t.shift
}

// Len is the number of keys held.
func (t *IntIDs) Len() int { return t.n }

// Find returns k's id and whether it is held.
func (t *IntIDs) Find(k uint64) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for s := t.home(k); ; s = (s + 1) & mask {
		sl := &t.slots[s]
		if sl.key == k && sl.id1 != 0 {
			return sl.id1 - 1, true
		}
		if sl.id1 == 0 {
			return 0, false
		}
	}
}

// Touch reads k's home slot and returns its first word: a caller that
// will look many keys up reads their slots first, with no dependence
// between the reads, so that their cache misses overlap.
func (t *IntIDs) Touch(k uint64) uint64 {
	if t.n == 0 {
		return 0
	}
	return t.slots[t.home(k)].key
}

// Add inserts k, which must be absent, and returns its id; fresh reports
// an id never handed out before.
func (t *IntIDs) Add(k uint64) (id int32, fresh bool) {
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
	} else {
		id, fresh = t.next, true
		t.next++
	}
	t.put(k, id)
	return id, fresh
}

func (t *IntIDs) put(k uint64, id int32) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	t.insert(k, id+1)
	if int(id) >= len(t.keys) {
		t.keys = OffHeapGrow(t.mem, t.keys, int(id)+1)
	}
	t.keys[id] = k
	t.n++
}

func (t *IntIDs) insert(k uint64, id1 int32) {
	mask := uint64(len(t.slots) - 1)
	for s := t.home(k); ; s = (s + 1) & mask {
		if t.slots[s].id1 == 0 {
			t.slots[s] = IntSlot{key: k, id1: id1}
			return
		}
	}
}

func (t *IntIDs) grow() {
	old := t.slots
	size := max(16, 2*len(old))
	t.slots = OffHeapMake[IntSlot](t.mem, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for _, o := range old {
		if o.id1 != 0 {
			t.insert(o.key, o.id1)
		}
	}
	offHeapFree(t.mem, old)
}

// Key returns id's value (of a held id).
func (t *IntIDs) Key(id int32) uint64 { return t.keys[id] }

// Has reports whether id holds a key.
func (t *IntIDs) Has(id int32) bool {
	if id < 0 || int(id) >= len(t.keys) {
		return false
	}
	got, ok := t.Find(t.keys[id])
	return ok && got == id
}

// Drop removes k and frees its id for a later Add.
func (t *IntIDs) Drop(k uint64) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	i := t.home(k)
	for ; t.slots[i].key != k || t.slots[i].id1 == 0; i = (i + 1) & mask {
		if t.slots[i].id1 == 0 {
			return 0, false
		}
	}
	id := t.slots[i].id1 - 1
	// Backward shift: move a later member of the run into the hole when
	// its home is not cyclically between the hole and it.
	for j := (i + 1) & mask; t.slots[j].id1 != 0; j = (j + 1) & mask {
		h := t.home(t.slots[j].key)
		if (j-h)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = IntSlot{}
	t.n--
	t.free = append(t.free, id)
	return id, true
}

// Each yields every held value with its id, in slot order.
func (t *IntIDs) Each(yield func(k uint64, id int32) bool) {
	for _, s := range t.slots {
		if s.id1 != 0 && !yield(s.key, s.id1-1) {
			return
		}
	}
}

// MemBytes is the memory the table holds: what a state budget counts.
func (t *IntIDs) MemBytes() int64 {
	if t == nil {
		return 0
	}
	return int64(cap(t.slots))*int64(unsafe.Sizeof(IntSlot{})) + int64(cap(t.keys))*8 + int64(cap(t.free))*4
}

// Release returns the table's off-heap memory; it is empty after.
func (t *IntIDs) Release() {
	t.mem.Release()
	t.slots, t.keys, t.free = nil, nil, nil
	t.n, t.next, t.shift = 0, 0, 0
}

package state

import (
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// IntIndex maps 64-bit integers (a join's BIGINT key, as its payload)
// to ids its owner gives them: IntIDs hands the ids out itself, the
// interval joins take them from a KeyIDs or a counter of their own. A
// lookup hashes the value (one multiplication) and compares it in its
// slot: no key bytes to encode, and no second array to compare them in
// (KeyTable's entry), which on a table of a million keys is a cache
// miss of its own.
//
// Open addressing with linear probing, at most half full; a removal
// shifts the later members of its probe run back, so no tombstones
// build up as keys come and go. The zero value is an empty index whose
// slots live on the Go heap; IntIDs maps them outside it once large
// (OffHeap, its mem), on huge pages where the kernel gives them: their
// reads are at random.
type IntIndex struct {
	// mem is where the slots are mapped once large; nil: the Go heap.
	// Set before the first Put: an owner that is copied by value (the
	// interval join's restore does *j = *r) must keep nil, as a mapping
	// is released when the owner it was made for becomes unreachable.
	mem   *OffHeap
	seed  [2]uint64
	shift uint
	mask  uint64 // len(slots)-1
	slots []IntSlot
	n     int
}

// IntSlot is one slot of an IntIndex: a value and its id plus one (0:
// an empty slot), 16 bytes, four to a cache line.
type IntSlot struct {
	key uint64
	id1 int32
	_   int32
}

// home is k's first slot: the 128-bit product of k and the seed, folded,
// its top bits. A seeded hash, as KeyTable's: values an adversary picked
// do not share their slots in every process, and values that differ
// only in their high bits (which a plain multiplicative hash maps to
// few slots) spread.
func (t *IntIndex) home(k uint64) uint64 {
	hi, lo := bits.Mul64(k^t.seed[0], t.seed[1])
	return (hi ^ lo) >> t.shift
}

// Len is the number of values held.
func (t *IntIndex) Len() int { return t.n }

// Find returns k's id and whether it is held. Small enough to inline
// (the budget's 80): a join calls it once a row. An empty index has no
// slots, and its loop no first pass.
func (t *IntIndex) Find(k uint64) (int32, bool) {
	for s := t.home(k); s < uint64(len(t.slots)); s = (s + 1) & t.mask {
		sl := &t.slots[s]
		if sl.id1 == 0 {
			break
		}
		if sl.key == k {
			return sl.id1 - 1, true
		}
	}
	return 0, false
}

// Touch reads k's home slot and returns its first word: a caller that
// will look many values up reads their slots first, with no dependence
// between the reads, so that their cache misses overlap.
func (t *IntIndex) Touch(k uint64) uint64 {
	if t.n == 0 {
		return 0
	}
	return t.slots[t.home(k)].key
}

// Put adds k, which must be absent, with id (>= 0).
func (t *IntIndex) Put(k uint64, id int32) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	t.insert(k, id+1)
	t.n++
}

func (t *IntIndex) insert(k uint64, id1 int32) {
	mask := uint64(len(t.slots) - 1)
	for s := t.home(k); ; s = (s + 1) & mask {
		if t.slots[s].id1 == 0 {
			t.slots[s] = IntSlot{key: k, id1: id1}
			return
		}
	}
}

func (t *IntIndex) grow() {
	if t.seed[1] == 0 {
		// Seeded on the first Put, so that the zero value is ready;
		// the multiplier is odd, so no two values share a product.
		s := maphash.MakeSeed()
		t.seed = [2]uint64{maphash.Comparable(s, 1), maphash.Comparable(s, 2) | 1}
	}
	old := t.slots
	size := max(16, 2*len(old))
	t.slots = OffHeapMake[IntSlot](t.mem, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	t.mask = uint64(size - 1)
	for _, o := range old {
		if o.id1 != 0 {
			t.insert(o.key, o.id1)
		}
	}
	offHeapFree(t.mem, old)
}

// Del removes k and returns its id, if it was held.
func (t *IntIndex) Del(k uint64) (int32, bool) {
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
	// its home is not cyclically between the hole and it, so that it
	// stays reachable from its home.
	for j := (i + 1) & mask; t.slots[j].id1 != 0; j = (j + 1) & mask {
		h := t.home(t.slots[j].key)
		if (j-h)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = IntSlot{}
	t.n--
	return id, true
}

// Each yields every held value with its id, in slot order.
func (t *IntIndex) Each(yield func(k uint64, id int32) bool) {
	for _, s := range t.slots {
		if s.id1 != 0 && !yield(s.key, s.id1-1) {
			return
		}
	}
}

// MemBytes is the memory the slots hold: what a state budget counts.
func (t *IntIndex) MemBytes() int64 {
	return int64(cap(t.slots)) * int64(unsafe.Sizeof(IntSlot{}))
}

// drop forgets the slots without freeing them: for an owner that
// released its whole OffHeap (IntIDs.Release).
func (t *IntIndex) drop() {
	t.slots, t.n, t.shift, t.mask = nil, 0, 0, 0
}

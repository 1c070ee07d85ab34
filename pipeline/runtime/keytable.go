package runtime

import (
	"encoding/binary"
	"hash/maphash"
)

// keyTable maps encoded keys (row.KeyOf) to int32 ids that its owner
// chooses, such as aggStore slots. It replaces a map[string]int32, which
// costs a string allocation per key and a pointer per entry for the GC to
// scan. Here nothing holds a pointer: an open-addressing index of
// (hash, id) pairs, probed linearly, points into one entry per id that
// keeps the key inline when it is short (a BIGINT key is 10 bytes) and
// in a shared byte arena when not. Deletion shifts the probe run back, so
// there are no tombstones; the arena is compacted when half of it is
// dead. A table made by newOffHeapKeyTable keeps its index, entries and
// arena outside the Go heap (offheap.go).
type keyTable struct {
	seed maphash.Seed
	mem  *offHeap // nil: the Go heap
	// index holds bucket = hash<<32 | id+1; 0 is an empty bucket. Its
	// length is a power of two, at most 3/4 full.
	index []uint64
	// entries is indexed by id.
	entries []keyEntry
	arena   []byte
	dead    int // arena bytes of removed keys
	n       int
}

// keyInline is the longest key kept in its entry: a BIGINT or TIMESTAMP
// key takes 10 bytes, and an entry is 16.
const keyInline = 12

// keyEntry is one id's key: n is the key length + 1 (0: no key), and b
// holds the key, or when it is longer than keyInline, its arena offset.
type keyEntry struct {
	n uint32
	b [keyInline]byte
}

func newKeyTable() *keyTable { return &keyTable{seed: maphash.MakeSeed()} }

// newOffHeapKeyTable is a keyTable whose arrays live outside the Go heap
// once they are large. Its owner keeps no view from bytes past a change
// (a view then reads unmapped memory) and calls release when it drops
// the table before the table becomes garbage, if it wants the memory
// back before the GC notices.
func newOffHeapKeyTable() *keyTable {
	t := &keyTable{seed: maphash.MakeSeed()}
	t.mem = newOffHeap(t)
	return t
}

// release returns an off-heap table's memory; the table is empty after.
func (t *keyTable) release() {
	t.mem.release()
	t.index, t.entries, t.arena = nil, nil, nil
	t.dead, t.n = 0, 0
}

func (t *keyTable) len() int { return t.n }

func (t *keyTable) hash(key []byte) uint32 {
	h := maphash.Bytes(t.seed, key)
	return uint32(h ^ h>>32)
}

// bytes returns id's key, a view valid until the next change.
func (t *keyTable) bytes(id int32) []byte {
	e := &t.entries[id]
	n := int(e.n) - 1
	if n <= keyInline {
		return e.b[:n]
	}
	off := binary.LittleEndian.Uint64(e.b[:8])
	return t.arena[off : off+uint64(n)]
}

// key returns a copy of id's key.
func (t *keyTable) key(id int32) string { return string(t.bytes(id)) }

// has reports whether id holds a key.
func (t *keyTable) has(id int32) bool { return int(id) < len(t.entries) && t.entries[id].n != 0 }

func (t *keyTable) equal(id uint32, key []byte) bool {
	e := &t.entries[id]
	if int(e.n) != len(key)+1 {
		return false
	}
	return string(t.bytes(int32(id))) == string(key)
}

// find returns key's id and whether it is present; it does not allocate.
func (t *keyTable) find(key []byte) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	return t.findHashed(key, t.hash(key))
}

// findHashed is find of a key whose hash the caller computed.
func (t *keyTable) findHashed(key []byte, h uint32) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint32(len(t.index) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		b := t.index[i]
		if b == 0 {
			return 0, false
		}
		if uint32(b>>32) == h && t.equal(uint32(b)-1, key) {
			return int32(uint32(b) - 1), true
		}
	}
}

// probe returns the id of the first member of hash h's probe run that
// has hash h, or -1: a candidate for a key of that hash, which equal must
// confirm. Split from the key comparison, so that a caller probing many
// keys has the index loads of all of them in flight at once.
func (t *keyTable) probe(h uint32) int32 {
	if t.n == 0 {
		return -1
	}
	mask := uint32(len(t.index) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		b := t.index[i]
		if b == 0 {
			return -1
		}
		if uint32(b>>32) == h {
			return int32(uint32(b) - 1)
		}
	}
}

// insert adds key, which must be absent, under id, which must be free.
func (t *keyTable) insert(key []byte, id int32) { t.insertHashed(key, id, t.hash(key)) }

// insertHashed is insert of a key whose hash the caller computed.
func (t *keyTable) insertHashed(key []byte, id int32, h uint32) {
	if (t.n+1)*4 > len(t.index)*3 {
		t.grow()
	}
	if int(id) >= len(t.entries) {
		t.entries = offHeapGrow(t.mem, t.entries, int(id)+1)
	}
	e := &t.entries[id]
	e.n = uint32(len(key) + 1)
	if len(key) <= keyInline {
		copy(e.b[:], key)
	} else {
		off := len(t.arena)
		binary.LittleEndian.PutUint64(e.b[:8], uint64(off))
		t.arena = offHeapGrow(t.mem, t.arena, off+len(key))
		copy(t.arena[off:], key)
	}
	t.place(h, uint32(id))
	t.n++
}

func (t *keyTable) place(h, id uint32) {
	mask := uint32(len(t.index) - 1)
	i := h & mask
	for t.index[i] != 0 {
		i = (i + 1) & mask
	}
	t.index[i] = uint64(h)<<32 | uint64(id+1)
}

func (t *keyTable) grow() {
	old := t.index
	t.index = offHeapMake[uint64](t.mem, max(2*len(old), 16))
	for _, b := range old {
		if b != 0 {
			t.place(uint32(b>>32), uint32(b)-1)
		}
	}
	offHeapFree(t.mem, old)
}

// remove deletes key and returns the id it had.
func (t *keyTable) remove(key []byte) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	h := t.hash(key)
	mask := uint32(len(t.index) - 1)
	i := h & mask
	for {
		b := t.index[i]
		if b == 0 {
			return 0, false
		}
		if uint32(b>>32) == h && t.equal(uint32(b)-1, key) {
			break
		}
		i = (i + 1) & mask
	}
	id := int32(uint32(t.index[i]) - 1)
	// Backward shift: move later members of the probe run into the hole
	// when their home bucket is at or before it.
	for j := (i + 1) & mask; t.index[j] != 0; j = (j + 1) & mask {
		home := uint32(t.index[j]>>32) & mask
		if (j-home)&mask >= (j-i)&mask {
			t.index[i] = t.index[j]
			i = j
		}
	}
	t.index[i] = 0
	e := &t.entries[id]
	if n := int(e.n) - 1; n > keyInline {
		t.dead += n
	}
	*e = keyEntry{}
	t.n--
	if t.dead > 4096 && t.dead*2 > len(t.arena) {
		t.compact()
	}
	return id, true
}

// compact copies the live long keys into a new arena.
func (t *keyTable) compact() {
	arena := offHeapMake[byte](t.mem, len(t.arena)-t.dead)
	at := 0
	for i := range t.entries {
		e := &t.entries[i]
		if n := int(e.n) - 1; n > keyInline {
			off := binary.LittleEndian.Uint64(e.b[:8])
			binary.LittleEndian.PutUint64(e.b[:8], uint64(at))
			at += copy(arena[at:], t.arena[off:off+uint64(n)])
		}
	}
	offHeapFree(t.mem, t.arena)
	t.arena, t.dead = arena[:at], 0
}

// reset empties the table, keeping room for n keys.
func (t *keyTable) reset(n int) {
	size := 16
	for size*3 < n*4 {
		size *= 2
	}
	offHeapFree(t.mem, t.index)
	offHeapFree(t.mem, t.entries)
	offHeapFree(t.mem, t.arena)
	t.index = offHeapMake[uint64](t.mem, size)
	t.entries = offHeapMake[keyEntry](t.mem, n)[:0]
	t.arena, t.dead, t.n = nil, 0, 0
}

// keyIDs is a keyTable that hands out the ids itself, reusing freed
// ones, for an owner whose per-key state lives in slices indexed by id
// (deduplication's rows, Top-N's partitions, a join side's keys).
type keyIDs struct {
	*keyTable
	free []int32
	next int32 // ids handed out so far
}

func newKeyIDs() *keyIDs { return &keyIDs{keyTable: newKeyTable()} }

// add inserts key, which must be absent, and returns its id; fresh
// reports an id never handed out before: the owner's slices grow by one.
func (t *keyIDs) add(key []byte) (id int32, fresh bool) {
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
	} else {
		id, fresh = t.next, true
		t.next++
	}
	t.insert(key, id)
	return id, fresh
}

// drop removes key and frees its id for a later add.
func (t *keyIDs) drop(key []byte) (int32, bool) {
	id, ok := t.remove(key)
	if ok {
		t.free = append(t.free, id)
	}
	return id, ok
}

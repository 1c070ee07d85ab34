package state

import (
	"encoding/binary"
	"hash/maphash"
	"unsafe"
)

// KeyTable maps encoded keys (row.KeyOf) to int32 ids that its owner
// chooses, such as aggStore slots. It replaces a map[string]int32, which
// costs a string allocation per key and a pointer per entry for the GC to
// scan. Here nothing holds a pointer: an open-addressing index of
// (hash, id) pairs, probed linearly, points into one entry per id that
// keeps the key inline when it is short (a BIGINT key is 10 bytes) and
// in a shared byte arena when not. Deletion shifts the probe run back, so
// there are no tombstones; the arena is compacted when half of it is
// dead. A table made by newOffHeapKeyTable keeps its index, entries and
// arena outside the Go heap (offheap.go).
type KeyTable struct {
	seed maphash.Seed
	mem  *OffHeap // nil: the Go heap
	// index holds bucket = hash<<32 | id+1; 0 is an empty bucket. Its
	// length is a power of two, at most 3/4 full.
	index []uint64
	// entries is indexed by id.
	Entries []KeyEntry
	Arena   []byte
	dead    int // arena bytes of removed keys
	n       int
}

// keyInline is the longest key kept in its entry: a BIGINT or TIMESTAMP
// key takes 10 bytes, and an entry is 16.
const keyInline = 12

// KeyEntry is one id's key: n is the key length + 1 (0: no key), and b
// holds the key, or when it is longer than keyInline, its arena offset.
type KeyEntry struct {
	n uint32
	b [keyInline]byte
}

func newKeyTable() *KeyTable { return &KeyTable{seed: maphash.MakeSeed()} }

// NewOffHeapKeyTable is a keyTable whose arrays live outside the Go heap
// once they are large. Its owner keeps no view from bytes past a change
// (a view then reads unmapped memory) and calls release when it drops
// the table before the table becomes garbage, if it wants the memory
// back before the GC notices.
func NewOffHeapKeyTable() *KeyTable {
	t := &KeyTable{seed: maphash.MakeSeed()}
	t.mem = NewOffHeap(t)
	return t
}

// Release returns an off-heap table's memory; the table is empty after.
func (t *KeyTable) Release() {
	t.mem.Release()
	t.index, t.Entries, t.Arena = nil, nil, nil
	t.dead, t.n = 0, 0
}

func (t *KeyTable) Len() int { return t.n }

// MemBytes is the memory t's arrays hold (index, entries, arena), on the
// Go heap or off it: what a state budget counts. It is their capacity,
// since that is what is allocated, and costs nothing to compute.
func (t *KeyTable) MemBytes() int64 {
	if t == nil {
		return 0
	}
	return int64(cap(t.index))*8 + int64(cap(t.Entries))*int64(unsafe.Sizeof(KeyEntry{})) + int64(cap(t.Arena))
}

func (t *KeyTable) Hash(key []byte) uint32 {
	h := maphash.Bytes(t.seed, key)
	return uint32(h ^ h>>32)
}

// Bytes returns id's key, a view valid until the next change.
func (t *KeyTable) Bytes(id int32) []byte {
	e := &t.Entries[id]
	n := int(e.n) - 1
	if n <= keyInline {
		return e.b[:n]
	}
	off := binary.LittleEndian.Uint64(e.b[:8])
	return t.Arena[off : off+uint64(n)]
}

// Key returns a copy of id's key.
func (t *KeyTable) Key(id int32) string { return string(t.Bytes(id)) }

// Has reports whether id holds a key.
func (t *KeyTable) Has(id int32) bool { return int(id) < len(t.Entries) && t.Entries[id].n != 0 }

func (t *KeyTable) Equal(id uint32, key []byte) bool {
	e := &t.Entries[id]
	if int(e.n) != len(key)+1 {
		return false
	}
	return string(t.Bytes(int32(id))) == string(key)
}

// Find returns key's id and whether it is present; it does not allocate.
func (t *KeyTable) Find(key []byte) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	return t.FindHashed(key, t.Hash(key))
}

// FindHashed is find of a key whose hash the caller computed.
func (t *KeyTable) FindHashed(key []byte, h uint32) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint32(len(t.index) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		b := t.index[i]
		if b == 0 {
			return 0, false
		}
		if uint32(b>>32) == h && t.Equal(uint32(b)-1, key) {
			return int32(uint32(b) - 1), true
		}
	}
}

// Probe returns the id of the first member of hash h's probe run that
// has hash h, or -1: a candidate for a key of that hash, which equal must
// confirm. Split from the key comparison, so that a caller probing many
// keys has the index loads of all of them in flight at once.
func (t *KeyTable) Probe(h uint32) int32 {
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

// Insert adds key, which must be absent, under id, which must be free.
func (t *KeyTable) Insert(key []byte, id int32) { t.InsertHashed(key, id, t.Hash(key)) }

// InsertHashed is insert of a key whose hash the caller computed.
func (t *KeyTable) InsertHashed(key []byte, id int32, h uint32) {
	if (t.n+1)*4 > len(t.index)*3 {
		t.grow()
	}
	if int(id) >= len(t.Entries) {
		t.Entries = OffHeapGrow(t.mem, t.Entries, int(id)+1)
	}
	e := &t.Entries[id]
	e.n = uint32(len(key) + 1)
	if len(key) <= keyInline {
		copy(e.b[:], key)
	} else {
		off := len(t.Arena)
		binary.LittleEndian.PutUint64(e.b[:8], uint64(off))
		t.Arena = OffHeapGrow(t.mem, t.Arena, off+len(key))
		copy(t.Arena[off:], key)
	}
	t.place(h, uint32(id))
	t.n++
}

func (t *KeyTable) place(h, id uint32) {
	mask := uint32(len(t.index) - 1)
	i := h & mask
	for t.index[i] != 0 {
		i = (i + 1) & mask
	}
	t.index[i] = uint64(h)<<32 | uint64(id+1)
}

func (t *KeyTable) grow() {
	old := t.index
	t.index = OffHeapMake[uint64](t.mem, max(2*len(old), 16))
	for _, b := range old {
		if b != 0 {
			t.place(uint32(b>>32), uint32(b)-1)
		}
	}
	offHeapFree(t.mem, old)
}

// Remove deletes key and returns the id it had.
func (t *KeyTable) Remove(key []byte) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	h := t.Hash(key)
	mask := uint32(len(t.index) - 1)
	i := h & mask
	for {
		b := t.index[i]
		if b == 0 {
			return 0, false
		}
		if uint32(b>>32) == h && t.Equal(uint32(b)-1, key) {
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
	e := &t.Entries[id]
	if n := int(e.n) - 1; n > keyInline {
		t.dead += n
	}
	*e = KeyEntry{}
	t.n--
	if t.dead > 4096 && t.dead*2 > len(t.Arena) {
		t.compact()
	}
	return id, true
}

// compact copies the live long keys into a new arena.
func (t *KeyTable) compact() {
	arena := OffHeapMake[byte](t.mem, len(t.Arena)-t.dead)
	at := 0
	for i := range t.Entries {
		e := &t.Entries[i]
		if n := int(e.n) - 1; n > keyInline {
			off := binary.LittleEndian.Uint64(e.b[:8])
			binary.LittleEndian.PutUint64(e.b[:8], uint64(at))
			at += copy(arena[at:], t.Arena[off:off+uint64(n)])
		}
	}
	offHeapFree(t.mem, t.Arena)
	t.Arena, t.dead = arena[:at], 0
}

// Reset empties the table, keeping room for n keys.
func (t *KeyTable) Reset(n int) {
	size := 16
	for size*3 < n*4 {
		size *= 2
	}
	offHeapFree(t.mem, t.index)
	offHeapFree(t.mem, t.Entries)
	offHeapFree(t.mem, t.Arena)
	t.index = OffHeapMake[uint64](t.mem, size)
	t.Entries = OffHeapMake[KeyEntry](t.mem, n)[:0]
	t.Arena, t.dead, t.n = nil, 0, 0
}

// KeyIDs is a keyTable that hands out the ids itself, reusing freed
// ones, for an owner whose per-key state lives in slices indexed by id
// (deduplication's rows, Top-N's partitions, a join side's keys).
type KeyIDs struct {
	*KeyTable
	free []int32
	next int32 // ids handed out so far
}

func NewKeyIDs() *KeyIDs { return &KeyIDs{KeyTable: newKeyTable()} }

// MemBytes is the table's memory and the free list's.
func (t *KeyIDs) MemBytes() int64 { return t.KeyTable.MemBytes() + int64(cap(t.free))*4 }

// Add inserts key, which must be absent, and returns its id; fresh
// reports an id never handed out before: the owner's slices grow by one.
func (t *KeyIDs) Add(key []byte) (id int32, fresh bool) {
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
	} else {
		id, fresh = t.next, true
		t.next++
	}
	t.Insert(key, id)
	return id, fresh
}

// Drop removes key and frees its id for a later add.
func (t *KeyIDs) Drop(key []byte) (int32, bool) {
	id, ok := t.Remove(key)
	if ok {
		t.free = append(t.free, id)
	}
	return id, ok
}

// Mapped is the number of bytes of the table's off-heap memory.
func (t *KeyTable) Mapped() int { return t.mem.Mapped() }

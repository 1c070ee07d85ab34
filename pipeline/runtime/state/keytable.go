package state

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"unsafe"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// KeyTable maps encoded keys (row.KeyOf) to int32 ids that its owner
// chooses, such as aggStore slots. It replaces a map[string]int32, which
// costs a string allocation per key and a pointer per entry for the GC to
// scan. Here nothing holds a pointer: an open-addressing index of
// (hash, id) pairs, probed linearly, points into one entry per id that
// keeps the key inline when it is short (a BIGINT key takes 10 bytes, a
// STRING of up to 12 characters 15) and in a shared byte arena when not.
// A lookup compares the 32-bit hash in the index first, then the entry:
// a short key is two words against two words (its length is in the
// first), a long one its length and then its bytes in the arena.
// Deletion shifts the probe run back, so there are no tombstones; the
// arena is compacted when half of it is dead. A table made by
// newOffHeapKeyTable keeps its index, entries and arena outside the Go
// heap (offheap.go).
type KeyTable struct {
	seed maphash.Seed
	mix  [2]uint64 // the short keys' hash seed
	// hashMask is all ones; a test narrows it to force keys to share
	// their hash.
	hashMask uint32
	// fixed: the hash is operator.KeyHash's (UseKeyHash), not seeded.
	fixed bool
	mem   *OffHeap // nil: the Go heap
	// index holds bucket = hash<<32 | id+1; 0 is an empty bucket. Its
	// length is a power of two, at most 3/4 full.
	index []uint64
	// entries is indexed by id.
	Entries []KeyEntry
	Arena   []byte
	dead    int // arena bytes of removed keys
	n       int
}

// keyInline is the longest key kept in its entry.
const keyInline = 15

// KeyEntry is one id's key, 16 bytes. Its first byte is the tag: 0 for
// no key, n+1 for a key of n <= keyInline bytes, which follow it (the
// bytes after them are 0, so that two short keys are equal when their
// entries' words are), or longKey for a longer key, whose length is in
// bytes 4-7 and its arena offset in bytes 8-15.
type KeyEntry struct {
	b [16]byte
}

const longKey = 0xff

func (e *KeyEntry) words() (lo, hi uint64) {
	return binary.LittleEndian.Uint64(e.b[:8]), binary.LittleEndian.Uint64(e.b[8:])
}

// shortWords is the entry's two words of key, len(key) <= keyInline.
func shortWords(key []byte) (lo, hi uint64) {
	return wordsAt(key[:cap(key)], 0, len(key))
}

// wordsAt is shortWords of all[start:start+n]. It reads the 16 bytes at
// start when all holds them, masking off the ones past the key: no
// copy, as a buffer of keys back to back allows.
func wordsAt(all []byte, start, n int) (lo, hi uint64) {
	if start+16 > len(all) {
		return wordsCopy(all[start : start+n])
	}
	return wordsOf(all[start:start+16:start+16], n)
}

// wordsOf is the inline form of the first n bytes of k.
func wordsOf(k []byte, n int) (lo, hi uint64) {
	m := &shortMasks[n&15]
	a, b := binary.LittleEndian.Uint64(k[:8]), binary.LittleEndian.Uint64(k[7:15])
	return (a<<8 | uint64(n+1)) & m[0], b & m[1]
}

func wordsCopy(key []byte) (lo, hi uint64) {
	var k [16]byte
	copy(k[:], key)
	return wordsOf(k[:], len(key))
}

// shortMasks[n] keeps the bytes of a key of n bytes in its two words.
var shortMasks = func() (m [16][2]uint64) {
	for n := range m {
		m[n] = [2]uint64{byteMask(n + 1), byteMask(n - 7)}
	}
	return m
}()

// byteMask keeps the low n bytes of a word (none for n <= 0, all for n >= 8).
func byteMask(n int) uint64 {
	return 1<<(8*uint(max(n, 0))) - 1
}

func newKeyTable() *KeyTable {
	return &KeyTable{seed: maphash.MakeSeed(), mix: mixSeed(), hashMask: ^uint32(0)}
}

// mixSeed draws the short keys' hash seed (odd, for the multiplication).
func mixSeed() [2]uint64 {
	s := maphash.MakeSeed()
	return [2]uint64{maphash.Comparable(s, 1) | 1, maphash.Comparable(s, 2) | 1}
}

// NewOffHeapKeyTable is a keyTable whose arrays live outside the Go heap
// once they are large. Its owner keeps no view from bytes past a change
// (a view then reads unmapped memory) and calls release when it drops
// the table before the table becomes garbage, if it wants the memory
// back before the GC notices.
func NewOffHeapKeyTable() *KeyTable {
	t := newKeyTable()
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

// UseKeyHash makes t, which must be empty, hash keys with the fixed
// operator.KeyHash (operator.TableHash of it) instead of its seeded
// hash: the hash a keyed operator's split computed once for a key's
// group, which the worker's table then takes as the key's (FindAllHashed)
// instead of hashing the key again. The seeded hash is the default as
// it keeps keys an adversary chose from sharing their hashes.
func (t *KeyTable) UseKeyHash() { t.fixed = true }

// FixedHash reports whether t hashes with operator.KeyHash (UseKeyHash).
func (t *KeyTable) FixedHash() bool { return t.fixed }

// Hash is key's hash in t. A short key's comes from its entry's two
// words, two multiplications (the common key: a number, a name, a
// code); a longer key's from maphash.
func (t *KeyTable) Hash(key []byte) uint32 {
	if t.fixed {
		return operator.TableHash(operator.KeyHash(key)) & t.hashMask
	}
	if len(key) > keyInline {
		return t.hashLong(key)
	}
	lo, hi := shortWords(key)
	return t.hashWords(lo, hi)
}

func (t *KeyTable) hashLong(key []byte) uint32 {
	h := maphash.Bytes(t.seed, key)
	return uint32(h^h>>32) & t.hashMask
}

// hashWords mixes a short key's words as wyhash's last step does: the
// 128-bit product of the two, each xored with a seed, folded.
func (t *KeyTable) hashWords(lo, hi uint64) uint32 {
	p1, p0 := bits.Mul64(lo^t.mix[0], hi^t.mix[1])
	h := p1 ^ p0
	return uint32(h^h>>32) & t.hashMask
}

// Bytes returns id's key, a view valid until the next change.
func (t *KeyTable) Bytes(id int32) []byte {
	e := &t.Entries[id]
	if tag := e.b[0]; tag != longKey {
		return e.b[1:tag]
	}
	n := uint64(binary.LittleEndian.Uint32(e.b[4:8]))
	off := binary.LittleEndian.Uint64(e.b[8:])
	return t.Arena[off : off+n]
}

// Key returns a copy of id's key.
func (t *KeyTable) Key(id int32) string { return string(t.Bytes(id)) }

// Has reports whether id holds a key.
func (t *KeyTable) Has(id int32) bool { return int(id) < len(t.Entries) && t.Entries[id].b[0] != 0 }

// Equal reports whether id holds key.
func (t *KeyTable) Equal(id uint32, key []byte) bool {
	e := &t.Entries[id]
	if len(key) > keyInline {
		return t.equalLong(e, key)
	}
	lo, hi := shortWords(key)
	elo, ehi := e.words()
	return lo == elo && hi == ehi
}

func (t *KeyTable) equalLong(e *KeyEntry, key []byte) bool {
	if e.b[0] != longKey || binary.LittleEndian.Uint32(e.b[4:8]) != uint32(len(key)) {
		return false
	}
	off := binary.LittleEndian.Uint64(e.b[8:])
	return string(t.Arena[off:off+uint64(len(key))]) == string(key)
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

// FindAll finds a batch of keys at once: key i is keys[ends[i-1]:ends[i]]
// (the first from 0). It sets hashes[i] to key i's hash and ids[i] to
// its id, or to -1 when the table does not hold it, and reports whether
// any was missing. In three passes: hash every key, probe the index for
// every hash, then compare each key with its candidate's entry, so that
// the loads of a pass are independent of each other and in flight at
// once (a pass of few instructions a key holds more of them in flight).
// Keys the caller adds after (in order: two keys of the batch may be the
// same one) take FindHashed and InsertHashed with their hashes.
func (t *KeyTable) FindAll(keys []byte, ends []int32, hashes []uint32, ids []int32) (missed bool) {
	// A key of up to keyInline bytes whose 16 bytes from its start are
	// in the buffer's capacity is read in place (wordsOf); the others
	// (the last keys of a buffer without room after them, long keys)
	// take Hash and Equal.
	all := keys[:cap(keys)]
	start := 0
	for i, e := range ends {
		end := int(e)
		var h uint32
		if n := end - start; n <= keyInline && start+16 <= len(all) && !t.fixed {
			h = t.hashWords(wordsOf(all[start:start+16:start+16], n))
		} else {
			h = t.Hash(keys[start:end])
		}
		hashes[i] = h
		start = end
	}
	return t.FindAllHashed(keys, ends, hashes, ids)
}

// FindAllHashed is FindAll of keys whose hashes the caller computed
// (hashes[i] is key i's Hash, or for a table of UseKeyHash the
// operator.TableHash of its KeyHash, which it narrows as Hash would):
// the probes and the comparisons.
func (t *KeyTable) FindAllHashed(keys []byte, ends []int32, hashes []uint32, ids []int32) (missed bool) {
	all := keys[:cap(keys)]
	if t.fixed && t.hashMask != ^uint32(0) {
		for i := range hashes[:len(ends)] {
			hashes[i] &= t.hashMask
		}
	}
	for i, h := range hashes[:len(ends)] {
		ids[i] = t.Probe(h)
	}
	start := 0
	for i, e := range ends {
		end := int(e)
		id := ids[i]
		if id < 0 {
			// No bucket of the probe run has this hash: absent, with
			// no second walk of the run (most of a batch's keys when
			// the keys are millions and mostly new).
			start, missed = end, true
			continue
		}
		var same bool
		if n := end - start; n <= keyInline && start+16 <= len(all) {
			lo, hi := wordsOf(all[start:start+16:start+16], n)
			elo, ehi := t.Entries[id].words()
			same = lo == elo && hi == ehi
		} else {
			same = t.Equal(uint32(id), keys[start:end])
		}
		if !same {
			// A hash shared with another key: the rest of the run.
			if id, ok := t.FindHashed(keys[start:end], hashes[i]); ok {
				ids[i] = id
			} else {
				ids[i], missed = -1, true
			}
		}
		start = end
	}
	return missed
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
	if len(key) <= keyInline {
		lo, hi := shortWords(key)
		binary.LittleEndian.PutUint64(e.b[:8], lo)
		binary.LittleEndian.PutUint64(e.b[8:], hi)
	} else {
		off := len(t.Arena)
		*e = KeyEntry{}
		e.b[0] = longKey
		binary.LittleEndian.PutUint32(e.b[4:8], uint32(len(key)))
		binary.LittleEndian.PutUint64(e.b[8:], uint64(off))
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
	t.removeAt(i, id)
	return id, true
}

// RemoveID deletes the key of id, whose hash is h (Hash of the key): its
// bucket is found by the id, with no key to hash or compare. It reports
// whether id held a key of hash h.
func (t *KeyTable) RemoveID(id int32, h uint32) bool {
	if t.n == 0 {
		return false
	}
	mask := uint32(len(t.index) - 1)
	want := uint64(h)<<32 | uint64(id+1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch t.index[i] {
		case 0:
			return false
		case want:
			t.removeAt(i, id)
			return true
		}
	}
}

// removeAt empties bucket i, which holds id, and id's entry.
func (t *KeyTable) removeAt(i uint32, id int32) {
	mask := uint32(len(t.index) - 1)
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
	if e.b[0] == longKey {
		t.dead += int(binary.LittleEndian.Uint32(e.b[4:8]))
	}
	*e = KeyEntry{}
	t.n--
	if t.dead > 4096 && t.dead*2 > len(t.Arena) {
		t.compact()
	}
}

// compact copies the live long keys into a new arena.
func (t *KeyTable) compact() {
	arena := OffHeapMake[byte](t.mem, len(t.Arena)-t.dead)
	at := 0
	for i := range t.Entries {
		e := &t.Entries[i]
		if e.b[0] == longKey {
			n := uint64(binary.LittleEndian.Uint32(e.b[4:8]))
			off := binary.LittleEndian.Uint64(e.b[8:])
			binary.LittleEndian.PutUint64(e.b[8:], uint64(at))
			at += copy(arena[at:], t.Arena[off:off+n])
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
func (t *KeyIDs) Add(key []byte) (id int32, fresh bool) { return t.AddHashed(key, t.Hash(key)) }

// AddHashed is Add of a key whose hash (Hash) the caller computed.
func (t *KeyIDs) AddHashed(key []byte, h uint32) (id int32, fresh bool) {
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
	} else {
		id, fresh = t.next, true
		t.next++
	}
	t.InsertHashed(key, id, h)
	return id, fresh
}

// DropID removes id's key, whose hash is h, and frees id for a later
// add (KeyTable.RemoveID).
func (t *KeyIDs) DropID(id int32, h uint32) bool {
	ok := t.RemoveID(id, h)
	if ok {
		t.free = append(t.free, id)
	}
	return ok
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

// AddID inserts key, which must be absent, under id, which must not be
// in use: a table rebuilt with the ids of another (IntIDs' keys when a
// join's integer key meets a value of another form). The ids below id
// never handed out become free; fed in increasing order, each id is the
// free list's last.
func (t *KeyIDs) AddID(key []byte, id int32) {
	for ; t.next <= id; t.next++ {
		t.free = append(t.free, t.next)
	}
	for i := len(t.free) - 1; i >= 0; i-- {
		if t.free[i] == id {
			t.free = append(t.free[:i], t.free[i+1:]...)
			break
		}
	}
	t.Insert(key, id)
}

package joinop

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// hashTable is the probe table of a batch hash join's right side: the
// right rows by join key, laid out for probing alone.
//
// Each row is a record in one byte arena; a key's rows are a chain of
// records in the order they came (tails has the last record of a key
// of more than one row, so that a row is appended without a walk). slots is an open-addressing table (linear probing, at most
// half full) of (key, head): for a single integer-like key (BIGINT,
// INT, DATE, TIME, TIMESTAMP, BOOLEAN, the same type on both sides) the
// key's value itself, so that a probe costs the slot and the record and
// nothing is hashed or compared in another array; for any other key
// (STRING, composite) its hash, the key's bytes (row.KeyOf) in the head
// record, beside the row a match reads next. Keys match as row.KeyOf
// encodes them, as the join's shared index compares them.
//
// The arena and the slots are mapped outside the Go heap
// (state.OffHeap): nothing in them is a pointer, the GC neither scans
// them nor counts them toward its goal, and the arena grows in place. A
// view of the arena (a row's encoding) is valid until the next add.
type hashTable struct {
	layout *row.Layout // the right side's: its rows' encoding here
	keys   []int       // the right side's key columns
	mem    *state.OffHeap
	// arena holds the records from offset 1 (0 is no record) to used;
	// its length is its room. A head record: the next record's offset
	// (8 bytes, little-endian, 0 for none), for a key that is not
	// intKey the key's length (uvarint) and bytes, then the row's count
	// (uvarint: a side that is not insert-only keeps equal rows once,
	// counted), its encoding's length (uvarint) and its encoding
	// (layout). Another record: the next record's offset, then the row
	// as in a head.
	arena []byte
	used  int
	// tails has the last record of each key of more than one row, by
	// its head (a dimension table's keys have one row: none).
	tails map[uint64]uint64
	// intKey: the single key is integer-like (keyType, its values'
	// payload its identity as row.AppendKey encodes it): a slot's key is
	// that payload. Else a slot's key is the key bytes' hash (hseed).
	intKey  bool
	keyType row.TypeID
	seed    uint64
	hseed   maphash.Seed
	shift   uint
	slots   []hashSlot
	nkeys   int
	recs    int64 // records (rows with their counts) held
	// Buffers: a right row's key and encoding, a decoded row.
	kbuf, enc []byte
	view      row.Row
	// The probe passes' buffers, by change of the batch.
	offs   []uint64
	pkey   []byte
	ends   []int32  // by change: the end of its key in pkey
	hashes []uint64 // by change: its key's hash
	at     []uint64 // by change: the slot its hash was found in
	// touched keeps touch's sum, so that the compiler keeps its loads.
	touched byte
}

// hashSlot is one key of the table: its value (intKey) or hash, and its
// head record's offset (0: an empty slot).
type hashSlot struct {
	key, off uint64
}

// intKeyType reports whether keys of type id are compared by their
// payload alone (row.AppendKey writes the type, the scale and the
// payload for them: the payload is the key when the type is the
// column's and the scale zero).
func intKeyType(id row.TypeID) bool {
	switch id {
	case row.Boolean, row.Int, row.BigInt, row.Date, row.Time, row.Timestamp, row.TimestampLTZ:
		return true
	}
	return false
}

// plainInt reports whether v is a value of type id with nothing but its
// payload: its key is that payload.
func plainInt(v row.Value, id row.TypeID) bool {
	return v.Type() == id && v.Scale() == 0 && v.Str() == ""
}

// hashKey is the hash of a key's bytes (a variable: tests make every
// key's the same, to walk past keys that only share a hash).
var hashKey = maphash.Bytes

// newHashTable returns an empty probe table of a join's right side.
func newHashTable(spec *JoinSpec, layout *row.Layout) *hashTable {
	t := &hashTable{layout: layout, keys: spec.RightKeys, hseed: maphash.MakeSeed()}
	t.mem = state.NewOffHeap(t)
	lk, rk := spec.LeftKeys, spec.RightKeys
	if len(lk) == 1 && len(spec.LeftTypes) > lk[0] && len(spec.RightTypes) > rk[0] &&
		spec.LeftTypes[lk[0]] == spec.RightTypes[rk[0]] && intKeyType(spec.RightTypes[rk[0]]) {
		t.intKey, t.keyType = true, spec.RightTypes[rk[0]]
	}
	t.seed = maphash.Comparable(t.hseed, 0) | 1
	t.reset()
	return t
}

// reset empties t (its memory returned).
func (t *hashTable) reset() {
	state.OffHeapFree(t.mem, t.arena)
	state.OffHeapFree(t.mem, t.slots)
	t.arena, t.used = state.OffHeapMake[byte](t.mem, 4096), 1
	t.slots, t.shift = state.OffHeapMake[hashSlot](t.mem, 16), 64-4
	t.nkeys, t.recs, t.tails = 0, 0, nil
}

// home is the first slot of key (a value or a hash).
func (t *hashTable) home(k uint64) uint64 { return (k ^ t.seed) * 0x9e3779b97f4a7c15 >> t.shift }

// keyAt is the key bytes of the head record at off (not intKey).
func (t *hashTable) keyAt(off uint64) []byte {
	b := t.arena[off+8:]
	n, w := binary.Uvarint(b)
	return b[w : w+int(n)]
}

// lookup returns key k's slot and head record (0 when absent: the slot
// is the empty one it would take); key is its bytes when not intKey.
func (t *hashTable) lookup(k uint64, key []byte) (uint64, uint64) {
	mask := uint64(len(t.slots) - 1)
	for s := t.home(k); ; s = (s + 1) & mask {
		sl := &t.slots[s]
		if sl.off == 0 {
			return s, 0
		}
		if sl.key == k && (t.intKey || string(t.keyAt(sl.off)) == string(key)) {
			return s, sl.off
		}
	}
}

// findInt returns the head record of integer key k, 0 for none.
func (t *hashTable) findInt(k uint64) uint64 {
	mask := uint64(len(t.slots) - 1)
	for s := t.home(k); ; s = (s + 1) & mask {
		sl := &t.slots[s]
		if sl.key == k || sl.off == 0 {
			return sl.off
		}
	}
}

// add appends the right row r, whose key has no NULL, count times
// equal (enc is its layout encoding, nil to encode it here).
func (t *hashTable) add(r row.Row, enc []byte, count int32) {
	if enc == nil {
		t.enc = t.layout.Append(t.enc[:0], r)
		enc = t.enc
	}
	var k uint64
	if t.intKey {
		if v := r[t.keys[0]]; v.Type() == t.keyType && v.Scale() == 0 {
			k = uint64(v.Int64())
		} else {
			// A value of another type than the column's (a widened
			// column's restored rows): keyed by its bytes from now on.
			t.toBytes()
		}
	}
	var key []byte
	if !t.intKey {
		t.kbuf = row.KeyOf(t.kbuf[:0], r, t.keys)
		key = t.kbuf
		k = hashKey(t.hseed, key)
	}
	s, head := t.lookup(k, key)
	if head == 0 {
		off := t.record(true, key, enc, count)
		t.slots[s] = hashSlot{key: k, off: off}
		if t.nkeys++; 2*t.nkeys > len(t.slots) {
			t.grow()
		}
	} else {
		off := t.record(false, nil, enc, count)
		tail, ok := t.tails[head]
		if !ok {
			tail = head
		}
		binary.LittleEndian.PutUint64(t.arena[tail:], off)
		if t.tails == nil {
			t.tails = map[uint64]uint64{}
		}
		t.tails[head] = off
	}
	t.recs++
}

// record appends a record (a head with key, when head) and returns its
// offset.
func (t *hashTable) record(head bool, key, enc []byte, count int32) uint64 {
	n := 8 + 3*binary.MaxVarintLen32 + len(enc)
	if head {
		n += binary.MaxVarintLen32 + len(key)
	}
	if t.used+n > len(t.arena) {
		t.arena = state.OffHeapGrow(t.mem, t.arena, max(2*len(t.arena), t.used+n))
	}
	off := t.used
	b := t.arena[off:]
	binary.LittleEndian.PutUint64(b, 0)
	p := 8
	if head {
		if !t.intKey {
			p += binary.PutUvarint(b[p:], uint64(len(key)))
			p += copy(b[p:], key)
		}
	}
	p += binary.PutUvarint(b[p:], uint64(count))
	p += binary.PutUvarint(b[p:], uint64(len(enc)))
	p += copy(b[p:], enc)
	t.used += p
	return uint64(off)
}

// grow doubles the slots.
func (t *hashTable) grow() {
	old := t.slots
	t.slots = state.OffHeapMake[hashSlot](t.mem, 2*len(old))
	t.shift = uint(64 - bits.TrailingZeros(uint(len(t.slots))))
	mask := uint64(len(t.slots) - 1)
	for _, sl := range old {
		if sl.off == 0 {
			continue
		}
		s := t.home(sl.key)
		for t.slots[s].off != 0 {
			s = (s + 1) & mask
		}
		t.slots[s] = sl
	}
	state.OffHeapFree(t.mem, old)
}

// toBytes makes an intKey table one keyed by the key's bytes, its rows
// added again, each key's in their order.
func (t *hashTable) toBytes() {
	old := &hashTable{layout: t.layout, arena: t.arena, slots: t.slots, intKey: true}
	t.arena, t.slots = nil, nil
	t.intKey = false
	t.reset()
	view := make(row.Row, t.layout.Width())
	for _, sl := range old.slots {
		for rs := old.rows(sl.off); ; {
			count, enc, ok := rs.next()
			if !ok {
				break
			}
			t.layout.Decode(view, enc, nil) // KeyOf copies what it reads
			t.add(view, enc, count)
		}
	}
	clear(view)
	state.OffHeapFree(t.mem, old.arena)
	state.OffHeapFree(t.mem, old.slots)
}

// memBytes is the table's memory.
func (t *hashTable) memBytes() int64 {
	if t == nil {
		return 0
	}
	return int64(t.used) + int64(len(t.slots))*16 + int64(len(t.tails))*48 + int64(cap(t.offs)+cap(t.hashes)+cap(t.at))*8 +
		int64(cap(t.pkey)+cap(t.kbuf)+cap(t.enc)) + int64(cap(t.ends))*4
}

// hashRows walks a key's records.
type hashRows struct {
	t    *hashTable
	at   uint64
	head bool
}

// rows returns the rows of the key whose head record is at off (none
// for 0).
func (t *hashTable) rows(off uint64) hashRows { return hashRows{t: t, at: off, head: true} }

// next returns the next row's count and encoding (a view valid until
// the next add), ok false after the last.
func (r *hashRows) next() (count int32, enc []byte, ok bool) {
	if r.at == 0 {
		return 0, nil, false
	}
	b := r.t.arena[r.at:]
	r.at = binary.LittleEndian.Uint64(b)
	p := 8
	if r.head {
		r.head = false
		if !r.t.intKey {
			n, w := binary.Uvarint(b[p:])
			p += w + int(n)
		}
	}
	c, w := binary.Uvarint(b[p:])
	p += w
	n, w := binary.Uvarint(b[p:])
	p += w
	return int32(c), b[p : p+int(n)], true
}

// each yields every row with its count, decoded into a view (its
// strings aliasing the arena) valid until the next row: by key, each
// key's rows in their order.
func (t *hashTable) each(yield func(r row.Row, count int32) bool) {
	if len(t.view) != t.layout.Width() {
		t.view = make(row.Row, t.layout.Width())
	}
	defer clear(t.view)
	for _, sl := range t.slots {
		for rs := t.rows(sl.off); ; {
			count, enc, ok := rs.next()
			if !ok {
				break
			}
			t.layout.Decode(t.view, enc, nil)
			if !yield(t.view, count) {
				return
			}
		}
	}
}

// find sets t.offs[i] to the head record of change i's key (its left
// columns lk): 0 for none (a NULL key, or one the table lacks).
func (t *hashTable) find(lk []int, cs []row.Change) {
	t.offs = t.offs[:0]
	if t.intKey {
		k := lk[0]
		for i := range cs {
			off := uint64(0)
			// A value of another type, or scaled, encodes as a key no
			// right key of the table has (every one is of keyType and
			// unscaled); NULL is of type Null.
			if v := cs[i].Row[k]; v.Type() == t.keyType && v.Scale() == 0 {
				off = t.findInt(uint64(v.Int64()))
			}
			t.offs = append(t.offs, off)
		}
		return
	}
	// Another key: in passes whose loads do not wait for each other
	// (the slots, then the head records): every key encoded and hashed,
	// then every slot of an equal hash found, then the keys compared,
	// going on past a slot whose key only shares the hash.
	t.pkey, t.ends = t.pkey[:0], t.ends[:0]
	t.hashes = t.hashes[:0]
	for i := range cs {
		r := cs[i].Row
		h := uint64(0) // a NULL key: found by no hash, below
		if !hasNull(r, lk) {
			start := len(t.pkey)
			t.pkey = row.KeyOf(t.pkey, r, lk)
			h = hashKey(t.hseed, t.pkey[start:])
		}
		t.ends = append(t.ends, int32(len(t.pkey)))
		t.hashes = append(t.hashes, h)
	}
	mask := uint64(len(t.slots) - 1)
	t.at = t.at[:0]
	for i, h := range t.hashes {
		off, s := uint64(0), uint64(0)
		if i == 0 && t.ends[0] > 0 || i > 0 && t.ends[i] > t.ends[i-1] {
			for s = t.home(h); ; s = (s + 1) & mask {
				sl := &t.slots[s]
				if sl.off == 0 || sl.key == h {
					off = sl.off
					break
				}
			}
		}
		t.offs = append(t.offs, off)
		t.at = append(t.at, s)
	}
	start := int32(0)
	for i, off := range t.offs {
		key := t.pkey[start:t.ends[i]]
		start = t.ends[i]
		if off == 0 || string(t.keyAt(off)) == string(key) {
			continue
		}
		// Another key of the same hash: the rest of the probe.
		t.offs[i] = 0
		for s := (t.at[i] + 1) & mask; ; s = (s + 1) & mask {
			sl := &t.slots[s]
			if sl.off == 0 {
				break
			}
			if sl.key == t.hashes[i] && string(t.keyAt(sl.off)) == string(key) {
				t.offs[i] = sl.off
				break
			}
		}
	}
}

// recordSpan is how far past a record's start touch reads too: most
// records (a dimension table's row) are shorter.
const recordSpan = 48

// touch reads the first bytes of every record found, so that their
// cache misses overlap before the joined rows are built. Their sum is
// kept (touched): loads whose value nothing uses would be dropped.
func (t *hashTable) touch() {
	var sum byte
	last := uint64(t.used - 1)
	for _, off := range t.offs {
		if off != 0 {
			// A record of a few dozen bytes may span two cache lines.
			sum += t.arena[off] + t.arena[min(off+recordSpan, last)]
		}
	}
	t.touched += sum
}

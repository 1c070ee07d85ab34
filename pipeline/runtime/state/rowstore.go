package state

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
)

// RowStore keeps rows by int32 id, each encoded (row.AppendRow) in one
// byte arena. An operator that holds a row per key for a million keys
// (deduplication) would otherwise keep a million row slices and their
// strings alive, every one a pointer the garbage collector scans on each
// cycle: that scan was half of such a run's CPU. Here the state holds no
// pointer. Reading a row back decodes a copy.
//
// A row takes a block of its size rounded up to a size class (sizeClass:
// at most an eighth more). A row replaced by one that fits its block is
// written in place; otherwise its block goes on its class's free list,
// which the next row of that class takes, so rows that come and go (a
// deduplication's kept row replaced by the key's next, a window's) reuse
// the arena instead of appending to it. Free blocks that are half the
// arena (sizes that stopped coming) are reclaimed by a compaction.
//
// A large arena lives outside the Go heap (OffHeap): it grows without
// copying or zeroing what it holds, and the GC neither counts it toward
// its goal (which let a 1 GB arena cost 2 GB) nor keeps the old copy of
// a grown one until its next cycle.
//
// With a Layout (set before the first Put) the rows are encoded in it
// instead, which reads back without a type switch or a varint per
// number: for rows read again and again (an interval join's, once per
// match). Bytes is then the layout's encoding, for memory only; a
// checkpoint takes AppendEncoded's.
type RowStore struct {
	Layout *row.Layout
	// Churn: rows come and go all the time (a window's cache, most of it
	// replaced within the window). A compaction then leaves room for as
	// many bytes as are live and an eighth of the arena, so that the
	// blocks put until the next one grow nothing.
	Churn bool
	slots []RowSlot // by id
	buf   []byte
	// free heads each size class's list of free blocks: the offset of the
	// first plus one, 0 for none; a free block's first 8 bytes hold the
	// next one's the same way. freeBytes is their total size.
	free      [numSizeClasses]uint64
	freeBytes int
	n         int
	enc       []byte // Put's encoding of a row, before it has a block
	mem       *rowMem
	text      row.Text // the decoded rows' strings, with a Layout
	view      row.Row  // AppendEncoded's
}

// rowMem owns a RowStore's off-heap arena: the store is a value inside
// its operator, and copied with it (a restore builds a new operator and
// takes its state), so the GC's cleanup that unmaps the arena hangs on
// this object, which every copy points at, not on the store.
type rowMem struct{ heap *OffHeap }

// RowSlot is an id's row: n is its encoded length, 0 for no row; space
// is its block's size, what it may grow into in place.
type RowSlot struct {
	Off      uint64
	N, Space uint32
}

// Has reports whether id holds a row.
func (a *RowStore) Has(id int32) bool { return int(id) < len(a.slots) && a.slots[id].N != 0 }

// Len is the number of rows held.
func (a *RowStore) Len() int { return a.n }

// MemBytes is the memory the store's arrays hold (slots and encoded
// rows, free blocks included).
func (a *RowStore) MemBytes() int64 {
	return int64(cap(a.slots))*int64(unsafe.Sizeof(RowSlot{})) + int64(cap(a.buf))
}

// Put stores r as id's row, replacing any.
func (a *RowStore) Put(id int32, r row.Row) {
	for int(id) >= len(a.slots) {
		a.slots = append(a.slots, RowSlot{})
	}
	if a.Layout != nil {
		a.enc = a.Layout.Append(a.enc[:0], r)
	} else {
		a.enc = row.AppendRow(a.enc[:0], r)
	}
	n := len(a.enc)
	s := &a.slots[id]
	switch {
	case s.N != 0 && n <= int(s.Space):
		copy(a.buf[s.Off:], a.enc)
		s.N = uint32(n)
		return
	case s.N != 0:
		a.release(s.Off, int(s.Space))
	default:
		a.n++
	}
	off, size := a.block(n)
	copy(a.buf[off:], a.enc)
	*s = RowSlot{Off: off, N: uint32(n), Space: uint32(size)}
	a.compactIfSparse()
}

// block returns the offset and size of a block for n bytes: a free one
// of n's class, or a new one at the arena's end.
func (a *RowStore) block(n int) (uint64, int) {
	c, size := sizeClass(n)
	if head := a.free[c]; head != 0 {
		off := head - 1
		a.free[c] = binary.LittleEndian.Uint64(a.buf[off:])
		a.freeBytes -= size
		return off, size
	}
	end := len(a.buf)
	if end+size > cap(a.buf) {
		if a.mem == nil {
			a.mem = &rowMem{}
			a.mem.heap = NewOffHeap(a.mem)
		}
		a.buf = OffHeapReserve(a.mem.heap, a.buf, size)
	}
	a.buf = a.buf[:end+size]
	return uint64(end), size
}

// release puts the block at off of size bytes (a class's size) on its
// class's free list.
func (a *RowStore) release(off uint64, size int) {
	c, _ := sizeClass(size)
	binary.LittleEndian.PutUint64(a.buf[off:], a.free[c])
	a.free[c] = off + 1
	a.freeBytes += size
}

// Bytes is id's encoded row, a view valid until the next change.
func (a *RowStore) Bytes(id int32) []byte {
	s := a.slots[id]
	return a.buf[s.Off : s.Off+uint64(s.N)]
}

// Row decodes a copy of id's row.
func (a *RowStore) Row(id int32) row.Row {
	if a.Layout != nil {
		r := make(row.Row, a.Layout.Width())
		a.DecodeInto(r, id)
		return r
	}
	r, err := row.CopyRow(a.Bytes(id))
	if err != nil {
		// The bytes are the arena's own encoding: a failure is a bug.
		panic("rowStore: " + err.Error())
	}
	return r
}

// Remove drops id's row, if any.
func (a *RowStore) Remove(id int32) {
	if !a.Has(id) {
		return
	}
	s := &a.slots[id]
	a.release(s.Off, int(s.Space))
	*s = RowSlot{}
	a.n--
	a.compactIfSparse()
}

// compactIfSparse copies the live blocks into a new arena when the free
// ones are half of it (and at least 1 MiB): rows whose sizes no longer
// come leave blocks no Put takes.
func (a *RowStore) compactIfSparse() {
	if a.freeBytes < 1<<20 || a.freeBytes*2 < len(a.buf) {
		return
	}
	live := len(a.buf) - a.freeBytes
	room := len(a.buf) / 8
	if a.Churn {
		// The next compaction comes when the free bytes are half the
		// arena: when as many bytes as are live now were put, if as
		// many left; the eighth beyond is for the rows' sizes' spread.
		room += live
	}
	var heap *OffHeap
	if a.mem != nil {
		heap = a.mem.heap
	}
	out := OffHeapReserve(heap, []byte(nil), live+room)
	for i := range a.slots {
		s := &a.slots[i]
		if s.N == 0 {
			continue
		}
		off := len(out)
		out = append(out, a.buf[s.Off:s.Off+uint64(s.Space)]...) // within the room reserved
		s.Off = uint64(off)
	}
	OffHeapFree(heap, a.buf)
	a.buf, a.free, a.freeBytes = out, [numSizeClasses]uint64{}, 0
}

// Size classes: multiples of 8 bytes up to 128, then eight a doubling
// (each at most an eighth larger than the sizes it takes), up to 2^32.
const (
	smallClasses   = 16
	numSizeClasses = smallClasses + 8*(32-7)
)

// sizeClass returns the class of a block for n bytes and its size, n
// rounded up.
func sizeClass(n int) (int, int) {
	if n <= 8*smallClasses {
		c := max(n-1, 0) / 8
		return c, 8 * (c + 1)
	}
	k := bits.Len(uint(n-1)) - 1 // 2^k < n <= 2^(k+1), k >= 7
	step := 1 << (k - 3)
	sub := (n - 1<<k + step - 1) / step // 1..8
	return smallClasses + (k-7)*8 + sub - 1, 1<<k + sub*step
}

// DecodeInto decodes id's row into dst, which must have the row's width.
func (a *RowStore) DecodeInto(dst row.Row, id int32) {
	if a.Layout != nil {
		a.Layout.Decode(dst, a.Bytes(id), &a.text)
		return
	}
	DecodeRowInto(dst, a.Bytes(id))
}

// AppendEncoded appends id's row in row.AppendRow's encoding, whatever
// the store's: a checkpoint's bytes do not depend on the Layout.
func (a *RowStore) AppendEncoded(dst []byte, id int32) []byte {
	if a.Layout == nil {
		return append(dst, a.Bytes(id)...)
	}
	if len(a.view) != a.Layout.Width() {
		a.view = make(row.Row, a.Layout.Width())
	}
	a.Layout.Decode(a.view, a.Bytes(id), nil) // aliases the store: encoded at once
	dst = row.AppendRow(dst, a.view)
	clear(a.view)
	return dst
}

// DecodeRowInto decodes the row encoded in b (row.AppendRow), which the
// state wrote itself, into dst, which must have its width. Unlike
// row.CopyRow it allocates nothing for numbers: only a copy of each
// string value (row.DecodeRowText without a Text: a join keeps the rows,
// and a shared chunk would live as long as the longest kept of them).
func DecodeRowInto(dst row.Row, b []byte) {
	if err := row.DecodeRowText(dst, b, nil); err != nil {
		// The bytes are the state's own encoding: a failure is a bug.
		panic("state: " + err.Error())
	}
}

// CompactSlots copies the live bytes that slots point at (n > 0) from buf
// into a new arena of live bytes plus an eighth of buf to grow into, and
// points each slot at its copy, with no room to spare.
func CompactSlots[T any](buf []byte, live int, slots []T, slot func(*T) *RowSlot) []byte {
	return compactSlots(buf, live, len(buf)/8, slots, slot)
}

// compactSlots is CompactSlots with room bytes to grow into.
func compactSlots[T any](buf []byte, live, room int, slots []T, slot func(*T) *RowSlot) []byte {
	out := make([]byte, 0, live+room)
	for i := range slots {
		s := slot(&slots[i])
		if s.N == 0 {
			continue
		}
		off := len(out)
		out = append(out, buf[s.Off:s.Off+uint64(s.N)]...)
		s.Off, s.Space = uint64(off), s.N
	}
	return out
}

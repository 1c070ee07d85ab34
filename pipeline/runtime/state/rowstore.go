package state

import (
	"fmt"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
)

// RowStore keeps rows by int32 id, each encoded (row.AppendRow) in one
// byte slice. An operator that holds a row per key for a million keys
// (deduplication) would otherwise keep a million row slices and their
// strings alive, every one a pointer the garbage collector scans on each
// cycle: that scan was half of such a run's CPU. Here the state holds no
// pointer. Reading a row back decodes a copy (two allocations).
//
// A row that is replaced by one whose encoding fits its space is written
// in place; otherwise the old bytes are dead and the arena is compacted
// once they are half of it.
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
	// many bytes as are live and an eighth of the arena, so that the appends until the next one
	// grow nothing: with an eighth's room, the arena was copied again by
	// each growth of its slice (append's growth of a large slice is a
	// quarter), several copies per compaction. The arena's size is the
	// same: compaction comes when it is twice the live bytes.
	Churn bool
	slots []RowSlot // by id
	buf   []byte
	dead  int
	n     int
	text  row.Text // the decoded rows' strings, with a Layout
	view  row.Row  // AppendEncoded's
}

// RowSlot is an id's row: n is its encoded length, 0 for no row; space
// is what it may grow into in place.
type RowSlot struct {
	Off      uint64
	N, Space uint32
}

// Has reports whether id holds a row.
func (a *RowStore) Has(id int32) bool { return int(id) < len(a.slots) && a.slots[id].N != 0 }

// Len is the number of rows held.
func (a *RowStore) Len() int { return a.n }

// MemBytes is the memory the store's arrays hold (slots and encoded
// rows, dead bytes included until compaction).
func (a *RowStore) MemBytes() int64 {
	return int64(cap(a.slots))*int64(unsafe.Sizeof(RowSlot{})) + int64(cap(a.buf))
}

// Put stores r as id's row, replacing any.
func (a *RowStore) Put(id int32, r row.Row) {
	for int(id) >= len(a.slots) {
		a.slots = append(a.slots, RowSlot{})
	}
	s := &a.slots[id]
	end := len(a.buf)
	if a.Layout != nil {
		a.buf = a.Layout.Append(a.buf, r)
	} else {
		a.buf = row.AppendRow(a.buf, r)
	}
	n := len(a.buf) - end
	if s.N == 0 {
		a.n++
	} else if n <= int(s.Space) {
		copy(a.buf[s.Off:], a.buf[end:])
		a.buf = a.buf[:end]
		s.N = uint32(n)
		return
	} else {
		a.dead += int(s.Space)
	}
	*s = RowSlot{Off: uint64(end), N: uint32(n), Space: uint32(n)}
	a.compactIfSparse()
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
	a.dead += int(s.Space)
	*s = RowSlot{}
	a.n--
	a.compactIfSparse()
}

func (a *RowStore) compactIfSparse() {
	if a.dead < 1<<20 || a.dead*2 < len(a.buf) {
		return
	}
	live := len(a.buf) - a.dead
	room := len(a.buf) / 8
	if a.Churn {
		// The next compaction comes when the dead bytes are half the
		// arena: when as many bytes as are live now were put, if as
		// many left; the eighth beyond is for the rows' sizes' spread.
		room += live
	}
	buf := compactSlots(a.buf, live, room, a.slots, func(s *RowSlot) *RowSlot { return s })
	a.buf, a.dead = buf, 0
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
// string value.
func DecodeRowInto(dst row.Row, b []byte) {
	d := *row.NewDecoder(b)
	if n := d.Count(1); n != len(dst) {
		panic(fmt.Sprintf("state: a row of %d columns decoded into %d", n, len(dst)))
	}
	for i := range dst {
		dst[i] = d.Value()
	}
	if err := d.End(); err != nil {
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

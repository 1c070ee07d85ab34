package runtime

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// rowStore keeps rows by int32 id, each encoded (row.AppendRow) in one
// byte slice. An operator that holds a row per key for a million keys
// (deduplication) would otherwise keep a million row slices and their
// strings alive, every one a pointer the garbage collector scans on each
// cycle: that scan was half of such a run's CPU. Here the state holds no
// pointer. Reading a row back decodes a copy (two allocations).
//
// A row that is replaced by one whose encoding fits its space is written
// in place; otherwise the old bytes are dead and the arena is compacted
// once they are half of it.
type rowStore struct {
	slots []rowSlot // by id
	buf   []byte
	dead  int
	n     int
}

// rowSlot is an id's row: n is its encoded length, 0 for no row; space
// is what it may grow into in place.
type rowSlot struct {
	off      uint64
	n, space uint32
}

// has reports whether id holds a row.
func (a *rowStore) has(id int32) bool { return int(id) < len(a.slots) && a.slots[id].n != 0 }

// len is the number of rows held.
func (a *rowStore) len() int { return a.n }

// put stores r as id's row, replacing any.
func (a *rowStore) put(id int32, r row.Row) {
	for int(id) >= len(a.slots) {
		a.slots = append(a.slots, rowSlot{})
	}
	s := &a.slots[id]
	end := len(a.buf)
	a.buf = row.AppendRow(a.buf, r)
	n := len(a.buf) - end
	if s.n == 0 {
		a.n++
	} else if n <= int(s.space) {
		copy(a.buf[s.off:], a.buf[end:])
		a.buf = a.buf[:end]
		s.n = uint32(n)
		return
	} else {
		a.dead += int(s.space)
	}
	*s = rowSlot{off: uint64(end), n: uint32(n), space: uint32(n)}
	a.compactIfSparse()
}

// bytes is id's encoded row, a view valid until the next change.
func (a *rowStore) bytes(id int32) []byte {
	s := a.slots[id]
	return a.buf[s.off : s.off+uint64(s.n)]
}

// row decodes a copy of id's row.
func (a *rowStore) row(id int32) row.Row {
	r, err := row.CopyRow(a.bytes(id))
	if err != nil {
		// The bytes are the arena's own encoding: a failure is a bug.
		panic("rowStore: " + err.Error())
	}
	return r
}

// remove drops id's row, if any.
func (a *rowStore) remove(id int32) {
	if !a.has(id) {
		return
	}
	s := &a.slots[id]
	a.dead += int(s.space)
	*s = rowSlot{}
	a.n--
	a.compactIfSparse()
}

func (a *rowStore) compactIfSparse() {
	if a.dead < 1<<20 || a.dead*2 < len(a.buf) {
		return
	}
	buf := compactSlots(a.buf, len(a.buf)-a.dead, a.slots, func(s *rowSlot) *rowSlot { return s })
	a.buf, a.dead = buf, 0
}

// decodeInto decodes id's row into dst, which must have the row's width.
func (a *rowStore) decodeInto(dst row.Row, id int32) { decodeRowInto(dst, a.bytes(id)) }

// decodeRowInto decodes the row encoded in b (row.AppendRow), which the
// state wrote itself, into dst, which must have its width. Unlike
// row.CopyRow it allocates nothing for numbers: only a copy of each
// string value.
func decodeRowInto(dst row.Row, b []byte) {
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

// compactSlots copies the live bytes that slots point at (n > 0) from buf
// into a new arena of live bytes plus an eighth of buf to grow into, and
// points each slot at its copy, with no room to spare.
func compactSlots[T any](buf []byte, live int, slots []T, slot func(*T) *rowSlot) []byte {
	out := make([]byte, 0, live+len(buf)/8)
	for i := range slots {
		s := slot(&slots[i])
		if s.n == 0 {
			continue
		}
		off := len(out)
		out = append(out, buf[s.off:s.off+uint64(s.n)]...)
		s.off, s.space = uint64(off), s.n
	}
	return out
}

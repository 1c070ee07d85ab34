package runtime

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/etld/etld/pipeline/row"
)

// joinSide is one input's state of a regular join: its rows by join key,
// each distinct row with how many times it is there and, for the outer
// side of an outer join (the left side of a semi or anti join), with how
// many rows of the other side it matches (Flink's
// OuterJoinRecordStateView).
//
// Nothing in it is a pointer per row or per key: a join holding millions
// of rows as Go row slices (each with its strings and an entry struct)
// made the garbage collector scan all of them on every cycle, a quarter
// of a large join's CPU. Here the keys are in a keyIDs (key -> key id),
// the rows encoded in a rowStore by row id, each key's rows a circular
// doubly linked list over flat arrays, and a row is decoded only when it
// is emitted or joined.
//
// A side whose rows are retracted finds a row again by its identity (the
// unique key's value, or the whole row): idents maps the key id and the
// identity to the row id. An append-only side (JoinSpec's LeftAppendOnly)
// has no idents: each row is stored as it comes.
type joinSide struct {
	keys   []int
	unique []int
	all    []int
	// appendOnly: rows are stored without an identity; never with a
	// unique key or a TTL, which need one. Set before the first row.
	appendOnly bool

	index *keyIDs // join key -> key id
	// heads and nrows are by key id: the first row of the key's list
	// (-1 for a free id) and how many rows the list holds.
	heads []int32
	nrows []int32

	// idents maps a key id (4 bytes) followed by a row's identity to
	// its row id, which keyIDs hands out; nil on an append-only side,
	// which hands out row ids itself (nextRow, freeRows).
	idents   *keyIDs
	nextRow  int32
	freeRows []int32
	ents     []joinEnt // by row id
	store    rowStore  // by row id: the encoded row

	size       int64 // distinct rows held
	kbuf, ibuf []byte
	fbuf       []byte // dropRow's copy of a key

	// ttl is the state TTL by row id (join_ttl.go); onExpire, if set,
	// is told the count of each row it drops.
	ttl      ttlList
	onExpire func(count int64)
}

// joinEnt is a stored row's counts and its place in its key's list.
type joinEnt struct {
	count, assoc int32
	next, prev   int32
}

func newJoinSide(keys, unique []int, width int) *joinSide {
	all := make([]int, width)
	for i := range all {
		all[i] = i
	}
	return &joinSide{keys: keys, unique: unique, all: all, index: newKeyIDs()}
}

// key encodes r's join key into s.kbuf; null reports a NULL in it: such
// a row never matches (SQL's = is never true on NULL).
func (s *joinSide) key(r row.Row) (null bool) {
	for _, k := range s.keys {
		if r[k].IsNull() {
			return true
		}
	}
	s.kbuf = row.KeyOf(s.kbuf[:0], r, s.keys)
	return false
}

// find returns the id of key (another side's kbuf), if held.
func (s *joinSide) find(key []byte) (int32, bool) { return s.index.find(key) }

// keyID returns the id of the key in s.kbuf, adding it if absent.
func (s *joinSide) keyID() int32 {
	if kid, ok := s.index.find(s.kbuf); ok {
		return kid
	}
	kid, fresh := s.index.add(s.kbuf)
	if fresh {
		s.heads = append(s.heads, -1)
		s.nrows = append(s.nrows, 0)
	}
	return kid
}

// identOf encodes key id kid followed by r's identity into s.ibuf.
func (s *joinSide) identOf(kid int32, r row.Row) []byte {
	s.ibuf = binary.LittleEndian.AppendUint32(s.ibuf[:0], uint32(kid))
	if s.unique != nil {
		s.ibuf = row.KeyOf(s.ibuf, r, s.unique)
	} else {
		s.ibuf = row.KeyOf(s.ibuf, r, s.all)
	}
	return s.ibuf
}

// newRow returns a free row id.
func (s *joinSide) newRow() int32 {
	var rid int32
	if n := len(s.freeRows); n > 0 {
		rid, s.freeRows = s.freeRows[n-1], s.freeRows[:n-1]
	} else {
		rid = s.nextRow
		s.nextRow++
	}
	return rid
}

// link appends row rid, stored as r with the given counts, to key kid's
// list.
func (s *joinSide) link(kid, rid int32, r row.Row, assoc int32) {
	for int(rid) >= len(s.ents) {
		s.ents = append(s.ents, joinEnt{})
	}
	e := &s.ents[rid]
	e.count, e.assoc = 1, assoc
	if h := s.heads[kid]; h < 0 {
		s.heads[kid] = rid
		e.next, e.prev = rid, rid
	} else {
		tail := s.ents[h].prev
		e.prev, e.next = tail, h
		s.ents[tail].next = rid
		s.ents[h].prev = rid
	}
	s.nrows[kid]++
	s.store.put(rid, r)
	s.size++
}

// errJoinCount is a count past what a stored row can hold.
var errJoinCount = fmt.Errorf("join: more than %d copies of one row or matches of one row", math.MaxInt32)

// add stores r, whose key is in s.kbuf, with assoc matches.
func (s *joinSide) add(r row.Row, assoc int) error {
	if assoc > math.MaxInt32 {
		return errJoinCount
	}
	kid := s.keyID()
	if s.appendOnly {
		s.link(kid, s.newRow(), r, int32(assoc))
		return nil
	}
	if s.idents == nil {
		s.idents = newKeyIDs()
	}
	rid, ok := s.idents.find(s.identOf(kid, r))
	if ok && s.ttl.expired(rid) {
		s.dropRow(rid, true)
		kid = s.keyID() // the key may have gone with the row
		s.identOf(kid, r)
		ok = false
	}
	if ok {
		e := &s.ents[rid]
		if s.unique != nil {
			s.store.put(rid, r)
			e.count, e.assoc = 1, int32(assoc)
		} else if e.count == math.MaxInt32 {
			return errJoinCount
		} else {
			e.count++
		}
		s.ttl.touch(rid)
		return nil
	}
	rid, _ = s.idents.add(s.ibuf)
	s.link(kid, rid, r, int32(assoc))
	s.ttl.touch(rid)
	return nil
}

// remove takes one r, whose key is in s.kbuf, out of the side; a row
// that is not there (never seen, expired, or restored from before) is
// ignored, as Flink does.
func (s *joinSide) remove(r row.Row) {
	if s.idents == nil {
		return
	}
	kid, ok := s.index.find(s.kbuf)
	if !ok {
		return
	}
	rid, ok := s.idents.find(s.identOf(kid, r))
	if !ok {
		return
	}
	if s.ttl.expired(rid) {
		s.dropRow(rid, true)
		return
	}
	e := &s.ents[rid]
	if e.count--; e.count <= 0 || s.unique != nil {
		s.dropRow(rid, false)
		return
	}
	s.ttl.touch(rid)
}

// dropRow removes row rid of a side with idents; expired says the TTL
// dropped it (onExpire is told).
func (s *joinSide) dropRow(rid int32, expired bool) {
	ident := s.idents.bytes(rid)
	kid := int32(binary.LittleEndian.Uint32(ident))
	s.fbuf = append(s.fbuf[:0], ident...) // a copy: drop clears the entry bytes views
	s.idents.drop(s.fbuf)
	s.unlink(kid, rid)
	if expired && s.onExpire != nil {
		s.onExpire(int64(s.ents[rid].count))
	}
	s.ttl.drop(rid)
}

// unlink takes row rid out of key kid's list and the store, and the key
// out of the index when it has no row left.
func (s *joinSide) unlink(kid, rid int32) {
	e := &s.ents[rid]
	if e.next == rid {
		s.heads[kid] = -1
	} else {
		s.ents[e.prev].next = e.next
		s.ents[e.next].prev = e.prev
		if s.heads[kid] == rid {
			s.heads[kid] = e.next
		}
	}
	s.nrows[kid]--
	s.store.remove(rid)
	s.size--
	if s.idents == nil {
		s.freeRows = append(s.freeRows, rid)
	}
	if s.heads[kid] < 0 {
		s.fbuf = append(s.fbuf[:0], s.index.bytes(kid)...)
		s.index.drop(s.fbuf)
	}
}

// rows yields the row ids of key kid (of any side's index: see find),
// in the order they were added. The row being yielded may be dropped; no
// other may.
func (s *joinSide) rows(kid int32) func(yield func(int32) bool) {
	return func(yield func(int32) bool) {
		rid, n := s.heads[kid], s.nrows[kid]
		for ; n > 0; n-- {
			next := s.ents[rid].next
			if !yield(rid) {
				return
			}
			rid = next
		}
	}
}

// eachRow yields every stored row id with its key id.
func (s *joinSide) eachRow(yield func(kid, rid int32) bool) {
	for kid := range s.heads {
		if s.heads[kid] < 0 {
			continue
		}
		for rid := range s.rows(int32(kid)) {
			if !yield(int32(kid), rid) {
				return
			}
		}
	}
}

// decodeInto decodes row rid's values into dst, which has its width.
func (s *joinSide) decodeInto(dst row.Row, rid int32) {
	s.store.decodeInto(dst, rid)
}

// row decodes a copy of row rid.
func (s *joinSide) row(rid int32) row.Row { return s.store.row(rid) }

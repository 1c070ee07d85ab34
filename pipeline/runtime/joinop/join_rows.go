package joinop

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
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
// of a large join's CPU. Here the keys are in a state.KeyIDs (key -> key
// id), the rows encoded in a state.RowStore by row id, each key's rows a
// circular doubly linked list over flat arrays, and a row is decoded
// only when it is emitted or joined.
//
// A side whose rows are retracted finds a row again by its identity (the
// unique key's value, or the whole row): idents maps the key id and the
// identity to the row id. An append-only side (JoinSpec's LeftAppendOnly)
// has no idents and no row ids: each key's rows are a chain of blocks of
// bytes in its pages (joinRun, join_runs.go), so that joining a key's
// rows reads a few places of memory rather than three per row (its
// entry, its store slot, its bytes): on a large state every one of those
// is a cache and TLB miss.
//
// A stored row is named by a rowRef: its row id, or on an append-only
// side its place in the pages (runRef).
type joinSide struct {
	keys []int
	// nullSafe, by key, marks a key compared with IS NOT DISTINCT FROM:
	// NULL matches NULL (nil: every key is compared with =).
	nullSafe []bool
	unique   []int
	all      []int
	// appendOnly: rows are stored without an identity; never with a
	// unique key or a TTL, which need one. Set before the first row.
	appendOnly bool
	// noMatches: the side keeps no match count per row (it is no outer
	// side: nothing reads them), so an append-only run spends no bytes
	// on one. Set before the first row.
	noMatches bool
	// layout encodes an append-only side's rows in its runs: by the
	// input's column types, without AppendRow's tag and varint per
	// value (a kept row is decoded for every row of the other side it
	// matches). A snapshot still writes AppendRow's encoding (appendRow).
	layout *row.Layout

	// index gives each join key an id; both sides of a join share it,
	// so that a change finds its key once for the probe of the other
	// side and its own state (peer is the other side, nil for a side
	// of its own). A key leaves it when neither side has a row for it.
	index *joinIndex
	peer  *joinSide
	// lists are by key id: each key's list of rows.
	lists []joinList

	// idents maps a key id (4 bytes) followed by a row's identity to
	// its row id, which idents hands out; nil on an append-only side,
	// which keeps its rows in runs instead (join_runs.go).
	idents *state.KeyIDs
	ents   []joinEnt      // by row id
	store  state.RowStore // by row id: the encoded row

	// An append-only side's rows: runs by key id, in runPages.
	runs     []joinRun
	runPages runPages

	size int64 // distinct rows held
	// The key of the row key last saw: kval its value for an index by
	// value (joinIndex.ints), kbuf its bytes for the other.
	kval       uint64
	kbuf, ibuf []byte
	fbuf       []byte   // dropRow's copy of a key
	rbuf       []byte   // appendRun's encoding
	view       row.Row  // appendRow's decoded row
	text       row.Text // the strings of the rows row decodes

	// ttl is the state TTL by row id (join_ttl.go); onExpire, if set,
	// is told the count of each row it drops.
	ttl      state.TTLList
	onExpire func(count int64)
}

// memBytes is the memory of the side's own arrays (its index only when
// it owns it: the left side of a pair, or a side of its own).
func (s *joinSide) memBytes(ownIndex bool) int64 {
	n := int64(cap(s.lists))*int64(unsafe.Sizeof(joinList{})) + int64(cap(s.ents))*int64(unsafe.Sizeof(joinEnt{}))
	n += s.store.MemBytes() + int64(cap(s.runs))*int64(unsafe.Sizeof(joinRun{})) + s.runPages.bytes()
	if s.idents != nil {
		n += s.idents.MemBytes()
	}
	if ownIndex && s.index != nil {
		n += s.index.memBytes()
	}
	return n
}

// joinEnt is a stored row's counts and its place in its key's list.
type joinEnt struct {
	count, assoc int32
	next, prev   int32
}

// joinList is a key's rows on a side that has row ids: the first (-1
// for none) and how many.
type joinList struct{ head, n int32 }

// rowRef names a stored row: a row id, or on an append-only side the
// row's place in the pages (runRef).
type rowRef int64

// newJoinSide returns an empty side whose keys are in index; types are
// its columns' types (nil when not known: every value is then stored
// with its type).
func newJoinSide(keys, unique []int, width int, types []row.TypeID, index *joinIndex) *joinSide {
	all := make([]int, width)
	for i := range all {
		all[i] = i
	}
	if len(types) != width {
		types = make([]row.TypeID, width)
	}
	return &joinSide{keys: keys, unique: unique, all: all, index: index, layout: row.NewLayout(types)}
}

// pairJoinSides makes a and b the two sides of one join, sharing a's
// index.
func pairJoinSides(a, b *joinSide) {
	b.index = a.index
	a.peer, b.peer = b, a
}

// key sets the key of r (s.cur: its value in s.kval for an index by
// value, else its bytes in s.kbuf); null reports a NULL in a key
// compared with =: such a row never matches (SQL's = is never true on
// NULL). A null-safe key's NULL is a value like any other.
func (s *joinSide) key(r row.Row) (null bool) {
	if x := s.index; x.ints != nil {
		v := r[s.keys[0]]
		if plainInt(v, x.typ) {
			s.kval = uint64(v.Int64())
			return false
		}
		if v.IsNull() {
			return true // an index by value has no null-safe key
		}
		x.toBytes() // a value of another form: the index by bytes from now on
	}
	for i, k := range s.keys {
		if r[k].IsNull() && (s.nullSafe == nil || !s.nullSafe[i]) {
			return true
		}
	}
	s.kbuf = row.KeyOf(s.kbuf[:0], r, s.keys)
	return false
}

// cur is the key of the row key last saw, as the index takes it.
func (s *joinSide) cur() joinKey { return joinKey{v: s.kval, b: s.kbuf} }

// keyID returns the id of the current key (cur), adding it if absent.
func (s *joinSide) keyID() int32 {
	kid, ok := s.index.find(s.cur())
	if !ok {
		kid = s.index.add(s.cur())
	}
	s.ensure(kid)
	return kid
}

// ensure grows the side's arrays by key id to hold kid: the index is
// shared, so its ids may run ahead of them.
//
// The arrays are off the Go heap (on huge pages where the kernel gives
// them): a change reads its key's entry at random, and on a million keys
// a read of a heap array of 4 KiB pages also missed the TLB.
func (s *joinSide) ensure(kid int32) {
	if s.appendOnly {
		if int(kid) >= len(s.runs) {
			s.runs = state.OffHeapGrow(s.offHeap(), s.runs, int(kid)+1)
		}
		return
	}
	if n := len(s.lists); int(kid) >= n {
		s.lists = state.OffHeapGrow(s.offHeap(), s.lists, int(kid)+1)
		for i := n; i < len(s.lists); i++ {
			s.lists[i].head = -1
		}
	}
}

// offHeap is the side's off-heap memory, made at its first use.
func (s *joinSide) offHeap() *state.OffHeap {
	rp := &s.runPages
	if rp.mem == nil && rp.pages == nil {
		rp.cur, rp.mem = -1, state.NewOffHeap(s)
	}
	return rp.mem
}

// holds reports whether the side has a row under key id kid.
func (s *joinSide) holds(kid int32) bool {
	if s.appendOnly {
		return int(kid) < len(s.runs) && s.runs[kid].rows > 0
	}
	return int(kid) < len(s.lists) && s.lists[kid].n > 0
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

// link appends row rid, stored as r with the given counts, to key kid's
// list.
func (s *joinSide) link(kid, rid int32, r row.Row, assoc int32) {
	for int(rid) >= len(s.ents) {
		s.ents = append(s.ents, joinEnt{})
	}
	e := &s.ents[rid]
	e.count, e.assoc = 1, assoc
	l := &s.lists[kid]
	if h := l.head; h < 0 {
		l.head = rid
		e.next, e.prev = rid, rid
	} else {
		tail := s.ents[h].prev
		e.prev, e.next = tail, h
		s.ents[tail].next = rid
		s.ents[h].prev = rid
	}
	l.n++
	s.store.Put(rid, r)
	s.size++
}

// errJoinCount is a count past what a stored row can hold.
var errJoinCount = fmt.Errorf("more than %d copies of one row or matches of one row", math.MaxInt32)

// add stores r, whose key is the current one (cur), with assoc matches.
func (s *joinSide) add(r row.Row, assoc int) error {
	return s.addAt(s.keyID(), r, assoc)
}

// addAt is add of a row whose key has id kid (s.ensure'd).
func (s *joinSide) addAt(kid int32, r row.Row, assoc int) error {
	if assoc > math.MaxInt32 {
		return errJoinCount
	}
	if s.appendOnly {
		s.appendRun(kid, r, int32(assoc))
		return nil
	}
	if s.idents == nil {
		s.idents = state.NewKeyIDs()
	}
	rid, ok := s.idents.Find(s.identOf(kid, r))
	if ok && s.ttl.Expired(rid) {
		s.dropRow(rid, true)
		kid = s.keyID() // the key may have gone with the row
		s.identOf(kid, r)
		ok = false
	}
	if ok {
		e := &s.ents[rid]
		if s.unique != nil {
			s.store.Put(rid, r)
			e.count, e.assoc = 1, int32(assoc)
		} else if e.count == math.MaxInt32 {
			return errJoinCount
		} else {
			e.count++
		}
		s.ttl.Touch(rid)
		return nil
	}
	rid, _ = s.idents.Add(s.ibuf)
	s.link(kid, rid, r, int32(assoc))
	s.ttl.Touch(rid)
	return nil
}

// remove takes one r, whose key is the current one (cur), out of the side; a row
// that is not there (never seen, expired, or restored from before) is
// ignored, as Flink does.
func (s *joinSide) remove(r row.Row) {
	if s.idents == nil {
		return
	}
	kid, ok := s.index.find(s.cur())
	if !ok {
		return
	}
	s.removeAt(kid, r)
}

// removeAt is remove of a row whose key has id kid.
func (s *joinSide) removeAt(kid int32, r row.Row) {
	if s.idents == nil {
		return
	}
	rid, ok := s.idents.Find(s.identOf(kid, r))
	if !ok {
		return
	}
	if s.ttl.Expired(rid) {
		s.dropRow(rid, true)
		return
	}
	e := &s.ents[rid]
	if e.count--; e.count <= 0 || s.unique != nil {
		s.dropRow(rid, false)
		return
	}
	s.ttl.Touch(rid)
}

// dropRow removes row rid of a side with idents; expired says the TTL
// dropped it (onExpire is told).
func (s *joinSide) dropRow(rid int32, expired bool) {
	ident := s.idents.Bytes(rid)
	kid := int32(binary.LittleEndian.Uint32(ident))
	s.fbuf = append(s.fbuf[:0], ident...) // a copy: drop clears the entry bytes views
	s.idents.Drop(s.fbuf)
	s.unlink(kid, rid)
	if expired && s.onExpire != nil {
		s.onExpire(int64(s.ents[rid].count))
	}
	s.ttl.Drop(rid)
}

// unlink takes row rid out of key kid's list and the store, and the key
// out of the index when it has no row left.
func (s *joinSide) unlink(kid, rid int32) {
	e := &s.ents[rid]
	l := &s.lists[kid]
	if e.next == rid {
		l.head = -1
	} else {
		s.ents[e.prev].next = e.next
		s.ents[e.next].prev = e.prev
		if l.head == rid {
			l.head = e.next
		}
	}
	l.n--
	s.store.Remove(rid)
	s.size--
	if l.n == 0 && (s.peer == nil || !s.peer.holds(kid)) {
		s.index.drop(kid)
	}
}

// rows yields the rows of key kid (of any side's index: see find), in
// the order they were added. The row being yielded may be dropped; no
// other may, and none added.
func (s *joinSide) rows(kid int32) func(yield func(rowRef) bool) {
	return func(yield func(rowRef) bool) {
		for it := s.iter(kid); ; {
			ref, ok := it.row()
			if !ok || !yield(ref) {
				return
			}
		}
	}
}

// rowIter walks the rows of one key as rows yields them, without the
// closures of an iterator function, which the join's hot loop would
// allocate per change (its body escapes into the function it calls).
type rowIter struct {
	s *joinSide
	// An append-only side's: the row at, the end of its block's rows,
	// the next block, and the last block with its bytes of rows.
	at, end, next, tail uint64
	tailUsed            uint32
	head                int
	// A side with row ids: the next row, and the rows left.
	rid, n int32
}

// iter returns an iterator over the rows of key kid, in the order they
// were added. The row next returned last may be dropped; no other may,
// and none added.
func (s *joinSide) iter(kid int32) rowIter {
	it := rowIter{s: s}
	switch {
	case !s.holds(kid):
		it.next = noBlock
	case s.appendOnly:
		run := s.runs[kid]
		it.tail, it.tailUsed, it.head = run.tail, run.used, s.runHead()
		it.enter(run.head)
	default:
		it.rid, it.n = s.lists[kid].head, s.lists[kid].n
	}
	return it
}

// enter starts on the rows of block b.
func (it *rowIter) enter(b uint64) {
	hdr := it.s.runPages.at(b)
	used := it.tailUsed
	if it.next = binary.LittleEndian.Uint64(hdr); b != it.tail {
		used = binary.LittleEndian.Uint32(hdr[8:])
	}
	it.at = b + blockHead
	it.end = it.at + uint64(used)
}

// row returns the next row, false after the last.
func (it *rowIter) row() (rowRef, bool) {
	if it.s.appendOnly {
		for it.at >= it.end {
			if it.next == noBlock {
				return 0, false
			}
			it.enter(it.next)
		}
		ref := rowRef(it.at)
		n, w := binary.Uvarint(it.s.runPages.at(it.at)[it.head:])
		it.at += uint64(it.head+w) + n
		return ref, true
	}
	if it.n <= 0 {
		return 0, false
	}
	ref := rowRef(it.rid)
	it.rid = it.s.ents[it.rid].next
	it.n--
	return ref, true
}

// eachRow yields every stored row with its key id.
func (s *joinSide) eachRow(yield func(kid int32, ref rowRef) bool) {
	keys := len(s.lists)
	if s.appendOnly {
		keys = len(s.runs)
	}
	for kid := range int32(keys) {
		for ref := range s.rows(kid) {
			if !yield(kid, ref) {
				return
			}
		}
	}
}

// counts returns a stored row's count and match count.
func (s *joinSide) counts(ref rowRef) (count, assoc int32) {
	if s.appendOnly {
		if s.noMatches {
			return 1, 0
		}
		return 1, int32(binary.LittleEndian.Uint32(s.runPages.at(uint64(ref))))
	}
	e := &s.ents[ref]
	return e.count, e.assoc
}

// setAssoc sets a stored row's match count.
func (s *joinSide) setAssoc(ref rowRef, assoc int32) {
	if s.appendOnly {
		if !s.noMatches {
			binary.LittleEndian.PutUint32(s.runPages.at(uint64(ref)), uint32(assoc))
		}
		return
	}
	s.ents[ref].assoc = assoc
}

// bytes is a stored row's encoding, a view valid until the next change:
// s.layout's on an append-only side, else row.AppendRow's.
func (s *joinSide) bytes(ref rowRef) []byte {
	if s.appendOnly {
		b := s.runPages.at(uint64(ref))[s.runHead():]
		n, w := binary.Uvarint(b)
		return b[w : w+int(n)]
	}
	return s.store.Bytes(int32(ref))
}

// appendRow appends a stored row's row.AppendRow encoding to dst, as a
// snapshot holds it.
func (s *joinSide) appendRow(dst []byte, ref rowRef) []byte {
	if !s.appendOnly {
		return append(dst, s.store.Bytes(int32(ref))...)
	}
	if len(s.view) != len(s.all) {
		s.view = make(row.Row, len(s.all))
	}
	s.layout.Decode(s.view, s.bytes(ref), nil)
	dst = row.AppendRow(dst, s.view)
	clear(s.view) // its strings point into the pages
	return dst
}

// decodeInto decodes a stored row's values into dst, which has its
// width; text holds the copies of its strings (row.Text).
func (s *joinSide) decodeInto(dst row.Row, ref rowRef, text *row.Text) {
	if s.appendOnly {
		s.layout.Decode(dst, s.bytes(ref), text)
		return
	}
	state.DecodeRowInto(dst, s.bytes(ref))
}

// row decodes a copy of a stored row, its strings in s.text's chunks.
func (s *joinSide) row(ref rowRef) row.Row {
	r := make(row.Row, len(s.all))
	s.decodeInto(r, ref, &s.text)
	return r
}

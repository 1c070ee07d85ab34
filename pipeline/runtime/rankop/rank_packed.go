package rankop

import (
	"cmp"
	"encoding/binary"
	"math"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// packedParts is the state of a streaming AppendFast Top-N (the
// strategy of an insert-only input, Nexmark's q19): each partition's
// kept rows encoded in one byte arena, nothing in it a pointer. Held as
// Partition's groups of row slices, the rows and their strings were
// pointers the garbage collector scanned on every cycle: a quarter of
// q19's CPU, for a state of ten rows per auction.
//
// A partition's region is its rows in rank order, each
//
//	flags  1 byte: packFirst when it starts a group of equal sort keys
//	type   1 byte: the first ORDER BY column's type (its number beside
//	       it, compared without decoding the row when both sides are of
//	       one integer or floating type; the row is decoded for the
//	       other columns only when the first ones tie)
//	key    8 bytes, little-endian: the first sort value's payload
//	row    a uvarint length and the row in its row.Layout encoding
//
// A change rewrites the partition's region (ten rows, a few hundred
// bytes): in place when it fits, else at the arena's end, the old one
// dead until the arena is compacted (state.CompactSlots). Rows are
// decoded only to be emitted, snapshotted, dumped, or compared on a key
// that is not one number. The snapshot is Partition's layout, unchanged.
type packedParts struct {
	layout *row.Layout // by the first row's value types (nil before it)
	slots  []packSlot  // by partition id
	buf    []byte
	mem    *state.OffHeap // buf's mapping, once large
	dead   int

	ents []packEnt // the partition being changed, decoded
	// insAt is where in the arena the fresh row of ents goes: the start
	// of the row it displaces, or the region's end.
	insAt int
	nbuf  []byte   // its new region
	rbuf  []byte   // the incoming row's encoding
	text  row.Text // the strings of rows decoded for output
	vals  []row.Value
	view  row.Row // a row decoded for a comparison (aliases the arena)
}

// packSlot is a partition's region in the arena (N bytes, 0 for none)
// and its count of rows; live marks an id in use.
type packSlot struct {
	state.RowSlot
	rows int32
	live bool
}

// packEnt is one row of a region: where its encoding is (in the arena
// at off, or the incoming row's rbuf when fresh; its header at at) and
// its sort key.
type packEnt struct {
	first, fresh bool
	typ          row.TypeID
	key          uint64
	at, off, n   int32
}

const (
	packFirst = 1
	packHead  = 10
)

func (pk *packedParts) slot(id int32) *packSlot {
	for int(id) >= len(pk.slots) {
		pk.slots = append(pk.slots, packSlot{})
	}
	return &pk.slots[id]
}

// rowsOf is the count of rows partition id holds.
func (pk *packedParts) rowsOf(id int32) int { return int(pk.slots[id].rows) }

// drop forgets partition id's rows.
func (pk *packedParts) drop(id int32) {
	s := &pk.slots[id]
	pk.dead += int(s.Space)
	*s = packSlot{}
	pk.compactIfSparse()
}

// load decodes partition id's region into pk.ents.
func (pk *packedParts) load(id int32) []packEnt {
	s := pk.slots[id]
	pk.ents = pk.ents[:0]
	off := int(s.Off)
	for range s.rows {
		b := pk.buf[off:]
		n, w := binary.Uvarint(b[packHead:])
		pk.ents = append(pk.ents, packEnt{
			first: b[0]&packFirst != 0, typ: row.TypeID(b[1]), key: binary.LittleEndian.Uint64(b[2:]),
			at: int32(off), off: int32(off + packHead + w), n: int32(n),
		})
		off += packHead + w + int(n)
	}
	return pk.ents
}

// bytesOf is e's encoded row.
func (pk *packedParts) bytesOf(e *packEnt) []byte {
	if e.fresh {
		return pk.rbuf
	}
	return pk.buf[e.off : e.off+e.n]
}

// store writes ents as partition id's region.
func (pk *packedParts) store(id int32, ents []packEnt, end int) {
	if pk.storeInPlace(id, ents) {
		return
	}
	pk.nbuf = pk.nbuf[:0]
	for i := range ents {
		e := &ents[i]
		var flags byte
		if e.first {
			flags = packFirst
		}
		pk.nbuf = append(pk.nbuf, flags, byte(e.typ))
		pk.nbuf = binary.LittleEndian.AppendUint64(pk.nbuf, e.key)
		b := pk.bytesOf(e)
		pk.nbuf = binary.AppendUvarint(pk.nbuf, uint64(len(b)))
		pk.nbuf = append(pk.nbuf, b...)
	}
	s := pk.slot(id)
	s.rows, s.live = int32(len(ents)), true
	n := len(pk.nbuf)
	if n <= int(s.Space) {
		copy(pk.buf[s.Off:], pk.nbuf)
		s.N = uint32(n)
		return
	}
	pk.dead += int(s.Space)
	// Room for the rows up to End at this size per row: a partition
	// filling its top is then rewritten in place, not once per row at
	// the arena's end (each leaving a dead region behind).
	space := n
	if len(ents) > 0 && len(ents) < end {
		space += n / len(ents) * (end - len(ents))
	}
	pk.place(s, pk.nbuf, space)
	pk.compactIfSparse()
}

// storeInPlace is store when ents are the region's rows in order with
// one fresh row inserted at pk.insAt (and perhaps the last ones cut)
// and fit the region's room: the rows after the fresh one move by one
// copy and the fresh one is written between, the rows before it stay.
// It reports false, writing nothing, otherwise.
func (pk *packedParts) storeInPlace(id int32, ents []packEnt) bool {
	pos := -1
	for i := range ents {
		if ents[i].fresh {
			pos = i
			break
		}
	}
	s := &pk.slots[id]
	if pos < 0 || s.Space == 0 {
		return false
	}
	at, tail := pk.insAt, pk.insAt
	if pos+1 < len(ents) {
		last := &ents[len(ents)-1]
		tail = int(last.off + last.n)
	}
	var lb [binary.MaxVarintLen64]byte
	lw := binary.PutUvarint(lb[:], uint64(len(pk.rbuf)))
	fs := packHead + lw + len(pk.rbuf)
	n := at - int(s.Off) + fs + tail - at
	if n > int(s.Space) {
		return false
	}
	copy(pk.buf[at+fs:], pk.buf[at:tail])
	b := pk.buf[at : at+fs]
	e := &ents[pos]
	b[0] = 0
	if e.first {
		b[0] = packFirst
	}
	b[1] = byte(e.typ)
	binary.LittleEndian.PutUint64(b[2:], e.key)
	copy(b[packHead:], lb[:lw])
	copy(b[packHead+lw:], pk.rbuf)
	if pos+1 < len(ents) {
		// The row after the fresh one may now start a group.
		f := &pk.buf[at+fs]
		*f &^= packFirst
		if ents[pos+1].first {
			*f |= packFirst
		}
	}
	s.N, s.rows = uint32(n), int32(len(ents))
	return true
}

// place writes region at the arena's end as s's, with room for space
// bytes. The arena is mapped off the Go heap once large (state.OffHeap):
// as a heap array it counted toward the GC's goal, and each doubling
// left the old copy behind until a collection.
func (pk *packedParts) place(s *packSlot, region []byte, space int) {
	if pk.mem == nil {
		pk.mem = state.NewOffHeap(pk)
	}
	at := len(pk.buf)
	if n := at + space; n <= cap(pk.buf) {
		// The room past the region is never read before it is written:
		// no need to clear it (OffHeapGrow would, touching every page).
		pk.buf = pk.buf[:n]
	} else {
		pk.buf = state.OffHeapGrow(pk.mem, pk.buf, n)
	}
	copy(pk.buf[at:], region)
	s.RowSlot = state.RowSlot{Off: uint64(at), N: uint32(len(region)), Space: uint32(space)}
}

func (pk *packedParts) compactIfSparse() {
	if pk.dead < 1<<20 || pk.dead*2 < len(pk.buf) {
		return
	}
	old := pk.buf
	pk.buf = state.CompactSlots(pk.buf, len(pk.buf)-pk.dead, pk.slots, func(s *packSlot) *state.RowSlot { return &s.RowSlot })
	state.OffHeapFree(pk.mem, old)
	pk.dead = 0
}

// encode sets pk.rbuf to r's encoding, the layout made from r's types
// when it is the first row (a value of another type later is stored
// with its type: row.Layout's fallback).
func (pk *packedParts) encode(r row.Row) {
	if pk.layout == nil {
		ids := make([]row.TypeID, len(r))
		for i, v := range r {
			ids[i] = v.Type()
		}
		pk.layout = row.NewLayout(ids)
	}
	pk.rbuf = pk.layout.Append(pk.rbuf[:0], r)
}

// outRow is a new row of n values for output, cut from a slab: a row
// emitted is never written again, so slabs are handed out, not reused,
// and an output row costs no allocation of its own.
func (pk *packedParts) outRow(n int) row.Row {
	if len(pk.vals) < n {
		pk.vals = make([]row.Value, max(256, n))
	}
	r := pk.vals[:n:n]
	pk.vals = pk.vals[n:]
	return r
}

// decode returns a copy of e's row that stays valid (its strings in
// pk.text), for output, with extra values after it left for the
// caller (the rank number).
func (pk *packedParts) decode(e *packEnt, extra int) row.Row {
	r := pk.outRow(pk.layout.Width() + extra)
	pk.layout.Decode(r, pk.bytesOf(e), &pk.text)
	return r
}

// peek decodes e's row into pk.view, whose strings alias the arena: for
// a comparison, done before the arena changes.
func (pk *packedParts) peek(e *packEnt) row.Row {
	w := pk.layout.Width()
	if cap(pk.view) < w {
		pk.view = make(row.Row, w)
	}
	pk.view = pk.view[:w]
	pk.layout.Decode(pk.view, pk.bytesOf(e), nil)
	return pk.view
}

// sortKeyOf is the type and payload of r's first sort value.
func sortKeyOf(keys []SortKey, r row.Row) (row.TypeID, uint64) {
	v := r[keys[0].Col]
	switch v.Type() {
	case row.Float, row.Double:
		return v.Type(), math.Float64bits(v.Float64())
	}
	if n, ok := intKey(v); ok {
		return v.Type(), uint64(n)
	}
	return v.Type(), 0
}

func fastInt(t row.TypeID) bool {
	switch t {
	case row.Int, row.BigInt, row.Date, row.Timestamp, row.TimestampLTZ:
		return true
	}
	return false
}

// compareEnt is CompareRows(keys, r, e's row), for r whose first sort
// value is (typ, key): on the numbers when both are one numeric type or
// NULL, else on e's decoded row; with several ORDER BY columns, e's row
// is decoded only when the first values tie (most rows of a top ordered
// by a number then a time differ in the number).
func (pk *packedParts) compareEnt(keys []SortKey, r row.Row, typ row.TypeID, key uint64, e *packEnt) int {
	k := keys[0]
	an, bn := typ == row.Null, e.typ == row.Null
	c := 0
	switch {
	case an && bn:
	case an || bn:
		if an == k.NullsFirst {
			return -1
		}
		return 1
	case typ != e.typ:
		return CompareRows(keys, r, pk.peek(e))
	case fastInt(typ):
		c = cmp.Compare(int64(key), int64(e.key))
	case typ == row.Float || typ == row.Double:
		c = cmp.Compare(math.Float64frombits(key), math.Float64frombits(e.key))
	default:
		return CompareRows(keys, r, pk.peek(e))
	}
	if c != 0 {
		if k.Desc {
			c = -c
		}
		return c
	}
	if len(keys) == 1 {
		return 0
	}
	return CompareRows(keys[1:], r, pk.peek(e))
}

// appendPacked is appendRow on partition id's packed rows: the same
// changes, in the same order (rank.go's appendRow, insertWithRank and
// insertWithoutRank, on a flat list of rows with group starts marked).
func (t *TopN) appendPacked(id int32, r row.Row) {
	pk := t.pack
	keys := t.spec.Order
	end := int(t.spec.End)
	ents := pk.load(id)
	typ, key := sortKeyOf(keys, r)
	if len(ents) >= end && len(ents) > 0 {
		lf := len(ents) - 1
		for lf > 0 && !ents[lf].first {
			lf--
		}
		if pk.compareEnt(keys, r, typ, key, &ents[lf]) >= 0 {
			return
		}
	}
	// r goes after the rows it ties with: the upper bound.
	lo, hi := 0, len(ents)
	for lo < hi {
		m := (lo + hi) / 2
		if pk.compareEnt(keys, r, typ, key, &ents[m]) >= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	pos := lo
	first := pos == 0 || pk.compareEnt(keys, r, typ, key, &ents[pos-1]) != 0
	if pos < len(ents) && first {
		// r ranks before ents[pos], not tied: ents[pos] starts a group
		// already (its predecessor's key is r's or lower).
		ents[pos].first = true
	}
	pk.encode(r)
	pk.insAt = int(pk.slots[id].Off) + int(pk.slots[id].N)
	if pos < len(ents) {
		pk.insAt = int(ents[pos].at)
	}
	ents = append(ents, packEnt{})
	copy(ents[pos+1:], ents[pos:])
	ents[pos] = packEnt{first: first, fresh: true, typ: typ, key: key}
	pk.ents = ents
	t.rows++
	if t.spec.numbered() {
		t.emitPackedWithRank(ents, pos, r)
		if len(ents) > end {
			// Keep the groups up to the one holding rank End+1's row,
			// whole (insertWithRank's walk stops after it).
			k := end + 1
			for k < len(ents) && !ents[k].first {
				k++
			}
			t.rows -= int64(len(ents) - k)
			ents = ents[:k]
		}
		pk.store(id, ents, end)
		return
	}
	if len(ents) > end {
		li := len(ents) - 1
		var last row.Row
		if li != pos {
			last = t.packedOut(&ents[li], nil, 0)
		}
		ents = ents[:li]
		t.rows--
		pk.store(id, ents, end)
		if li == pos || sameRow(last[:len(r)], r) {
			return
		}
		if t.spec.End == 1 {
			t.out.Emit(row.UpdateBefore, last)
			t.out.Emit(row.UpdateAfter, t.packedOut(nil, r, 0))
			return
		}
		t.out.Emit(row.Delete, last)
	} else {
		pk.store(id, ents, end)
	}
	t.out.Emit(row.Insert, t.packedOut(nil, r, 0))
}

// packedGroups decodes partition id's rows as Partition's groups (for a
// snapshot and a dump); text nil aliases the arena.
func (pk *packedParts) packedGroups(id int32, text *row.Text) [][]row.Row {
	ents := pk.load(id)
	var groups [][]row.Row
	for i := range ents {
		r := make(row.Row, pk.layout.Width())
		pk.layout.Decode(r, pk.bytesOf(&ents[i]), text)
		if ents[i].first || len(groups) == 0 {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], r)
	}
	return groups
}

// storePartition packs p's rows as partition id's (a restore).
func (t *TopN) storePartition(id int32, p *Partition) {
	pk := t.pack
	var ents []packEnt
	var enc []byte
	type span struct{ at, n int }
	var spans []span
	for _, g := range p.Groups {
		for j, r := range g {
			pk.encode(r)
			typ, key := sortKeyOf(t.spec.Order, r)
			spans = append(spans, span{len(enc), len(pk.rbuf)})
			enc = append(enc, pk.rbuf...)
			ents = append(ents, packEnt{first: j == 0, typ: typ, key: key})
		}
	}
	region := make([]byte, 0, len(enc)+len(ents)*(packHead+2))
	for i, e := range ents {
		var flags byte
		if e.first {
			flags = packFirst
		}
		region = append(region, flags, byte(e.typ))
		region = binary.LittleEndian.AppendUint64(region, e.key)
		b := enc[spans[i].at : spans[i].at+spans[i].n]
		region = binary.AppendUvarint(region, uint64(len(b)))
		region = append(region, b...)
	}
	s := pk.slot(id)
	pk.dead += int(s.Space)
	pk.place(s, region, len(region))
	s.rows, s.live = int32(len(ents)), true
}

// setPackedFloor is setFloor on partition id's packed rows.
func (t *TopN) setPackedFloor(id int32) {
	t.floorSet[id] = false
	pk := t.pack
	if pk.rowsOf(id) < int(t.spec.End) {
		return
	}
	ents := pk.load(id)
	if len(ents) == 0 {
		return
	}
	lf := len(ents) - 1
	for lf > 0 && !ents[lf].first {
		lf--
	}
	if fastInt(ents[lf].typ) {
		t.floor[id], t.floorSet[id] = int64(ents[lf].key), true
	}
}

// liveIDs is the ids of the partitions held.
func (t *TopN) liveIDs() []int32 {
	ids := make([]int32, 0, t.keys.Len())
	if t.pack != nil {
		for id, s := range t.pack.slots {
			if s.live {
				ids = append(ids, int32(id))
			}
		}
		return ids
	}
	for id, p := range t.parts {
		if p != nil {
			ids = append(ids, int32(id))
		}
	}
	return ids
}

// groupsOf is partition id's rows in their groups; unless keep, packed
// rows' strings alias the arena (for a caller done with them before the
// next change).
func (t *TopN) groupsOf(id int32, keep bool) [][]row.Row {
	if t.pack != nil {
		var text *row.Text
		if keep {
			text = &row.Text{}
		}
		return t.pack.packedGroups(id, text)
	}
	return t.parts[id].Groups
}

// appendPackedChange is change's AppendFast insert on packed partitions.
func (t *TopN) appendPackedChange(id int32, r row.Row) error {
	if t.floorCol >= 0 && t.turnedAway(id, r) {
		return nil
	}
	t.appendPacked(id, r)
	if t.floorCol >= 0 {
		t.setPackedFloor(id)
	}
	if t.pack.rowsOf(id) == 0 {
		t.kbuf = row.KeyOf(t.kbuf[:0], r, t.spec.Partition)
		t.dropPart(id)
		t.ttl.Drop(string(t.kbuf))
	}
	return nil
}

package joinop

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// joinIndex gives each join key of a regular join an id, which both
// sides share (joinSide.index): a change finds its key once for the
// probe of the other side and for its own state.
//
// A single key of one integer-like type on both sides (intKeyType: a
// BIGINT, INT, DATE, TIMESTAMP ... key compared with =) is held by
// value in ints: a key is hashed and compared as the 64-bit payload
// (state.IntIDs), not encoded (row.KeyOf), hashed as bytes and compared
// in a second array, which on a million keys was a third of a streaming
// join's CPU. Any other key (STRING, composite, null-safe) is held by
// its bytes in ids. A value of the key's column in another form than
// the column's type (a widened column's restored rows) turns the index
// to bytes for good (toBytes), the ids kept: the two forms never hold
// the same key apart. Keys match as row.KeyOf encodes them in both.
type joinIndex struct {
	ids  *state.KeyIDs // keys by their bytes; nil while ints holds them
	ints *state.IntIDs // a single integer-like key by value, or nil
	typ  row.TypeID    // ints' key type
	kb   []byte        // bytes' key, and a dropped key's copy
}

// joinKey is a change's join key as its side's index takes it: the
// integer's payload v (an index of ints) or the bytes b (row.KeyOf).
type joinKey struct {
	v uint64
	b []byte
}

// newJoinIndex returns the empty shared index of a join of spec.
func newJoinIndex(spec *JoinSpec) *joinIndex {
	lk, rk := spec.LeftKeys, spec.RightKeys
	if len(lk) == 1 && len(rk) == 1 && len(spec.LeftTypes) > lk[0] && len(spec.RightTypes) > rk[0] &&
		spec.LeftTypes[lk[0]] == spec.RightTypes[rk[0]] && intKeyType(spec.LeftTypes[lk[0]]) &&
		(spec.NullSafe == nil || !spec.NullSafe[0]) {
		return &joinIndex{ints: state.NewIntIDs(), typ: spec.LeftTypes[lk[0]]}
	}
	return newBytesIndex()
}

// newBytesIndex returns an empty index of keys by their bytes.
func newBytesIndex() *joinIndex { return &joinIndex{ids: state.NewKeyIDs()} }

// find returns k's id, if held.
func (x *joinIndex) find(k joinKey) (int32, bool) {
	if x.ints != nil {
		return x.ints.Find(k.v)
	}
	return x.ids.Find(k.b)
}

// add inserts k, which must be absent, and returns its id.
func (x *joinIndex) add(k joinKey) int32 {
	if x.ints != nil {
		id, _ := x.ints.Add(k.v)
		return id
	}
	id, _ := x.ids.Add(k.b)
	return id
}

// has reports whether id holds a key.
func (x *joinIndex) has(kid int32) bool {
	if x.ints != nil {
		return x.ints.Has(kid)
	}
	return x.ids.Has(kid)
}

// drop removes the key of id kid, freeing the id.
func (x *joinIndex) drop(kid int32) {
	if x.ints != nil {
		x.ints.Drop(x.ints.Key(kid))
		return
	}
	x.kb = append(x.kb[:0], x.ids.Bytes(kid)...) // a copy: Drop clears the entry Bytes views
	x.ids.Drop(x.kb)
}

// bytes returns the key of id kid as row.KeyOf encodes it (what the
// keyed split hashes to a key group), a view valid until the next call.
func (x *joinIndex) bytes(kid int32) []byte {
	if x.ints != nil {
		x.kb = intKeyBytes(x.kb[:0], x.typ, x.ints.Key(kid))
		return x.kb
	}
	return x.ids.Bytes(kid)
}

// intKeyBytes appends row.AppendKey's encoding of the value of type typ
// (intKeyType) whose payload is v and scale 0: its type, its scale, its
// payload (TestJoinIntKeyBytes holds it to row.KeyOf).
func intKeyBytes(dst []byte, typ row.TypeID, v uint64) []byte {
	dst = append(dst, byte(typ), 0)
	return binary.LittleEndian.AppendUint64(dst, v)
}

// len is the number of keys held.
func (x *joinIndex) len() int {
	if x.ints != nil {
		return x.ints.Len()
	}
	return x.ids.Len()
}

// memBytes is the index's memory.
func (x *joinIndex) memBytes() int64 {
	if x.ints != nil {
		return x.ints.MemBytes()
	}
	return x.ids.MemBytes()
}

// toBytes moves the keys of ints to ids, each under its id.
func (x *joinIndex) toBytes() {
	if x.ints == nil {
		return
	}
	type held struct {
		v  uint64
		id int32
	}
	var all []held
	for v, id := range x.ints.Each {
		all = append(all, held{v, id})
	}
	// In id order: KeyIDs.AddID frees the ids skipped, each at the end
	// of its free list.
	slices.SortFunc(all, func(a, b held) int { return cmp.Compare(a.id, b.id) })
	ids := state.NewKeyIDs()
	for _, h := range all {
		x.kb = intKeyBytes(x.kb[:0], x.typ, h.v)
		ids.AddID(x.kb, h.id)
	}
	x.ints.Release()
	x.ids, x.ints = ids, nil
}

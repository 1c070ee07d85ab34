package aggop

import (
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// A GROUP BY of one integer column over an insert-only input, in batch
// mode or streaming with mini-batch, keeps its keys in the integer-key
// cache alone (intKeys, key to slot) and in lazyKeys (slot
// to key), not in the key index: for a new key the index cost a probe
// that missed, the key's encoding and hash, an insert (two more random
// lines: the index's bucket and the key's entry) and the index's
// growth, rehashing every key at each doubling, all for keys it served
// no lookup of, as the cache answered them. At millions of keys (one
// new key every other row) that was a third of the aggregation's time,
// and the index and its entries took about 37 bytes a key where
// lazyKeys takes 8.
//
// Snapshots and key groups encode each slot's key from lazyKeys, the
// bytes the index would hold (slotKey), and leave the lazy mode on: a
// streaming job checkpoints every few seconds. A state dump and the
// row-by-row path (a state TTL, a retraction) read the index: each of
// those first calls settle, which inserts the lazy keys in slot order
// (as a restore does) and leaves the lazy mode for good; what they see
// is what an index built all along holds. A key the cache does not
// take (NULL, every key NULL in a batch) settles too. Finish and a
// mini-batch's flush emit the keys from lazyKeys, the values the index
// would have decoded.
//
// The lazy mode holds while every slot was allocated in order (a slot
// freed and reused would break lazyKeys' numbering; an insert-only
// aggregate frees none) and nothing else happened: it starts with the
// operator and ends at the first settle or restore (a restore builds
// the index from the snapshot's keys).

// settle puts the lazy keys into the index and leaves the lazy mode.
func (g *GroupAgg) settle() {
	if !g.lazy {
		return
	}
	g.lazy = false
	keys := g.lazyKeys
	defer g.dropLazyKeys()
	if len(keys) == 0 {
		return
	}
	g.index.Reset(len(keys))
	r := make(row.Row, g.keys[0]+1)
	for id, k := range keys {
		r[g.keys[0]] = g.ints.value(k)
		g.kbuf = g.appendKey(g.kbuf[:0], r)
		g.index.Insert(g.kbuf, int32(id))
	}
}

// dropLazyKeys frees lazyKeys.
func (g *GroupAgg) dropLazyKeys() {
	state.OffHeapFree(g.mem, g.lazyKeys)
	g.lazyKeys = nil
}

// unsettle goes back to the lazy mode after a restore, when the
// operator could have kept its keys lazy up to the snapshot: an
// integer-key cache, no state TTL, no free slot, and every key one
// integer of one type. The keys go into the cache and lazyKeys, in slot
// order, and the index is emptied. A state that does not qualify keeps
// its index, as before.
func (g *GroupAgg) unsettle() {
	n := int(g.store.Slots)
	if g.ints == nil || g.lazy || g.ttl.On() || len(g.store.Free) > 0 || n == 0 || g.index.Len() != n {
		return
	}
	keys := state.OffHeapMake[int64](g.mem, n)
	var typ row.TypeID
	for id := range int32(n) {
		kv, err := g.keyValues(id)
		if err != nil {
			state.OffHeapFree(g.mem, keys)
			return
		}
		v := kv[0]
		if id == 0 {
			typ = v.Type()
		}
		if v.Type() != typ || typ != row.BigInt && typ != row.Int {
			state.OffHeapFree(g.mem, keys)
			return
		}
		keys[id] = v.Int64()
	}
	for id, k := range keys {
		if typ == row.Int {
			g.ints.add(row.IntValue(int32(k)), int32(id))
		} else {
			g.ints.add(row.BigIntValue(k), int32(id))
		}
	}
	g.index.Reset(0)
	g.lazy, g.lazyKeys = true, keys
}

// lazySlots assigns slots to the changes of a batch the cache missed
// (ids[i] < 0), in order, adding keys to the cache and lazyKeys. When a
// change's key is one the cache does not take, or a slot would not be
// the next one, it settles and returns false: the index's way then
// takes the changes still without a slot (those before have theirs).
func (g *GroupAgg) lazySlots(changes []row.Change) bool {
	b := &g.batch
	col := g.keys[0]
	for i := range changes {
		if b.ids[i] >= 0 {
			continue
		}
		v := changes[i].Row[col]
		if id := g.ints.find(v); id >= 0 {
			b.ids[i] = id // added by an earlier change of the batch
			continue
		}
		if !g.ints.caches(v) || len(g.store.Free) > 0 || int(g.store.Slots) != len(g.lazyKeys) {
			g.settle()
			return false
		}
		id := g.store.Alloc("")
		g.lazyKeys = state.OffHeapGrow(g.mem, g.lazyKeys, len(g.lazyKeys)+1)
		g.lazyKeys[id] = v.Int64()
		g.ints.add(v, id)
		b.ids[i], b.fresh[i] = id, true
	}
	return true
}

// value is the key k as the column's values are: the type the cache
// took its first key of.
func (c *intKeys) value(k int64) row.Value {
	if c.typ == row.Int {
		return row.IntValue(int32(k))
	}
	return row.BigIntValue(k)
}

package joinop

import (
	"encoding/binary"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// The interval join's cache, without a pointer per row or per key (as
// joinSide, join_rows.go): Flink keeps per key and side a map from time
// to the rows of that time; here the keys are in a state.KeyIDs, each
// key's rows of a side a circular doubly linked list over flat arrays
// with each row's time and whether it joined, the rows encoded in a
// state.RowStore and decoded only when joined or emitted. Flink iterates
// a key's whole map on every arrival, and so does the list.

// ijKey is one key's state: each side's rows (head -1: none) and cleanup
// timer (0: none), and whether the key has a NULL (its rows never match).
type ijKey struct {
	head, n [2]int32
	timer   [2]int64
	null    bool
	used    bool // the id holds a key
	// inInts: the key is in the join's ints as ival.
	inInts bool
	ival   uint64
	// idle: the key holds nothing (forget); listed: it is in the join's
	// list of idle keys (it may have come back since).
	idle, listed bool
}

// ijEnt is a cached row: its time, whether it joined at least once (an
// outer side's row that never did is emitted padded when it is dropped),
// and its key's list.
//
// head is, when hasHead, the first bytes of the row's encoding, enough
// to decode the columns of it the join emits (IntervalJoin.read): a
// match reads the row from here, beside its time, rather than from the
// store (two more cache misses, the store's slot and its bytes). The
// state is the row in the store either way.
type ijEnt struct {
	at         int64
	head       uint64
	next, prev int32
	emitted    bool
	hasHead    bool
}

// ijSide is one side's cached rows by row id.
type ijSide struct {
	ents  []ijEnt
	store state.RowStore
	free  []int32
}

func (s *ijSide) newRow() int32 {
	if n := len(s.free); n > 0 {
		rid := s.free[n-1]
		s.free = s.free[:n-1]
		return rid
	}
	s.ents = append(s.ents, ijEnt{})
	return int32(len(s.ents) - 1)
}

// keyOf returns the id of r's key (side s's key columns), adding it.
func (j *IntervalJoin) keyOf(s int, r row.Row) int32 {
	idx := j.spec.LeftKeys
	if s == 1 {
		idx = j.spec.RightKeys
	}
	if j.intKey {
		if v := r[idx[0]]; plainInt(v, j.keyType) {
			k := uint64(v.Int64())
			if kid, ok := j.ints.Find(k); ok {
				return kid
			}
			j.kbuf = row.KeyOf(j.kbuf[:0], r, idx)
			kid := j.keyID(j.kbuf, false)
			j.ints.Put(k, kid)
			j.keys[kid].inInts, j.keys[kid].ival = true, k
			return kid
		}
	}
	null := false
	for _, i := range idx {
		null = null || r[i].IsNull()
	}
	j.kbuf = row.KeyOf(j.kbuf[:0], r, idx)
	return j.keyID(j.kbuf, null)
}

// keyID returns key's id, adding it with the given NULL flag if absent.
func (j *IntervalJoin) keyID(key []byte, null bool) int32 {
	if kid, ok := j.index.Find(key); ok {
		return kid
	}
	kid, fresh := j.index.Add(key)
	if fresh {
		j.keys = append(j.keys, ijKey{})
	}
	j.keys[kid] = ijKey{head: [2]int32{-1, -1}, null: null, used: true}
	return kid
}

// cache appends r, of time at, to side s of key kid.
func (j *IntervalJoin) cache(kid int32, s int, r row.Row, at int64, emitted bool) {
	side := &j.sides[s]
	rid := side.newRow()
	side.store.Put(rid, r)
	e := &side.ents[rid]
	e.at, e.emitted, e.hasHead = at, emitted, false
	if n := j.read[s]; n > 0 {
		b := side.store.Bytes(rid)
		if m := side.store.Layout.Size(b, n); m <= 8 {
			var h [8]byte
			copy(h[:], b[:m])
			e.head, e.hasHead = binary.LittleEndian.Uint64(h[:]), true
		}
	}
	k := &j.keys[kid]
	if h := k.head[s]; h < 0 {
		k.head[s] = rid
		e.next, e.prev = rid, rid
	} else {
		tail := side.ents[h].prev
		e.prev, e.next = tail, h
		side.ents[tail].next = rid
		side.ents[h].prev = rid
	}
	k.n[s]++
	j.size++
}

// uncache removes row rid from side s of key kid.
func (j *IntervalJoin) uncache(kid int32, s int, rid int32) {
	side := &j.sides[s]
	e := &side.ents[rid]
	k := &j.keys[kid]
	if e.next == rid {
		k.head[s] = -1
	} else {
		side.ents[e.prev].next = e.next
		side.ents[e.next].prev = e.prev
		if k.head[s] == rid {
			k.head[s] = e.next
		}
	}
	k.n[s]--
	side.store.Remove(rid)
	side.free = append(side.free, rid)
	j.size--
}

// rows yields the row ids of side s of key kid in the order they were
// cached; the row being yielded may be removed, no other may.
func (j *IntervalJoin) rows(kid int32, s int) func(yield func(int32) bool) {
	return func(yield func(int32) bool) {
		k := &j.keys[kid]
		rid, n := k.head[s], k.n[s]
		for ; n > 0; n-- {
			next := j.sides[s].ents[rid].next
			if !yield(rid) {
				return
			}
			rid = next
		}
	}
}

// forget marks a key that holds nothing idle: it stays in the index
// (and ints) for a while, as a key that empties often comes back (a
// key's rows a few minutes apart, its window shorter), and dropping it
// and adding it again was a hash, a removal and an insertion each way.
// Idle keys are not state: snapshots, key groups and dumps leave them
// out (they hold nothing). When they are as many as the keys that hold
// rows (and at least idleSweep), those still idle are dropped.
func (j *IntervalJoin) forget(kid int32) {
	k := &j.keys[kid]
	if k.idle || k.n != [2]int32{} || k.timer != [2]int64{} {
		return
	}
	k.idle = true
	j.idleN++
	if !k.listed {
		k.listed = true
		j.idle = append(j.idle, kid)
	}
	if j.idleN >= idleSweep && 2*j.idleN >= j.index.Len() {
		j.sweepIdle()
	}
}

// idleSweep is the fewest idle keys sweepIdle drops at once.
const idleSweep = 1 << 12

// revive takes idle key kid back into use.
func (j *IntervalJoin) revive(kid int32) {
	if k := &j.keys[kid]; k.idle {
		k.idle = false
		j.idleN--
	}
}

// sweepIdle drops the keys still idle.
func (j *IntervalJoin) sweepIdle() {
	for _, kid := range j.idle {
		k := &j.keys[kid]
		k.listed = false
		if !k.idle {
			continue
		}
		if k.inInts {
			j.ints.Del(k.ival)
		}
		j.fbuf = append(j.fbuf[:0], j.index.Bytes(kid)...) // a copy: drop clears the entry bytes views
		j.index.Drop(j.fbuf)
		*k = ijKey{}
	}
	j.idle, j.idleN = j.idle[:0], 0
}

// heldKeys is the number of keys that hold rows or timers (not idle).
func (j *IntervalJoin) heldKeys() int { return j.index.Len() - j.idleN }

package aggop

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Batch mode over an insert-only input (the common bounded GROUP BY)
// folds a whole input batch in passes instead of row by row: validate
// every change, encode and hash every key, find every slot, then apply
// each aggregate to all the rows in a tight loop of its own kind. The
// lookups of one batch are independent of each other, so the CPU
// overlaps their cache misses (the key index, the entries and the
// accumulators are megabytes at 100k keys), and an aggregate's dispatch
// is paid once per batch instead of once per row. Nothing is emitted
// before Finish, and each aggregate's state is its own, so the result,
// the slot order (first seen) and the state equal the row-by-row fold's;
// on a bad change the changes before it are applied and its error is
// the same (groupagg_batch_test.go holds the two paths together).

// The same passes fold a streaming mini-batch's input (groupagg_minibatch.go),
// which emits only at its flush: the keys a batch touches are noted in
// order before its fold, so each key's result before the batch is taken
// first, as row by row.

// batchScratch is processBatch's per-batch arrays, kept between batches.
type batchScratch struct {
	keys   []byte   // the batch's encoded keys, back to back
	ends   []int32  // end of change i's key in keys
	hashes []uint32 // the index's hash of change i's key
	ids    []int32  // change i's slot
	fresh  []bool   // change i added its key's slot
	// miss and found: slotsOfInts's changes the cache missed, and their
	// slots in the index.
	miss, found []int32
	// added is a bit per hash (addedBit) of the keys slotsOf added in
	// the batch so far.
	added []uint64
}

// addedBits empties added for a batch of n changes: eight to sixteen
// bits a change, so that a new key finds its bit set by another key
// one time in eight at most.
func (b *batchScratch) addedBits(n int) []uint64 {
	words := 1 << bits.Len(uint(n>>3))
	b.added = growTo(b.added, words)
	clear(b.added)
	return b.added
}

// addedBit is the word and the bit of hash h in added.
func addedBit(added []uint64, h uint32) (int, uint64) {
	i := int(h) & (len(added)<<6 - 1)
	return i >> 6, 1 << (i & 63)
}

// Vectorized reports whether Process folds batches in passes: an
// insert-only input in batch mode or with mini-batch, but not under a
// state TTL (a lookup there may find an expired key).
func (g *GroupAgg) Vectorized() bool {
	return g.opt.InsertOnly && !g.RowByRow && (g.opt.Batch || (g.opt.MiniBatch && !g.ttl.On()))
}

// ReleasesInput implements InputReleaser: the vectorized passes fold a
// batch's rows into the slots and keep none of them (a key's columns are
// decoded from the index, values kept are detached copies); row by row,
// a retraction that empties a key keeps its row for the -D.
func (g *GroupAgg) ReleasesInput() bool { return g.Vectorized() }

// processBatch is Process for vectorized operators.
func (g *GroupAgg) processBatch(in *row.Batch) error {
	changes := in.Changes
	bad := g.firstBad(changes)
	g.foldBatch(changes[:bad])
	if bad < len(changes) {
		return g.badChange(in, bad)
	}
	return nil
}

// badChange is the error of change bad of in, which firstBad refused.
func (g *GroupAgg) badChange(in *row.Batch, bad int) error {
	c := &in.Changes[bad]
	err := g.checkInsert(c.Kind, c.Row)
	if err == nil { // firstBad and checkInsert disagree: a bug
		err = fmt.Errorf("change %d failed a check that passes row by row", bad)
	}
	return operator.ChangeError("group aggregate", in, bad, err)
}

// firstBad returns the index of the first change checkInsert refuses, or
// len(changes): the checks of checkInsert, one column at a time.
func (g *GroupAgg) firstBad(changes []row.Change) int {
	bad := len(changes)
	for i := range changes {
		if c := &changes[i]; len(c.Row) < g.width || !c.Kind.IsAdd() {
			bad = i
			break
		}
	}
	return g.store.FirstBad(changes[:bad])
}

// argCheckedBefore reports whether an aggregate before aggs[i] takes
// the same argument column of the same type, not a DECIMAL (whose check
// depends on the aggregate): firstBadArg would refuse the same changes.
func (s *Store) argCheckedBefore(i int) bool {
	c := s.Aggs[i].call
	if c.ArgType.ID == row.Decimal {
		return false
	}
	for _, b := range s.Aggs[:i] {
		if b.kind != accRows && b.call.Arg == c.Arg && b.call.ArgType.ID == c.ArgType.ID {
			return true
		}
	}
	return false
}

// firstBadArg is the index of the first change whose argument checkArg
// refuses, or that has no such column, or len(changes).
func (a *aggSlot) firstBadArg(changes []row.Change) int {
	arg, id := a.call.Arg, a.call.ArgType.ID
	for i := range changes {
		r := changes[i].Row
		if arg >= len(r) {
			return i
		}
		v := r[arg]
		if v.IsNull() || (v.Type() == id && id != row.Decimal) {
			continue
		}
		if a.checkArg(v) != nil {
			return i
		}
	}
	return len(changes)
}

// checkInsert is slotOf's validation: the same checks, the same errors.
func (g *GroupAgg) checkInsert(k row.Kind, r row.Row) error {
	if len(r) < g.width {
		return errWidth(len(r), g.width)
	}
	if !k.IsAdd() {
		return errInsertOnly(k)
	}
	return g.store.Check(r)
}

// foldBatch accumulates changes, all valid inserts.
func (g *GroupAgg) foldBatch(changes []row.Change) {
	g.store.foldInserts(g.slotsOf(changes), changes)
}

// slotsOf returns the slot of each change's key (changes: valid
// inserts), adding the keys not there yet; g.batch.fresh[i] says that
// change i added its key. The result is scratch, valid until the next
// call.
func (g *GroupAgg) slotsOf(changes []row.Change) []int32 {
	if g.ints != nil && g.ints.fits(changes, g.keys[0]) {
		return g.slotsOfInts(changes)
	}
	if len(changes) > 0 {
		g.settle() // NULL keys alone: the index's way
	}
	n := len(changes)
	b := &g.batch
	b.fresh = growTo(b.fresh, n)
	clear(b.fresh)
	if n == 0 {
		return b.ids[:0]
	}
	b.ids = growTo(b.ids, n)
	var keys []byte
	var ends []int32
	var hashes []uint32
	var missed bool
	if p := g.pre; p != nil {
		// Encoded and hashed by the keyed split (ProcessKeys).
		keys, ends, hashes = p.Bytes, p.Ends[:n], p.Hashes[:n]
		missed = g.index.FindAllHashed(keys, ends, hashes, b.ids)
	} else {
		// Room after the keys: the index reads a short key's 16 bytes
		// in place (state.KeyTable.FindAll).
		b.keys, b.ends = slices.Grow(b.keys[:0], len(b.keys)+16), b.ends[:0]
		for i := range changes {
			b.keys = g.appendKey(b.keys, changes[i].Row)
			b.ends = append(b.ends, int32(len(b.keys)))
		}
		b.hashes = growTo(b.hashes, n)
		keys, ends, hashes = b.keys, b.ends, b.hashes
		missed = g.index.FindAll(keys, ends, hashes, b.ids)
	}
	// A key not found is new, or was added by an earlier change of this
	// batch: look again in order, and add it. Only a key whose hash's
	// bit an earlier one set can be in the index now: the others (most,
	// when the keys are mostly new) are added with no second probe.
	if missed {
		added := b.addedBits(n)
		start := int32(0)
		for i, end := range ends {
			if b.ids[i] < 0 {
				h := hashes[i]
				w, bit := addedBit(added, h)
				if added[w]&bit == 0 {
					b.ids[i], b.fresh[i] = g.newSlot(keys[start:end], h), true
				} else {
					b.ids[i], b.fresh[i] = g.slotOrNew(keys[start:end], h)
				}
				added[w] |= bit
			}
			start = end
		}
	}
	return b.ids[:n]
}

// slotsOfInts is slotsOf through the integer-key cache (intKeys): a
// change whose key it holds costs one lookup; the others take the
// index's way, in order (a key may be added by an earlier change of the
// batch), and are cached.
func (g *GroupAgg) slotsOfInts(changes []row.Change) []int32 {
	n := len(changes)
	b := &g.batch
	b.fresh = growTo(b.fresh, n)
	clear(b.fresh)
	b.ids = growTo(b.ids, n)
	col := g.keys[0]
	missed := false
	for i := range changes {
		id := g.ints.find(changes[i].Row[col])
		b.ids[i] = id
		missed = missed || id < 0
	}
	if !missed || g.lazy && g.lazySlots(changes) {
		return b.ids[:n]
	}
	// The changes the cache missed (new keys, mostly, at millions of
	// keys) go to the index as slotsOf's do: their keys encoded and
	// probed all at once, so that the index's cache misses overlap, then
	// added in order (a key may be added by an earlier change).
	miss := b.miss[:0]
	b.keys, b.ends = slices.Grow(b.keys[:0], len(b.keys)+16), b.ends[:0]
	for i := range changes {
		if b.ids[i] < 0 {
			miss = append(miss, int32(i))
			b.keys = g.appendKey(b.keys, changes[i].Row)
			b.ends = append(b.ends, int32(len(b.keys)))
		}
	}
	b.miss = miss
	m := len(miss)
	b.hashes, b.found = growTo(b.hashes, m), growTo(b.found, m)
	g.index.FindAll(b.keys, b.ends, b.hashes, b.found)
	start := int32(0)
	for j, i := range miss {
		end := b.ends[j]
		v := changes[i].Row[col]
		switch id := b.found[j]; {
		case id >= 0:
			b.ids[i] = id
			if g.ints.find(v) < 0 { // not added by an earlier change
				g.ints.add(v, id)
			}
		default:
			if id := g.ints.find(v); id >= 0 {
				b.ids[i] = id // added by an earlier change of the batch
				break
			}
			if g.ints.caches(v) {
				// Not in the index (FindAll), nor added by an earlier
				// change, which the cache would hold: no second probe.
				b.ids[i], b.fresh[i] = g.newSlot(b.keys[start:end], b.hashes[j]), true
			} else {
				b.ids[i], b.fresh[i] = g.slotOrNew(b.keys[start:end], b.hashes[j])
			}
			g.ints.add(v, b.ids[i])
		}
		start = end
	}
	return b.ids[:n]
}

// slotOrNew returns the slot of key, of hash h, adding one for a key the
// index does not hold (fresh).
func (g *GroupAgg) slotOrNew(key []byte, h uint32) (id int32, fresh bool) {
	if id, ok := g.index.FindHashed(key, h); ok {
		return id, false
	}
	return g.newSlot(key, h), true
}

// newSlot adds key, of hash h, which the index does not hold, and
// returns its new slot.
func (g *GroupAgg) newSlot(key []byte, h uint32) int32 {
	id := g.store.Alloc("")
	g.index.InsertHashed(key, id, h)
	return id
}

// growTo returns s with length n, its contents not kept.
func growTo[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// foldInserts accumulates changes[i].Row, an insert, into slot ids[i],
// aggregate by aggregate: the common kinds in loops of their own, the
// others through step.
func (s *Store) foldInserts(ids []int32, changes []row.Change) {
	nums, w := s.nums, s.numW
	for _, id := range ids {
		nums[int(id)*w]++
	}
	for i := range s.Aggs {
		a := &s.Aggs[i]
		if a.kind == accRows || a.set >= 0 {
			continue
		}
		if a.call.HasFilter || a.dist >= 0 || a.call.KeepNulls {
			// step reads the FILTER, counts DISTINCT values and keeps
			// ARRAY_AGG's NULLs.
			for j, id := range ids {
				s.step(id, a, nums[int(id)*w:int(id+1)*w], changes[j].Row, true)
			}
			continue
		}
		arg := a.call.Arg
		switch a.kind {
		case accCount:
			for j, id := range ids {
				if !changes[j].Row[arg].IsNull() {
					nums[int(id)*w+a.num]++
				}
			}
		case accInt:
			for j, id := range ids {
				if v := changes[j].Row[arg]; !v.IsNull() {
					p := nums[int(id)*w+a.num : int(id)*w+a.num+2]
					p[0] += v.Int64() // wraps as Java's long arithmetic
					p[1]++
				}
			}
		case accWord:
			t := a.call.ArgType.ID
			for j, id := range ids {
				if v := changes[j].Row[arg]; !v.IsNull() {
					s.setWord(id, a, nums[int(id)*w:int(id+1)*w], wordOf(t, v))
				}
			}
		default:
			for j, id := range ids {
				if v := changes[j].Row[arg]; !v.IsNull() {
					s.apply(id, a, nums[int(id)*w:int(id+1)*w], v, true)
				}
			}
		}
	}
	if s.deferring {
		s.logSets(ids, changes)
		if !s.anyDirect() {
			return
		}
	}
	if len(s.sets) > 0 {
		for lo := 0; lo < len(ids); lo += touchChunk {
			hi := min(lo+touchChunk, len(ids))
			if s.nstr > 0 {
				s.touchStrSets(ids[lo:hi], changes[lo:hi])
			}
			for j := lo; j < hi; j++ {
				s.setsStep(ids[j], nums[int(ids[j])*w:int(ids[j]+1)*w], changes[j].Row, true, s.deferring)
			}
		}
	}
}

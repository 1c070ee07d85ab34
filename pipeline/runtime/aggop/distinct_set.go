package aggop

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
)

// Distinct sets: the DISTINCT aggregates of a store over one argument
// column share one set of its values per group, whose entry for a value
// says which of them saw it (Flink's distinct view keeps one MapView per
// distinct argument for all the aggregates over it, FILTER or not, the
// same way). Nexmark q16's eight COUNT(DISTINCT ...) FILTER (...) over two
// columns then look a row up twice, not eight times. A set's values are
// int64 words for the fixed-width types (wordType), in a table of its own
// (wordSet, distinct_words.go) that holds no pointer for the GC to scan
// and costs a row one probe; STRING and BYTES values in a table of the
// same kind whose entries point into a byte buffer of the set's
// (strSet, distinct_strings.go); the other types' Values in a Go map.
//
// Over inserts only, an entry is a bit per aggregate. With retractions it
// is a count per aggregate, which may go negative when a retraction comes
// before its accumulation (valueCounts, as before): the value is present
// for an aggregate while its count is > 0.
//
// The snapshot is the layout of a map per aggregate (extCounts in each
// one's dist slot): the same bytes as before the sets, so that a
// checkpoint of either restores into the other. A set written from bits
// counts each value once.

// maxSetMembers is how many aggregates one set serves: a bit each.
const maxSetMembers = 64

// distinctSet is a set's place in the store: the aggregates it serves
// (members, indices in Store.Aggs; member m is bit m), their argument
// column and type, and the ext slot of each group that holds it (the
// first member's dist).
type distinctSet struct {
	members []int
	arg     int
	typ     row.Type
	word    bool
	str     bool // STRING or BYTES: a strSet, Store.strs[id*nstr+si]
	si      int
	ext     int
	// keeps: a member other than COUNT, which may keep the value it
	// accumulates (MIN, MAX), so it gets a copy of its own.
	keeps bool
	// valued: a member other than COUNT reads the value it is applied;
	// deferred: its updates are logged (distinct_defer.go).
	valued, deferred bool
}

// setView says which set and member an ext slot of a slot's snapshot
// is the map of (set -1: none).
type setView struct{ set, member int }

// valueSet is one group's set of values of type K for k members.
type valueSet[K comparable] struct {
	// bits, over inserts only: the members that saw each value.
	bits map[K]uint64
	// idx, with retractions: each value's counts, at counts[idx*k:],
	// and the free places of values whose counts all came back to 0.
	idx    map[K]int32
	counts []int64
	free   []int32
}

func newValueSet[K comparable](insertOnly bool) *valueSet[K] {
	if insertOnly {
		return &valueSet[K]{bits: map[K]uint64{}}
	}
	return &valueSet[K]{idx: map[K]int32{}}
}

// has reports whether v has an entry.
func (t *valueSet[K]) has(v K) bool {
	if t.bits != nil {
		_, ok := t.bits[v]
		return ok
	}
	_, ok := t.idx[v]
	return ok
}

// step counts v by d for the members of mask and returns the members
// for which v became present or absent (changed), and those for which
// it is present now (of mask).
func (t *valueSet[K]) step(v K, mask uint64, d int64, k int) (changed, now uint64) {
	if t.bits != nil {
		old := t.bits[v]
		if now := old | mask; now != old {
			t.bits[v] = now
			return now &^ old, now
		}
		return 0, old
	}
	i, ok := t.idx[v]
	if !ok {
		if n := len(t.free); n > 0 {
			i, t.free = t.free[n-1], t.free[:n-1]
		} else {
			i = int32(len(t.counts) / k)
			t.counts = append(t.counts, make([]int64, k)...)
		}
		t.idx[v] = i
	}
	cs := t.counts[int(i)*k : int(i+1)*k]
	for m := mask; m != 0; m &= m - 1 {
		j := bits.TrailingZeros64(m)
		old := cs[j]
		cs[j] += d
		if (old > 0) != (cs[j] > 0) {
			changed |= 1 << j
		}
		if cs[j] > 0 {
			now |= 1 << j
		}
	}
	for _, c := range cs {
		if c != 0 {
			return changed, now
		}
	}
	delete(t.idx, v)
	t.free = append(t.free, i)
	return changed, now
}

// set sets member j's count of v to c: restore, into a set of no
// retractions yet (bits: present when c > 0).
func (t *valueSet[K]) set(v K, j int, c int64, k int) {
	if c == 0 {
		return
	}
	if t.bits != nil {
		if c > 0 {
			t.bits[v] |= 1 << j
		}
		return
	}
	i, ok := t.idx[v]
	if !ok {
		i = int32(len(t.counts) / k)
		t.counts = append(t.counts, make([]int64, k)...)
		t.idx[v] = i
	}
	t.counts[int(i)*k+j] = c
}

// each calls f with every value and, for each member, its count (1 for
// a bit) in cs, which f must not keep.
func (t *valueSet[K]) each(k int, f func(v K, cs []int64)) {
	if t.bits != nil {
		cs := make([]int64, k)
		for v, b := range t.bits {
			for j := range cs {
				cs[j] = int64(b >> j & 1)
			}
			f(v, cs)
		}
		return
	}
	for v, i := range t.idx {
		f(v, t.counts[int(i)*k:int(i+1)*k])
	}
}

// layDistinctSets gathers the DISTINCT aggregates over the same column
// into sets. LISTAGG (its values in arrival order), COLLECT and user
// aggregates keep a map of their own.
func (s *Store) layDistinctSets(insertOnly bool) {
	s.insertOnly = insertOnly
	s.setViews = make([]setView, s.extW)
	for j := range s.setViews {
		s.setViews[j].set = -1
	}
	for i := range s.Aggs {
		a := &s.Aggs[i]
		if a.dist < 0 || a.set >= 0 || a.kind == accList || a.kind == accBag || a.kind == accUser || a.kind == accArray || a.kind == accObject {
			continue
		}
		g := distinctSet{arg: a.call.Arg, typ: a.call.ArgType, word: wordType(a.call.ArgType), ext: a.dist,
			str: a.call.ArgType.ID == row.String || a.call.ArgType.ID == row.Bytes}
		if g.str {
			g.si, s.nstr = s.nstr, s.nstr+1
		}
		for j := i; j < len(s.Aggs) && len(g.members) < maxSetMembers; j++ {
			b := &s.Aggs[j]
			if b.dist < 0 || b.set >= 0 || b.kind == accList || b.kind == accBag || b.kind == accUser || b.kind == accArray || b.kind == accObject ||
				b.call.Arg != a.call.Arg || b.call.ArgType != a.call.ArgType {
				continue
			}
			b.set, b.member = len(s.sets), len(g.members)
			s.setViews[b.dist] = setView{set: b.set, member: b.member}
			g.members = append(g.members, j)
			g.keeps = g.keeps || b.kind != accCount
			g.valued = g.valued || b.kind != accCount
		}
		s.sets = append(s.sets, g)
	}
}

// filterMask has a bit for each of g's members whose FILTER row r
// passes (every member without one).
func (s *Store) filterMask(g *distinctSet, r row.Row) uint64 {
	var mask uint64
	for m, ai := range g.members {
		if a := &s.Aggs[ai]; a.call.HasFilter {
			if f := r[a.call.Filter]; f.IsNull() || !f.Bool() {
				continue
			}
		}
		mask |= 1 << m
	}
	return mask
}

// setStep counts row r into slot id's sets, and has each aggregate whose
// value became present (absent) accumulate (retract) it.
func (s *Store) setStep(id int32, nums []int64, r row.Row, add bool) {
	s.setsStep(id, nums, r, add, false)
}

// setsStep is setStep, for the sets not deferred only when direct.
func (s *Store) setsStep(id int32, nums []int64, r row.Row, add, direct bool) {
	for gi := range s.sets {
		g := &s.sets[gi]
		if direct && g.deferred {
			continue
		}
		v := r[g.arg]
		if v.IsNull() {
			continue
		}
		mask := s.filterMask(g, r)
		if mask == 0 {
			continue
		}
		d := int64(1)
		if !add {
			d = -1
		}
		s.setCount(id, g, nums, v, mask, d)
	}
}

// setCount counts v by d for the members of mask of set g in slot id and
// applies v to those whose view of it changed.
func (s *Store) setCount(id int32, g *distinctSet, nums []int64, v row.Value, mask uint64, d int64) {
	p := &s.exts[int(id)*s.extW+g.ext]
	k := len(g.members)
	var changed, now uint64
	if g.word {
		t, _ := (*p).(*wordSet)
		if t == nil {
			t = newWordSet(s.insertOnly, k)
			*p = t
		}
		changed, now = t.step(wordOf(g.typ.ID, v), mask, d, k)
	} else if g.str {
		t := s.strSet(id, g)
		if t.e == nil {
			t.init(s.insertOnly, k)
		}
		str := v.Str()
		changed, now = t.step(str, strHash(str), mask, d, k)
		if changed != 0 && g.keeps {
			// The set keeps its own copy; MIN or MAX keep theirs.
			v = row.DetachValue(v)
		}
	} else {
		t, _ := (*p).(*valueSet[row.Value])
		if t == nil {
			t = newValueSet[row.Value](s.insertOnly)
			*p = t
		}
		if !t.has(v) {
			// A key kept past its batch must not pin the batch's memory
			// or the read block its strings point into.
			v = row.DetachValue(v)
		}
		changed, now = t.step(v, mask, d, k)
	}
	for ; changed != 0; changed &= changed - 1 {
		j := bits.TrailingZeros64(changed)
		// Present now: accumulate; absent now: retract, whatever d's
		// sign (a merge adds a slice's counts).
		s.apply(id, &s.Aggs[g.members[j]], nums, v, now>>j&1 != 0)
	}
}

// mergeSets adds slot src's sets into dst's (window slices), applying
// the values whose presence the merge changes.
func (s *Store) mergeSets(dst, src int32, dn []int64) {
	for gi := range s.sets {
		g := &s.sets[gi]
		k := len(g.members)
		add := func(v row.Value, cs []int64) {
			for j, c := range cs {
				if c != 0 {
					s.setCount(dst, g, dn, v, 1<<j, c)
				}
			}
		}
		if g.str {
			// add may insert into dst's set, never src's: t is not
			// changed while it is walked.
			s.strSet(src, g).each(k, func(b []byte, cs []int64) { add(strValue(g.typ.ID, string(b)), cs) })
			continue
		}
		switch t := s.exts[int(src)*s.extW+g.ext].(type) {
		case *wordSet:
			t.each(k, func(w int64, cs []int64) { add(valueOfWord(g.typ, w), cs) })
		case *valueSet[row.Value]:
			t.each(k, add)
		}
	}
}

// strValue is the Value of type id (STRING or BYTES) of s.
func strValue(id row.TypeID, s string) row.Value {
	if id == row.Bytes {
		return row.BytesValue([]byte(s))
	}
	return row.StringValue(s)
}

// appendSetView appends member j's map of set g in slot id as the map of
// its own it had before the sets (appendSlot's extCounts or extNone).
func (s *Store) appendSetView(dst []byte, id int32, g *distinctSet, j int) []byte {
	k := len(g.members)
	n := 0
	var each func(f func(v row.Value, cs []int64))
	var x any = s.exts[int(id)*s.extW+g.ext]
	if g.str {
		if t := s.strSet(id, g); t.e != nil {
			x = t
		}
	}
	switch t := x.(type) {
	case *wordSet:
		each = func(f func(v row.Value, cs []int64)) {
			t.each(k, func(w int64, cs []int64) { f(valueOfWord(g.typ, w), cs) })
		}
	case *strSet:
		each = func(f func(v row.Value, cs []int64)) {
			// The Value is only appended: a view of the set's bytes.
			t.each(k, func(b []byte, cs []int64) { f(strValue(g.typ.ID, unsafe.String(unsafe.SliceData(b), len(b))), cs) })
		}
	case *valueSet[row.Value]:
		each = func(f func(v row.Value, cs []int64)) { t.each(k, f) }
	default:
		return append(dst, extNone)
	}
	each(func(_ row.Value, cs []int64) {
		if cs[j] != 0 {
			n++
		}
	})
	dst = append(dst, extCounts)
	dst = binary.AppendUvarint(dst, uint64(n))
	each(func(v row.Value, cs []int64) {
		if cs[j] != 0 {
			dst = row.AppendValue(dst, v)
			dst = binary.AppendVarint(dst, cs[j])
		}
	})
	return dst
}

// restoreSetView reads member j's map of set g for slot id into the set
// (RestoreState, after the extCounts tag).
func (s *Store) restoreSetView(d *row.Decoder, id int, g *distinctSet, j int) {
	k := len(g.members)
	a := &s.Aggs[g.members[j]]
	p := &s.exts[id*s.extW+g.ext]
	n := d.Count(2)
	for range n {
		v := d.Value()
		c := d.Varint()
		if d.Err() != nil {
			return
		}
		if err := a.checkArg(v); err != nil || v.IsNull() {
			d.Fail("slot %d: DISTINCT value %s of %s", id, v, a.call)
			return
		}
		if g.word {
			t, _ := (*p).(*wordSet)
			if t == nil {
				t = newWordSet(s.insertOnly, k)
				*p = t
			}
			t.set(wordOf(g.typ.ID, v), j, c)
			continue
		}
		if g.str {
			t := s.strSet(int32(id), g)
			if t.e == nil {
				t.init(s.insertOnly, k)
			}
			t.set(v.Str(), j, c)
			continue
		}
		t, _ := (*p).(*valueSet[row.Value])
		if t == nil {
			t = newValueSet[row.Value](s.insertOnly)
			*p = t
		}
		t.set(v, j, c, k)
	}
}

// strSet is slot id's set g (g.str), the zero strSet if not made yet.
func (s *Store) strSet(id int32, g *distinctSet) *strSet {
	return &s.strs[int(id)*s.nstr+g.si]
}

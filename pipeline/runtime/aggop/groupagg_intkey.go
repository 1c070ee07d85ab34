package aggop

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/state"
)

// intKeys is a cache in front of a GroupAgg's key index for the common
// GROUP BY of one integer column: the key's value straight to its slot,
// in one bucket of 16 bytes, where the index takes the key's encoding,
// its hash, a bucket and the entry holding the key (two cache misses a
// row at 100k keys, a third of a streaming GROUP BY's time). The index
// stays the state (snapshots, the keys' columns at Finish and at a
// flush); the cache holds only what it was told (add) and is forgotten
// whenever a slot is freed (reset). Its arrays hold no pointer.
//
// Keys that fill most of a range (ids counted from some number, as most
// are) go to an array instead, indexed by the key's distance from the
// range's start (DuckDB's perfect hash aggregate): 4 bytes a key where a
// bucket takes 16 at most three quarters full, so that 100k keys take
// 400 KB, which the CPU's cache holds, and no probing. When it grows,
// the cache moves there the keys of the range from the least to the
// greatest, or if that is too long, from the least to the greatest but
// 1/64 of them at either end (outliers: -1, 999999999), when that range
// is at most four times as long as the keys are many; the others stay in
// buckets.
type intKeys struct {
	mem     *state.OffHeap // holds buckets and direct
	typ     row.TypeID     // the key column's values' type, set by the first add
	buckets []intBucket
	n       int   // keys in buckets
	shift   uint8 // 64 - log2(len(buckets))
	// direct[k-base] is key k's slot + 1 (0: not cached); a key in its
	// range is never in buckets.
	direct []int32
	base   int64
	total  int // keys cached
}

// intBucket is one key and its slot + 1 (0: an empty bucket).
type intBucket struct {
	key  int64
	slot int32
}

// maxDirect bounds the direct array (64 MiB); keys spread wider hash.
const maxDirect = 1 << 24

// intKeysOf returns a cache for the GroupAgg, or nil when its key is not
// one column.
func intKeysOf(keys []int, mem *state.OffHeap) *intKeys {
	if len(keys) != 1 {
		return nil
	}
	return &intKeys{mem: mem}
}

// fits reports whether the cache serves a batch whose key is column col
// of changes: its first key that is not NULL is an integer. A key of
// another type (a STRING), or NULL, is never cached, so the cache would
// only send each of its changes alone down the index's way, where the
// passes of slotsOf look up a whole batch at once.
func (c *intKeys) fits(changes []row.Change, col int) bool {
	for i := range changes {
		switch changes[i].Row[col].Type() {
		case row.Null:
			continue
		case row.BigInt, row.Int:
			return true
		}
		return false
	}
	return false
}

// home is k's first bucket: a Fibonacci hash, whose high bits spread
// the keys of a range as well as random ones.
func (c *intKeys) home(k int64) int {
	return int((uint64(k) * 0x9E3779B97F4A7C15) >> c.shift)
}

// inDirect returns k's index in direct, if k is in its range. k-base
// wraps to a large number for a k below base, and base+len(direct) never
// passes MaxInt64, so no other key lands in range.
func (c *intKeys) inDirect(k int64) (int, bool) {
	off := uint64(k - c.base)
	return int(off), off < uint64(len(c.direct))
}

// find returns v's slot, or -1 when v is not cached (or not of the
// column's integer type: NULL, or a column of another type).
func (c *intKeys) find(v row.Value) int32 {
	if c.total == 0 || v.Type() != c.typ {
		return -1
	}
	k := v.Int64()
	if i, ok := c.inDirect(k); ok {
		return c.direct[i] - 1
	}
	if c.n == 0 {
		return -1
	}
	mask := len(c.buckets) - 1
	for i := c.home(k); ; i = (i + 1) & mask {
		b := &c.buckets[i]
		switch {
		case b.slot == 0:
			return -1
		case b.key == k:
			return b.slot - 1
		}
	}
}

// caches reports whether add would cache v: an integer of the
// column's type (or the first one).
func (c *intKeys) caches(v row.Value) bool {
	t := v.Type()
	return (t == row.BigInt || t == row.Int) && (t == c.typ || c.total == 0 && c.typ == 0)
}

// add caches v's slot; v, an integer the cache does not hold yet, of the
// column's type. Values of another type are not cached.
func (c *intKeys) add(v row.Value, slot int32) {
	t := v.Type()
	if t != row.BigInt && t != row.Int {
		return
	}
	if c.total == 0 && c.typ == 0 {
		c.typ = t
	}
	if t != c.typ {
		return
	}
	k := v.Int64()
	c.total++
	if c.setDirect(k, slot) {
		return
	}
	if (c.n+1)*4 > len(c.buckets)*3 {
		c.grow()
		if c.setDirect(k, slot) {
			return
		}
		if (c.n+1)*4 > len(c.buckets)*3 { // the direct array took the others
			c.rehash(max(2*len(c.buckets), 1024))
		}
	}
	c.place(k, slot+1)
	c.n++
}

// setDirect caches k's slot in the direct array, if k is in its range.
func (c *intKeys) setDirect(k int64, slot int32) bool {
	i, ok := c.inDirect(k)
	if ok {
		c.direct[i] = slot + 1
	}
	return ok
}

func (c *intKeys) place(k int64, slot int32) {
	mask := len(c.buckets) - 1
	i := c.home(k)
	for c.buckets[i].slot != 0 {
		i = (i + 1) & mask
	}
	c.buckets[i] = intBucket{key: k, slot: slot}
}

// grow makes room in buckets for more keys, or moves the keys to a new
// direct array when most are dense enough.
func (c *intKeys) grow() {
	// A few keys fit the CPU's cache either way: the first buckets.
	if c.total >= 512 {
		if lo, hi, ok := c.denseRange(); ok {
			c.toDirect(lo, hi)
			return
		}
	}
	c.rehash(max(2*len(c.buckets), 1024))
}

// denseRange returns the range of the keys cached, or failing that of
// all but the least and the greatest 1/64 of them, that is short enough
// for the direct array.
func (c *intKeys) denseRange() (lo, hi int64, ok bool) {
	keys := make([]int64, 0, c.total)
	for i, s := range c.direct {
		if s != 0 {
			keys = append(keys, c.base+int64(i))
		}
	}
	for _, b := range c.buckets {
		if b.slot != 0 {
			keys = append(keys, b.key)
		}
	}
	if len(keys) == 0 {
		return 0, 0, false
	}
	// The least and the greatest first, in one pass; the cut ones by
	// selection, not a sort: keys spread over a range far wider than
	// they are many (10M possible ids, a few thousand seen) fail both
	// tests at every growth, and a sort of them each time cost a
	// GROUP BY of 10M keys 7% of its CPU.
	fits := func(lo, hi int64) bool {
		span := uint64(hi-lo) + 1 // 0: the whole int64 range
		return span != 0 && span <= 4*uint64(len(keys)) && span <= maxDirect
	}
	if lo, hi = slices.Min(keys), slices.Max(keys); fits(lo, hi) {
		return lo, hi, true
	}
	if cut := len(keys) / 64; cut > 0 {
		lo = nth(keys, cut)
		hi = nth(keys[cut+1:], len(keys)-1-cut-(cut+1))
		if fits(lo, hi) {
			return lo, hi, true
		}
	}
	return 0, 0, false
}

// nth reorders a so that a[k] holds the value a sorted a holds there,
// with none greater before it and none less after it, and returns it:
// Hoare's selection with random pivots, linear time expected.
func nth(a []int64, k int) int64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		p := a[lo+rand.IntN(hi-lo+1)]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i, j = i+1, j-1
			}
		}
		// a[lo..j] <= p <= a[i..hi], j < i; between them, p.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

// toDirect moves the keys from lo to hi into a new direct array, half as
// long again for keys still to come (ids grow); the others go to new
// buckets.
func (c *intKeys) toDirect(lo, hi int64) {
	span := uint64(hi-lo) + 1
	size := min(span+span/2+64, maxDirect)
	if lo > math.MaxInt64-int64(size)+1 { // lo+size-1 <= MaxInt64
		size = uint64(math.MaxInt64-lo) + 1
	}
	old, oldBase, buckets := c.direct, c.base, c.buckets
	c.direct, c.base = state.OffHeapMake[int32](c.mem, int(size)), lo
	var rest []intBucket
	move := func(k int64, s int32) {
		if i, ok := c.inDirect(k); ok {
			c.direct[i] = s
		} else {
			rest = append(rest, intBucket{key: k, slot: s})
		}
	}
	for i, s := range old {
		if s != 0 {
			move(oldBase+int64(i), s)
		}
	}
	for _, b := range buckets {
		if b.slot != 0 {
			move(b.key, b.slot)
		}
	}
	state.OffHeapFree(c.mem, old)
	state.OffHeapFree(c.mem, buckets)
	c.buckets, c.n, c.shift = nil, 0, 0
	if len(rest) > 0 {
		c.rehash(max(1024, 1<<bits.Len(uint(2*len(rest)))))
		for _, b := range rest {
			c.place(b.key, b.slot)
		}
		c.n = len(rest)
	}
}

// rehash moves the buckets' keys to n buckets (a power of two).
func (c *intKeys) rehash(n int) {
	old := c.buckets
	c.buckets = state.OffHeapMake[intBucket](c.mem, n)
	c.shift = uint8(64 - bits.TrailingZeros(uint(n)))
	for _, b := range old {
		if b.slot != 0 {
			c.place(b.key, b.slot)
		}
	}
	state.OffHeapFree(c.mem, old)
}

// reset forgets every key: a slot was freed, and may be another key's.
func (c *intKeys) reset() {
	if c != nil && c.total > 0 {
		state.OffHeapFree(c.mem, c.buckets)
		state.OffHeapFree(c.mem, c.direct)
		*c = intKeys{mem: c.mem}
	}
}

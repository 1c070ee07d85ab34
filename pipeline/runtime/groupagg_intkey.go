package runtime

import (
	"math/bits"

	"github.com/etld/etld/pipeline/row"
)

// intKeys is a cache in front of a GroupAgg's key index for the common
// GROUP BY of one integer column: the key's value straight to its slot,
// in one bucket of 16 bytes, where the index takes the key's encoding,
// its hash, a bucket and the entry holding the key (two cache misses a
// row at 100k keys, a third of a streaming GROUP BY's time). The index
// stays the state (snapshots, the keys' columns at Finish and at a
// flush); the cache holds only what it was told (add) and is forgotten
// whenever a slot is freed (reset). Its arrays hold no pointer.
type intKeys struct {
	typ     row.TypeID // the key column's values' type, set by the first add
	buckets []intBucket
	n       int
	shift   uint8 // 64 - log2(len(buckets))
}

// intBucket is one key and its slot + 1 (0: an empty bucket).
type intBucket struct {
	key  int64
	slot int32
}

// intKeysOf returns a cache for the GroupAgg, or nil when its key is not
// one column.
func intKeysOf(keys []int) *intKeys {
	if len(keys) != 1 {
		return nil
	}
	return &intKeys{}
}

// home is k's first bucket: a Fibonacci hash, whose high bits spread
// the keys of a range as well as random ones.
func (c *intKeys) home(k int64) int {
	return int((uint64(k) * 0x9E3779B97F4A7C15) >> c.shift)
}

// find returns v's slot, or -1 when v is not cached (or not of the
// column's integer type: NULL, or a column of another type).
func (c *intKeys) find(v row.Value) int32 {
	if c.n == 0 || v.Type() != c.typ {
		return -1
	}
	k := v.Int64()
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

// add caches v's slot; v, an integer the cache does not hold yet, of the
// column's type. Values of another type are not cached.
func (c *intKeys) add(v row.Value, slot int32) {
	t := v.Type()
	if t != row.BigInt && t != row.Int {
		return
	}
	if c.n == 0 && c.typ == 0 {
		c.typ = t
	}
	if t != c.typ {
		return
	}
	if (c.n+1)*4 > len(c.buckets)*3 {
		c.grow()
	}
	c.place(v.Int64(), slot+1)
	c.n++
}

func (c *intKeys) place(k int64, slot int32) {
	mask := len(c.buckets) - 1
	i := c.home(k)
	for c.buckets[i].slot != 0 {
		i = (i + 1) & mask
	}
	c.buckets[i] = intBucket{key: k, slot: slot}
}

func (c *intKeys) grow() {
	old := c.buckets
	n := max(2*len(old), 1024)
	c.buckets = make([]intBucket, n)
	c.shift = uint8(64 - bits.TrailingZeros(uint(n)))
	for _, b := range old {
		if b.slot != 0 {
			c.place(b.key, b.slot)
		}
	}
}

// reset forgets every key: a slot was freed, and may be another key's.
func (c *intKeys) reset() {
	if c != nil && c.n > 0 {
		*c = intKeys{}
	}
}

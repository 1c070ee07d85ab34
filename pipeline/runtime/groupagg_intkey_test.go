package runtime

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestIntKeys holds the integer-key cache to a Go map over random keys
// (near ones, far ones, the extremes) through its growth; a value of
// another type, or NULL, is never found nor cached; reset forgets all.
func TestIntKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := intKeysOf([]int{0})
	want := map[int64]int32{}
	key := func() int64 {
		switch r.IntN(4) {
		case 0:
			return int64(r.IntN(3000))
		case 1:
			return r.Int64() - math.MaxInt64/2
		case 2:
			return []int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)]
		}
		return int64(r.IntN(100)) << 40 // keys apart by a power of two
	}
	for i := range 20000 {
		k := key()
		got := c.find(row.BigIntValue(k))
		if s, ok := want[k]; ok != (got >= 0) || ok && s != got {
			t.Fatalf("find(%d) = %d, want %d (present %v)", k, got, s, ok)
		}
		if got < 0 {
			c.add(row.BigIntValue(k), int32(i))
			want[k] = int32(i)
		}
	}
	if c.n != len(want) {
		t.Fatalf("%d keys cached, want %d", c.n, len(want))
	}
	for k, s := range want {
		if got := c.find(row.BigIntValue(k)); got != s {
			t.Fatalf("find(%d) = %d, want %d", k, got, s)
		}
	}
	c.add(row.IntValue(7), 1)
	c.add(row.NullValue, 2)
	c.add(row.StringValue("7"), 3)
	if c.find(row.IntValue(7)) >= 0 || c.find(row.NullValue) >= 0 || c.find(row.StringValue("7")) >= 0 {
		t.Fatal("a value of another type than the column's first was cached")
	}
	c.reset()
	if c.find(row.BigIntValue(0)) >= 0 || c.n != 0 {
		t.Fatal("reset kept keys")
	}
	// After a reset the column's type is set again by the first add.
	c.add(row.IntValue(5), 9)
	if got := c.find(row.IntValue(5)); got != 9 {
		t.Fatalf("INT column: find(5) = %d, want 9", got)
	}
	if intKeysOf([]int{0, 1}) != nil || intKeysOf(nil) != nil {
		t.Fatal("a cache for a key of several columns, or none")
	}
}

package state

import (
	"math"
	"math/rand/v2"
	"testing"
)

// int64Extremes are values at the ends of the int64 range and of its
// halves, for tables of int64 keys.
var int64Extremes = []int64{0, -1, 1, math.MinInt64, math.MaxInt64, 1 << 32, -(1 << 32)}

// IntIndex against a map, case by case: puts, finds and deletions of
// values few and many, at the extremes of the int64 range, and of values
// that share their home slot (a seed that hashes a value to itself, so
// that small values all start at slot 0: runs as long as the table
// holds, deletions in their middle). After every op the two agree on the
// value touched and the count; at the end on every value, by Find and by
// Each, and the slots grew to hold them at most half full.
func TestIntIndex(t *testing.T) {
	for _, c := range []struct {
		name string
		// collide: the seed {0, 1} (home = the value's top bits).
		collide bool
		ops     int
		values  func(rng *rand.Rand) uint64
		// del is the share of ops that delete (of 10).
		del int
	}{
		{name: "few", ops: 20000, del: 3, values: func(rng *rand.Rand) uint64 { return uint64(rng.IntN(40)) }},
		{name: "insert only, growing", ops: 100000, values: func(rng *rand.Rand) uint64 { return rng.Uint64() }},
		{name: "many, come and go", ops: 200000, del: 4, values: func(rng *rand.Rand) uint64 { return rng.Uint64N(50000) }},
		{name: "extremes", ops: 5000, del: 3, values: func(rng *rand.Rand) uint64 {
			return uint64(int64Extremes[rng.IntN(len(int64Extremes))])
		}},
		{name: "one home slot", collide: true, ops: 20000, del: 4, values: func(rng *rand.Rand) uint64 { return rng.Uint64N(300) }},
		{name: "one home slot, wrapping", collide: true, ops: 20000, del: 4, values: func(rng *rand.Rand) uint64 {
			return math.MaxUint64 - rng.Uint64N(300) // homes at the last slot: runs wrap to the first
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(c.name))))
			var tab IntIndex
			if c.collide {
				tab.seed = [2]uint64{0, 1}
			}
			want := map[uint64]int32{}
			for i := range c.ops {
				k := c.values(rng)
				id, ok := tab.Find(k)
				wid, wok := want[k]
				if ok != wok || ok && id != wid {
					t.Fatalf("op %d: find %d = %d, %v; want %d, %v", i, k, id, ok, wid, wok)
				}
				switch {
				case !ok:
					tab.Put(k, int32(i))
					want[k] = int32(i)
				case rng.IntN(10) < c.del:
					if id, ok := tab.Del(k); !ok || id != wid {
						t.Fatalf("op %d: del %d = %d, %v; want %d", i, k, id, ok, wid)
					}
					delete(want, k)
					if _, ok := tab.Del(k); ok {
						t.Fatalf("op %d: %d deleted twice", i, k)
					}
				}
				if tab.Len() != len(want) {
					t.Fatalf("op %d: %d values, want %d", i, tab.Len(), len(want))
				}
			}
			for k, id := range want {
				if got, ok := tab.Find(k); !ok || got != id {
					t.Fatalf("find %d = %d, %v at the end; want %d", k, got, ok, id)
				}
			}
			seen := 0
			for k, id := range tab.Each {
				if wid, ok := want[k]; !ok || wid != id {
					t.Fatalf("Each yields %d under %d; want %d, %v", k, id, wid, ok)
				}
				seen++
			}
			if seen != len(want) {
				t.Fatalf("Each yields %d values, want %d", seen, len(want))
			}
			if n := len(tab.slots); n < 2*tab.Len() || n&(n-1) != 0 {
				t.Fatalf("%d slots for %d values", n, tab.Len())
			}
		})
	}
}

// The zero IntIndex is empty and ready: it seeds its hash on the first
// Put, and lookups and deletions before that find nothing.
func TestIntIndexZero(t *testing.T) {
	var tab IntIndex
	if _, ok := tab.Find(0); ok || tab.Len() != 0 || tab.Touch(0) != 0 || tab.MemBytes() != 0 {
		t.Fatal("the zero index holds something")
	}
	if _, ok := tab.Del(0); ok {
		t.Fatal("deleted from the zero index")
	}
	tab.Put(0, 5)
	if tab.seed[1]&1 == 0 {
		t.Fatal("the first Put left the multiplier even")
	}
	if id, ok := tab.Find(0); !ok || id != 5 {
		t.Fatalf("find 0 = %d, %v; want 5", id, ok)
	}
}

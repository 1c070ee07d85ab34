package state

import (
	"math/rand/v2"
	"testing"
)

// IntIDs against a map, over random adds, drops and finds of values that
// share their probe runs (a table of a few slots) and of the extremes of
// the int64 range: after every op the two agree on every value, every
// id held (Has, Key), and the ids freed are handed out again.
func TestIntIDsAgainstMap(t *testing.T) {
	for _, c := range []struct {
		name   string
		values func(rng *rand.Rand) uint64
	}{
		{"few", func(rng *rand.Rand) uint64 { return uint64(rng.IntN(40)) }},
		{"spread", func(rng *rand.Rand) uint64 { return rng.Uint64() % 5000 }},
		{"extremes", func(rng *rand.Rand) uint64 { return uint64(int64Extremes[rng.IntN(len(int64Extremes))]) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			tab := NewIntIDs()
			want := map[uint64]int32{}
			maxID := int32(-1)
			for i := range 20000 {
				k := c.values(rng)
				switch rng.IntN(3) {
				case 0:
					if _, ok := want[k]; ok {
						continue
					}
					id, fresh := tab.Add(k)
					if fresh != (id > maxID) {
						t.Fatalf("op %d: id %d fresh %v, ids handed out up to %d", i, id, fresh, maxID)
					}
					for v, held := range want {
						if held == id {
							t.Fatalf("op %d: id %d of %d handed out again for %d", i, id, v, k)
						}
					}
					want[k], maxID = id, max(maxID, id)
				case 1:
					id, ok := tab.Drop(k)
					wid, wok := want[k]
					if ok != wok || ok && id != wid {
						t.Fatalf("op %d: drop %d = %d, %v; want %d, %v", i, k, id, ok, wid, wok)
					}
					delete(want, k)
				default:
					id, ok := tab.Find(k)
					wid, wok := want[k]
					if ok != wok || ok && id != wid {
						t.Fatalf("op %d: find %d = %d, %v; want %d, %v", i, k, id, ok, wid, wok)
					}
				}
				if tab.Len() != len(want) {
					t.Fatalf("op %d: %d keys, want %d", i, tab.Len(), len(want))
				}
			}
			seen := 0
			for k, id := range tab.Each {
				if want[k] != id || !tab.Has(id) || tab.Key(id) != k {
					t.Fatalf("key %d under id %d: want id %d", k, id, want[k])
				}
				seen++
			}
			if seen != len(want) {
				t.Fatalf("Each yields %d keys, want %d", seen, len(want))
			}
			for id := range maxID + 1 {
				held := false
				for _, w := range want {
					held = held || w == id
				}
				if tab.Has(id) != held {
					t.Fatalf("Has(%d) = %v, want %v", id, tab.Has(id), held)
				}
			}
		})
	}
}

// A table of a million values moves off the Go heap, and Release gives
// it back.
func TestIntIDsOffHeap(t *testing.T) {
	if !MapSupported {
		t.Skip("no mappings here")
	}
	tab := NewIntIDs()
	for i := range 1 << 20 {
		tab.Add(uint64(i) * 7919)
	}
	if tab.mem.Mapped() == 0 {
		t.Fatal("a table of 1M keys holds no mapped memory")
	}
	if id, ok := tab.Find(7919 * 12345); !ok || id != 12345 {
		t.Fatalf("find = %d, %v", id, ok)
	}
	tab.Release()
	if tab.mem.Mapped() != 0 || tab.Len() != 0 {
		t.Fatal("Release left memory or keys")
	}
}

// KeyIDs.AddID keeps the ids it is given and frees the ones it skips:
// the next adds reuse them before handing out new ones.
func TestKeyIDsAddID(t *testing.T) {
	tab := NewKeyIDs()
	tab.AddID([]byte("a"), 0)
	tab.AddID([]byte("c"), 2)
	tab.AddID([]byte("f"), 5)
	for k, id := range map[string]int32{"a": 0, "c": 2, "f": 5} {
		if got, ok := tab.Find([]byte(k)); !ok || got != id {
			t.Errorf("%s: id %d, %v; want %d", k, got, ok, id)
		}
	}
	got := map[int32]bool{}
	for _, k := range []string{"w", "x", "y"} {
		id, fresh := tab.Add([]byte(k))
		if fresh || got[id] || id == 0 || id == 2 || id == 5 {
			t.Fatalf("add %s: id %d fresh %v (ids 1, 3, 4 are free)", k, id, fresh)
		}
		got[id] = true
	}
	if id, fresh := tab.Add([]byte("z")); !fresh || id != 6 {
		t.Errorf("add z: id %d fresh %v, want 6, true", id, fresh)
	}
}

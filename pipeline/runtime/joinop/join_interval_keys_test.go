package joinop

import (
	"math/rand/v2"
	"testing"
)

// ijInts agrees with a map through random puts, finds and removals,
// over few values (long probe runs, removals in their middle) and many.
func TestIJIntsMatchesAMap(t *testing.T) {
	for _, span := range []uint64{8, 100, 1 << 40} {
		rng := rand.New(rand.NewPCG(span, 3))
		var tab ijInts
		want := map[uint64]int32{}
		for i := range 20000 {
			k := rng.Uint64N(span)
			if span == 8 {
				k <<= 58 // equal low bits: one home slot for all
			}
			id, ok := tab.find(k)
			wid, wok := want[k]
			if ok != wok || id != wid {
				t.Fatalf("span %d step %d: find(%d) = %d, %v; want %d, %v", span, i, k, id, ok, wid, wok)
			}
			switch {
			case !ok:
				tab.put(k, int32(i))
				want[k] = int32(i)
			case rng.IntN(2) == 0:
				tab.del(k)
				delete(want, k)
			}
			if tab.n != len(want) {
				t.Fatalf("span %d step %d: %d entries, want %d", span, i, tab.n, len(want))
			}
		}
		for k, id := range want {
			if got, ok := tab.find(k); !ok || got != id {
				t.Fatalf("span %d: find(%d) = %d, %v at the end; want %d", span, k, got, ok, id)
			}
		}
	}
}

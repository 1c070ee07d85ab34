package state

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeyHeapPopsInOrder holds the heap to a sort of the same keys, with
// pushes and pops interleaved, and after a Fill from any order: every
// pop has the least key left, and each item comes out once with its key.
func TestKeyHeapPopsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var h KeyHeap[int]
		keyOf := map[int]int64{} // item -> its key
		var model []int64        // the keys held
		popped := func(what string, got Keyed[int]) {
			t.Helper()
			slices.Sort(model)
			if got.Key != model[0] {
				t.Fatalf("round %d: %s key %d, want %d", round, what, got.Key, model[0])
			}
			if k, ok := keyOf[got.Item]; !ok || k != got.Key {
				t.Fatalf("round %d: %s item %d under key %d, pushed under %d (held %v)", round, what, got.Item, got.Key, k, ok)
			}
			delete(keyOf, got.Item)
			model = model[1:]
		}
		n := rng.IntN(300)
		for i := range n {
			k := int64(rng.IntN(20))
			h.Push(k, i)
			keyOf[i] = k
			model = append(model, k)
			if rng.IntN(3) == 0 {
				popped("pop", h.Pop())
			}
		}
		if h.Len() != len(model) {
			t.Fatalf("round %d: len %d, want %d", round, h.Len(), len(model))
		}
		// A restore fills the heap from its snapshot's order.
		saved := slices.Clone(h.Items())
		rng.Shuffle(len(saved), func(i, j int) { saved[i], saved[j] = saved[j], saved[i] })
		var back KeyHeap[int]
		back.Fill(saved)
		for back.Len() > 0 {
			if top := *back.Top(); top.Key != slices.Min(model) {
				t.Fatalf("round %d: top key %d, want %d", round, top.Key, slices.Min(model))
			}
			popped("restored pop", back.Pop())
		}
		if len(model) != 0 {
			t.Fatalf("round %d: %d items never came out", round, len(model))
		}
		back.Reset()
		back.Push(1, 7)
		if back.Len() != 1 || back.Pop() != (Keyed[int]{1, 7}) {
			t.Fatalf("round %d: a reset heap does not hold a new item", round)
		}
	}
}

package state

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunHeapPopsInOrder holds a RunHeap to a sort of the same items:
// pushes in order, nearly in order and in any order, interleaved with
// pops (many, so that the run empties and moves down), its items after
// a Fill from any order.
func TestRunHeapPopsInOrder(t *testing.T) {
	type item = heapItem
	less, cmp := heapItemLess, heapItemCmp
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 300 {
		h := NewRunHeap(less)
		var model []item
		disorder := []int{0, 3, 50, 1000}[round%4]
		n := rng.IntN(600)
		for i := range n {
			x := item{at: i, seq: i}
			if disorder > 0 {
				x.at -= rng.IntN(disorder)
			}
			h.Push(x)
			model = append(model, x)
			for rng.IntN(3) == 0 && len(model) > 0 {
				slices.SortFunc(model, cmp)
				if top := h.Top(); *top != model[0] {
					t.Fatalf("round %d: top %v, want %v", round, *top, model[0])
				}
				if got := h.Pop(); got != model[0] {
					t.Fatalf("round %d: pop %v, want %v", round, got, model[0])
				}
				model = model[1:]
			}
			if h.Len() != len(model) {
				t.Fatalf("round %d: len %d, want %d", round, h.Len(), len(model))
			}
		}
		items := h.Items()
		if len(items) != len(model) {
			t.Fatalf("round %d: %d items, want %d", round, len(items), len(model))
		}
		rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		if round%2 == 1 {
			h.Fill(items)
		}
		slices.SortFunc(model, cmp)
		for i, want := range model {
			if got := h.Pop(); got != want {
				t.Fatalf("round %d: pop %d is %v, want %v", round, i, got, want)
			}
		}
		if h.Len() != 0 {
			t.Fatalf("round %d: %d items left", round, h.Len())
		}
	}
}

package state

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// heapItem is what the heap tests order: by time, then by sequence.
type heapItem struct{ at, seq int }

func heapItemLess(a, b *heapItem) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }

// heapItemCmp is heapItemLess for slices.SortFunc, the tests' model.
func heapItemCmp(a, b heapItem) int {
	if heapItemLess(&a, &b) {
		return -1
	}
	if heapItemLess(&b, &a) {
		return 1
	}
	return 0
}

// TestHeapPopsInOrder holds the heap to a sort of the same items, with
// pushes and pops interleaved, and after a Fill from any order.
func TestHeapPopsInOrder(t *testing.T) {
	type item = heapItem
	less, cmp := heapItemLess, heapItemCmp
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		h := NewHeap(less)
		var model []item
		n := rng.IntN(300)
		for i := range n {
			x := item{at: rng.IntN(20), seq: i}
			h.Push(x)
			model = append(model, x)
			if rng.IntN(3) == 0 {
				slices.SortFunc(model, cmp)
				if got := h.Pop(); got != model[0] {
					t.Fatalf("round %d: pop %v, want %v", round, got, model[0])
				}
				model = model[1:]
			}
		}
		if h.Len() != len(model) {
			t.Fatalf("round %d: len %d, want %d", round, h.Len(), len(model))
		}
		// A restore fills the heap from its snapshot's order.
		saved := slices.Clone(h.Items())
		rng.Shuffle(len(saved), func(i, j int) { saved[i], saved[j] = saved[j], saved[i] })
		var back Heap[item] = NewHeap(less)
		back.Fill(saved)
		slices.SortFunc(model, cmp)
		for i, want := range model {
			if top := back.Top(); *top != want {
				t.Fatalf("round %d: top %d is %v, want %v", round, i, *top, want)
			}
			if got := back.Pop(); got != want {
				t.Fatalf("round %d: pop %d is %v, want %v", round, i, got, want)
			}
		}
		if back.Len() != 0 {
			t.Fatalf("round %d: %d items left", round, back.Len())
		}
	}
}

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

// TestRunHeapPushAllocatesNothing: once its slices have room, a push in
// order or out of it allocates nothing. A RunHeap is on the path of every
// row of a streaming OVER and every session of a SESSION window: a push
// that handed less the address of its argument moved the argument to the
// heap, an allocation per row.
func TestRunHeapPushAllocatesNothing(t *testing.T) {
	h := NewRunHeap(heapItemLess)
	for i := range 64 { // room in the run and in the heap
		h.Push(heapItem{at: 100 + i})
		h.Push(heapItem{at: i})
	}
	for h.Len() > 0 {
		h.Pop()
	}
	at := 0
	allocs := testing.AllocsPerRun(100, func() {
		h.Push(heapItem{at: at + 1}) // in order: the run
		h.Push(heapItem{at: at})     // out of order: the heap
		h.Pop()
		h.Pop()
		at += 2
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations a round of two pushes and two pops, want 0", allocs)
	}
}

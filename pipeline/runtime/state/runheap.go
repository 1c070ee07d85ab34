package state

import "slices"

// RunHeap is a Heap that items pushed in order skip: an item no less
// than the last one of its run goes to the back of that run (a FIFO),
// any other into the heap, and Top and Pop take the lesser of the run's
// front and the heap's top. The timers and waiting rows of an operator
// over input in event-time order (a batch run over sorted input, a
// stream with little disorder) are pushed in order: each then costs a
// compare to push and to pop, not a heap's log n swaps. Items equal
// under less come out in no particular order (as Heap's). The zero
// RunHeap is not usable; make one with NewRunHeap.
type RunHeap[T any] struct {
	run  []T
	head int // run[head:] is the run
	heap Heap[T]
}

// NewRunHeap returns an empty RunHeap ordered by less.
func NewRunHeap[T any](less func(a, b *T) bool) RunHeap[T] {
	return RunHeap[T]{heap: NewHeap(less)}
}

// Len is the number of items.
func (h *RunHeap[T]) Len() int { return len(h.run) - h.head + h.heap.Len() }

// fromRun reports whether the least item is the run's front.
func (h *RunHeap[T]) fromRun() bool {
	if h.head == len(h.run) {
		return false
	}
	return h.heap.Len() == 0 || !h.heap.less(h.heap.Top(), &h.run[h.head])
}

// Top returns the least item; the heap must not be empty.
func (h *RunHeap[T]) Top() *T {
	if h.fromRun() {
		return &h.run[h.head]
	}
	return h.heap.Top()
}

// Push adds x. It compares x where it lands at the run's back, never
// through &x: less is a func value, so handing it the argument's address
// moved every pushed item to the heap, an allocation a push.
func (h *RunHeap[T]) Push(x T) {
	n := len(h.run)
	if n == h.head {
		h.run, h.head = append(h.run[:0], x), 0
		return
	}
	h.run = append(h.run, x)
	if !h.heap.less(&h.run[n], &h.run[n-1]) {
		return
	}
	var zero T
	h.run[n] = zero // no reference kept in the run's spare room
	h.run = h.run[:n]
	h.heap.Push(x)
}

// Pop removes and returns the least item; the heap must not be empty.
func (h *RunHeap[T]) Pop() T {
	if !h.fromRun() {
		return h.heap.Pop()
	}
	x := h.run[h.head]
	var zero T
	h.run[h.head] = zero // no reference kept past the item's life
	h.head++
	switch {
	case h.head == len(h.run):
		h.run, h.head = h.run[:0], 0
	case h.head >= 64 && 2*h.head >= len(h.run):
		// Moving the run down costs no more than the pops that made room.
		n := copy(h.run, h.run[h.head:])
		clear(h.run[n:])
		h.run, h.head = h.run[:n], 0
	}
	return x
}

// Items returns the items, in no order, in a slice of their own.
func (h *RunHeap[T]) Items() []T {
	return append(slices.Clone(h.run[h.head:]), h.heap.Items()...)
}

// Fill replaces the items with items, in any order (a restore).
func (h *RunHeap[T]) Fill(items []T) {
	clear(h.run)
	h.run, h.head = h.run[:0], 0
	h.heap.Fill(items)
}

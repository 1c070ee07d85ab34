package state

// Heap is a binary min-heap of T by less, written out for the types it
// holds rather than through container/heap's interface, which boxes
// every pushed value: the timers and waiting rows it keeps are pushed
// once per input row. The zero Heap is not usable; make one with
// NewHeap.
type Heap[T any] struct {
	items []T
	less  func(a, b *T) bool
}

// NewHeap returns an empty heap ordered by less.
func NewHeap[T any](less func(a, b *T) bool) Heap[T] { return Heap[T]{less: less} }

// Len is the number of items.
func (h *Heap[T]) Len() int { return len(h.items) }

// Top returns the least item; the heap must not be empty.
func (h *Heap[T]) Top() *T { return &h.items[0] }

// Push adds x.
func (h *Heap[T]) Push(x T) {
	h.items = append(h.items, x)
	q := h.items
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(&q[i], &q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

// Pop removes and returns the least item; the heap must not be empty.
func (h *Heap[T]) Pop() T {
	q := h.items
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	var zero T
	q[last] = zero // no reference kept past the item's life
	q = q[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(q) {
			break
		}
		if c+1 < len(q) && h.less(&q[c+1], &q[c]) {
			c++
		}
		if !h.less(&q[c], &q[i]) {
			break
		}
		q[i], q[c] = q[c], q[i]
		i = c
	}
	h.items = q
	return top
}

// Items returns the items in heap order (a snapshot writes them; the
// order is not sorted). The slice must not be modified.
func (h *Heap[T]) Items() []T { return h.items }

// Reset empties the heap, keeping its memory.
func (h *Heap[T]) Reset() {
	clear(h.items)
	h.items = h.items[:0]
}

// Fill replaces the items with items, in any order, and orders them into
// a heap (a restore).
func (h *Heap[T]) Fill(items []T) {
	h.items = items
	for i := len(items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *Heap[T]) down(i int) {
	q := h.items
	for {
		c := 2*i + 1
		if c >= len(q) {
			return
		}
		if c+1 < len(q) && h.less(&q[c+1], &q[c]) {
			c++
		}
		if !h.less(&q[c], &q[i]) {
			return
		}
		q[i], q[c] = q[c], q[i]
		i = c
	}
}

package state

// KeyHeap is a binary min-heap of items by an int64 key kept beside each
// item (a timer's time). It is Heap with its comparison written in:
// Heap calls less for each of the two comparisons per level of a Pop,
// which nearly doubles the work of a heap whose items are pushed and
// popped once per input row (an interval join's cleanup timers). Items
// of equal keys come out in no particular order. The zero KeyHeap is an
// empty heap.
type KeyHeap[T any] struct {
	items []Keyed[T]
}

// Keyed is an item of a KeyHeap with its key.
type Keyed[T any] struct {
	Key  int64
	Item T
}

// Len is the number of items.
func (h *KeyHeap[T]) Len() int { return len(h.items) }

// Top returns the item of the least key; the heap must not be empty.
func (h *KeyHeap[T]) Top() *Keyed[T] { return &h.items[0] }

// Push adds x under key.
func (h *KeyHeap[T]) Push(key int64, x T) {
	h.items = append(h.items, Keyed[T]{Key: key, Item: x})
	q := h.items
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if q[p].Key <= q[i].Key {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

// Pop removes and returns the item of the least key; the heap must not
// be empty.
func (h *KeyHeap[T]) Pop() Keyed[T] {
	q := h.items
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = Keyed[T]{} // no reference kept past the item's life
	h.items = q[:last]
	h.down(0)
	return top
}

// Items returns the items in heap order (not sorted). The slice must not
// be modified.
func (h *KeyHeap[T]) Items() []Keyed[T] { return h.items }

// Reset empties the heap, keeping its memory.
func (h *KeyHeap[T]) Reset() {
	clear(h.items)
	h.items = h.items[:0]
}

// Fill replaces the items with items, in any order, and orders them into
// a heap (a restore).
func (h *KeyHeap[T]) Fill(items []Keyed[T]) {
	h.items = items
	for i := len(items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *KeyHeap[T]) down(i int) {
	q := h.items
	for {
		c := 2*i + 1
		if c >= len(q) {
			return
		}
		if c+1 < len(q) && q[c+1].Key < q[c].Key {
			c++
		}
		if q[i].Key <= q[c].Key {
			return
		}
		q[i], q[c] = q[c], q[i]
		i = c
	}
}

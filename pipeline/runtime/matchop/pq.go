package matchop

// pq is a priority queue of matches that behaves as java.util.PriorityQueue
// does with Flink's comparator (earlier): the same array, the same sifting,
// iteration in array order. Flink's NFA keeps its partial and completed
// matches in such queues, and which of two matches that began at the same
// row comes out first (and so which one AFTER MATCH SKIP keeps) depends on
// where the heap put them; an ordinary sort would pick differently.
type pq struct{ items []*partial }

// offer is PriorityQueue.offer: append and sift up.
func (q *pq) offer(x *partial) {
	k := len(q.items)
	q.items = append(q.items, x)
	for k > 0 {
		parent := (k - 1) / 2
		e := q.items[parent]
		if earlier(x, e) >= 0 {
			break
		}
		q.items[k] = e
		k = parent
	}
	q.items[k] = x
}

// addAll offers each of xs in order.
func (q *pq) addAll(xs []*partial) {
	for _, x := range xs {
		q.offer(x)
	}
}

func (q *pq) peek() *partial {
	if len(q.items) == 0 {
		return nil
	}
	return q.items[0]
}

// poll is PriorityQueue.poll: take the root, sift the last element down
// from it.
func (q *pq) poll() *partial {
	n := len(q.items) - 1
	top, x := q.items[0], q.items[n]
	q.items[n] = nil
	q.items = q.items[:n]
	if n > 0 {
		q.siftDown(0, x)
	}
	return top
}

func (q *pq) siftDown(k int, x *partial) {
	n := len(q.items)
	for half := n / 2; k < half; {
		child := 2*k + 1
		c := q.items[child]
		if right := child + 1; right < n && earlier(c, q.items[right]) > 0 {
			child, c = right, q.items[right]
		}
		if earlier(x, c) <= 0 {
			break
		}
		q.items[k] = c
		k = child
	}
	q.items[k] = x
}

// removeIf is PriorityQueue's bulk removal (removeAll, removeIf): keep
// the survivors in array order, then heapify, when anything was removed.
func (q *pq) removeIf(drop func(*partial) bool) {
	w := 0
	for _, x := range q.items {
		if !drop(x) {
			q.items[w] = x
			w++
		}
	}
	if w == len(q.items) {
		return
	}
	clear(q.items[w:])
	q.items = q.items[:w]
	for i := w/2 - 1; i >= 0; i-- {
		q.siftDown(i, q.items[i])
	}
}

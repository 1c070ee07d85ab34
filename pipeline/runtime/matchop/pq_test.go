package matchop

import "testing"

// TestQueueTiesFallAsJava pins the behaviour of java.util.PriorityQueue
// that decides Flink's ties: after polling the root of [1, 2a, 2b], the
// last element (2b) is sifted down from the root and stays there, since
// it is not greater than 2a; so 2b comes before 2a. A sorted list would
// give 2a.
func TestQueueTiesFallAsJava(t *testing.T) {
	one := &partial{startSeq: 1}
	a, b := &partial{startSeq: 2, state: 1}, &partial{startSeq: 2, state: 2}
	var q pq
	q.addAll([]*partial{one, a, b})
	if q.poll() != one {
		t.Fatal("poll did not give the earliest")
	}
	if got := q.poll(); got != b {
		t.Fatalf("after the root, got state %d, want 2b (Java's order)", got.state)
	}
	// Bulk removal keeps the survivors in array order and heapifies.
	q = pq{}
	for _, s := range []uint64{5, 3, 4, 1, 0, 2} {
		q.offer(&partial{startSeq: s})
	}
	q.removeIf(func(x *partial) bool { return x.startSeq == 1 })
	var order []uint64
	for q.peek() != nil {
		order = append(order, q.poll().startSeq)
	}
	want := []uint64{2, 3, 4, 5, 0} // the start state (0) sorts last
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
}

package joinop

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// ijTimers pops timers in time order through random pushes (mostly in
// order, as rows come, some behind), pops and refills.
func TestIJTimersInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	var h ijTimers
	var want []int64 // the times held, a multiset kept sorted
	last := int64(0)
	for i := range 50000 {
		switch r := rng.IntN(10); {
		case r < 6:
			at := last + rng.Int64N(5)
			if rng.IntN(3) == 0 {
				at -= rng.Int64N(40)
			}
			last = max(last, at)
			h.Push(ijTimer{at: at, kid: int32(i)})
			k, _ := slices.BinarySearch(want, at)
			want = slices.Insert(want, k, at)
		case r < 9 && len(want) > 0:
			if top := h.Top(); top != want[0] {
				t.Fatalf("step %d: top %d, want %d", i, top, want[0])
			}
			if got := h.Pop().at; got != want[0] {
				t.Fatalf("step %d: popped %d, want %d", i, got, want[0])
			}
			want = want[1:]
		case r == 9:
			items := make([]ijTimer, len(want))
			for k, at := range want {
				items[k] = ijTimer{at: at}
			}
			rng.Shuffle(len(items), func(a, b int) { items[a], items[b] = items[b], items[a] })
			h.Fill(items)
		}
		if h.Len() != len(want) {
			t.Fatalf("step %d: %d timers, want %d", i, h.Len(), len(want))
		}
	}
}

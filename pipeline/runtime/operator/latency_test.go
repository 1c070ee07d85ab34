package operator

import (
	"math"
	"testing"
	"time"
)

func TestLatency(t *testing.T) {
	var l Latency
	for _, d := range []time.Duration{200 * time.Microsecond, 3 * time.Millisecond, 3 * time.Millisecond, 2 * time.Second, 2 * time.Minute} {
		l.Observe(d)
	}
	s := l.Snapshot()
	if s.Count != 5 || s.Sum != 200*time.Microsecond+6*time.Millisecond+2*time.Second+2*time.Minute {
		t.Fatalf("count %d, sum %v", s.Count, s.Sum)
	}
	// 0.2 ms in the first bucket (<= 0.5 ms), 3 ms in (2.5 ms, 5 ms],
	// 2 s in (1 s, 2.5 s], 2 min above every bound.
	want := map[int]uint64{0: 1, 3: 2, 11: 1, len(LatencyBounds): 1}
	for i, n := range s.Buckets {
		if n != want[i] {
			t.Errorf("bucket %d holds %d, want %d", i, n, want[i])
		}
	}
	if q := s.Quantile(0.5); q != 0.005 {
		t.Errorf("median bound %v, want 0.005", q)
	}
	if q := s.Quantile(1); !math.IsInf(q, 1) {
		t.Errorf("max bound %v, want +Inf", q)
	}
	sum := s.Add(s)
	if sum.Count != 10 || sum.Buckets[3] != 4 || sum.Sum != 2*s.Sum {
		t.Errorf("two runs add to %+v", sum)
	}
	if (LatencySnapshot{}).Quantile(0.99) != 0 {
		t.Error("the quantile of no calls")
	}
}

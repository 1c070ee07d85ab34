package operator

import (
	"math"
	"sync/atomic"
	"time"
)

// LatencyBounds are the upper bounds, in seconds, of a Latency's
// buckets: from half a millisecond (a write into a buffer) to a minute
// (a target that is away, retried).
var LatencyBounds = [...]float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Latency is a histogram of call durations (a sink's writes, a lookup
// join's lookups), for /metrics: Observe from the one goroutine that
// makes the calls, Snapshot from any. It costs a few atomic adds a call.
type Latency struct {
	counts [len(LatencyBounds) + 1]atomic.Uint64 // by bucket, the last one above every bound
	sum    atomic.Int64                          // nanoseconds
}

// Observe counts one call of duration d.
func (l *Latency) Observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(LatencyBounds) && s > LatencyBounds[i] {
		i++
	}
	l.counts[i].Add(1)
	l.sum.Add(int64(d))
}

// Snapshot reads the histogram now.
func (l *Latency) Snapshot() LatencySnapshot {
	var s LatencySnapshot
	s.Buckets = make([]uint64, len(l.counts))
	for i := range l.counts {
		s.Buckets[i] = l.counts[i].Load()
		s.Count += s.Buckets[i]
	}
	s.Sum = time.Duration(l.sum.Load())
	return s
}

// LatencySnapshot is a Latency as read: the calls per bucket of
// LatencyBounds (not cumulative; the last counts those above every
// bound), their number and their total time.
type LatencySnapshot struct {
	Count   uint64
	Sum     time.Duration
	Buckets []uint64
}

// Add returns the sum of two snapshots (of two runs of a pipeline).
func (s LatencySnapshot) Add(o LatencySnapshot) LatencySnapshot {
	out := LatencySnapshot{Count: s.Count + o.Count, Sum: s.Sum + o.Sum, Buckets: make([]uint64, len(LatencyBounds)+1)}
	for i := range out.Buckets {
		if i < len(s.Buckets) {
			out.Buckets[i] += s.Buckets[i]
		}
		if i < len(o.Buckets) {
			out.Buckets[i] += o.Buckets[i]
		}
	}
	return out
}

// Quantile is the upper bound of the bucket that holds the q-th quantile
// of the calls (0 < q <= 1), in seconds: a bound, not an estimate within
// the bucket. It is 0 without calls, and +Inf when the quantile is above
// every bound.
func (s LatencySnapshot) Quantile(q float64) float64 {
	if s.Count == 0 {
		return 0
	}
	rank := uint64(q*float64(s.Count) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i, n := range s.Buckets {
		seen += n
		if seen >= rank {
			if i < len(LatencyBounds) {
				return LatencyBounds[i]
			}
			break
		}
	}
	return math.Inf(1)
}

// Looker is an operator that looks rows up in a table by key (a lookup
// join), for /metrics. LookupCounts is called from other goroutines.
type Looker interface {
	LookupCounts() LookupCounts
}

// LookupCounts are what a lookup join's lookups did: the input rows
// whose key its cache held (Hits) or did not (Misses), the keys it
// looked up in RoundTrips queries, and the time of each lookup call.
type LookupCounts struct {
	Hits, Misses, Keys, RoundTrips int64
	Latency                        LatencySnapshot
}

// HitRatio is Hits over the rows with a key, 0 before any.
func (c LookupCounts) HitRatio() float64 {
	if c.Hits+c.Misses == 0 {
		return 0
	}
	return float64(c.Hits) / float64(c.Hits+c.Misses)
}

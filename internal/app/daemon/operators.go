package daemon

import (
	"slices"
	"time"

	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// OperatorStatus is one operator of a pipeline, named by its short id
// (plan.NodeInfo.OperatorID, the `operator` label of /metrics), with its
// plan text beside it. Its counters add up every run of this version of
// the file.
type OperatorStatus struct {
	Operator  string `json:"operator"`
	Plan      string `json:"plan"`
	Transform string `json:"transform,omitempty"`
	In        int64  `json:"rows_in"`
	Out       int64  `json:"rows_out"`
	TimeStatus
	// Lookup, for a lookup join, is what its lookups did.
	Lookup *LookupStatus `json:"lookup,omitempty"`
}

// TimeStatus is a node's time: its watermark, from the current run (the
// last run's when none runs), and where its time went, over every run.
type TimeStatus struct {
	// Watermark is the watermark its data gave, absent before the
	// first; WatermarkEnded says the input ended since (the watermark
	// then stands at the end of time).
	Watermark      *time.Time `json:"watermark,omitempty"`
	WatermarkEnded bool       `json:"watermark_ended,omitempty"`
	// LagSeconds is the event-time lag: how far the watermark is behind
	// the clock, while the input has not ended.
	LagSeconds *float64 `json:"event_time_lag_seconds,omitempty"`
	// BusySeconds is the time the node worked, BackpressureSeconds the
	// time it waited for room in its output (sinks have none).
	BusySeconds         float64 `json:"busy_seconds,omitempty"`
	BackpressureSeconds float64 `json:"backpressure_seconds,omitempty"`
	// Retries counts the retries of the node's calls to its connector.
	Retries int64 `json:"retries,omitempty"`
}

// addTime adds a run's counters to t's.
func (t *TimeStatus) addTime(x pipeline.Time) {
	t.BusySeconds += x.Busy.Seconds()
	t.BackpressureSeconds += x.Backpressure.Seconds()
	t.Retries += x.Retries
}

// addTimes adds both counters.
func (t *TimeStatus) addTimes(x TimeStatus) {
	t.BusySeconds += x.BusySeconds
	t.BackpressureSeconds += x.BackpressureSeconds
	t.Retries += x.Retries
}

// setLevels sets t's watermark from a run's t at now.
func (t *TimeStatus) setLevels(x pipeline.Time, now time.Time) {
	t.Watermark, t.WatermarkEnded, t.LagSeconds = nil, false, nil
	if !x.Watermark.IsZero() {
		wm := x.Watermark
		t.Watermark, t.WatermarkEnded = &wm, x.WatermarkEnded
	}
	if lag, ok := x.Lag(now); ok {
		s := lag.Seconds()
		t.LagSeconds = &s
	}
}

// LatencyStatus is a histogram of call durations: how many, their total
// time, and the bounds of the buckets holding the median and the 99th
// percentile (absent when above the largest bound, a minute).
type LatencyStatus struct {
	Count      uint64   `json:"count"`
	SumSeconds float64  `json:"sum_seconds"`
	P50        *float64 `json:"p50_seconds,omitempty"`
	P99        *float64 `json:"p99_seconds,omitempty"`
	// Snapshot is the histogram, for /metrics.
	Snapshot operator.LatencySnapshot `json:"-"`
}

func latencyStatus(s operator.LatencySnapshot) *LatencyStatus {
	out := &LatencyStatus{Count: s.Count, SumSeconds: s.Sum.Seconds(), Snapshot: s}
	bound := func(q float64) *float64 {
		v := s.Quantile(q)
		if v > operator.LatencyBounds[len(operator.LatencyBounds)-1] || s.Count == 0 {
			return nil
		}
		return &v
	}
	out.P50, out.P99 = bound(0.5), bound(0.99)
	return out
}

// addLatency adds two runs' histograms.
func addLatency(a, b *LatencyStatus) *LatencyStatus {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return latencyStatus(a.Snapshot.Add(b.Snapshot))
}

// LookupStatus is what a lookup join's lookups did: input rows whose key
// the cache held or not (and the ratio), keys looked up, queries sent,
// and the time of each lookup call.
type LookupStatus struct {
	Hits       int64          `json:"cache_hits"`
	Misses     int64          `json:"cache_misses"`
	HitRatio   float64        `json:"cache_hit_ratio"`
	Keys       int64          `json:"keys_looked_up"`
	RoundTrips int64          `json:"round_trips"`
	Latency    *LatencyStatus `json:"latency"`
}

func lookupStatus(c *operator.LookupCounts) *LookupStatus {
	if c == nil {
		return nil
	}
	return &LookupStatus{Hits: c.Hits, Misses: c.Misses, HitRatio: c.HitRatio(), Keys: c.Keys, RoundTrips: c.RoundTrips, Latency: latencyStatus(c.Latency)}
}

// mergeLookup adds two runs' lookups.
func mergeLookup(a, b *LookupStatus) *LookupStatus {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := *a
	out.Hits += b.Hits
	out.Misses += b.Misses
	out.Keys += b.Keys
	out.RoundTrips += b.RoundTrips
	out.Latency = addLatency(a.Latency, b.Latency)
	out.HitRatio = operator.LookupCounts{Hits: out.Hits, Misses: out.Misses}.HitRatio()
	return &out
}

// PartitionStatus is a source's lag on one partition: in messages, and
// in the messages' own times where the source knows the newest one's.
type PartitionStatus struct {
	Partition  string   `json:"partition"`
	Lag        int64    `json:"lag"`
	LagSeconds *float64 `json:"lag_seconds,omitempty"`
}

func partitions(lags []connector.PartitionLag) []PartitionStatus {
	out := make([]PartitionStatus, len(lags))
	for i, l := range lags {
		out[i] = PartitionStatus{Partition: l.Partition, Lag: l.Messages}
		if l.SecondsKnown {
			s := l.Seconds
			out[i].LagSeconds = &s
		}
	}
	return out
}

// CheckpointEntry is one completed checkpoint: when, how long from its
// trigger until stored, its size, and the longest a union held an input
// for its barrier (alignment).
type CheckpointEntry struct {
	ID               int64     `json:"id"`
	At               time.Time `json:"at"`
	DurationSeconds  float64   `json:"duration_seconds"`
	SizeBytes        int64     `json:"size_bytes"`
	AlignmentSeconds float64   `json:"alignment_seconds"`
	// Final: taken when the run ended.
	Final bool `json:"final,omitempty"`
}

// recentCheckpoints appends a run's checkpoints to old, in a new slice of
// the last runtime.CheckpointHistory.
func recentCheckpoints(old []CheckpointEntry, run []runtime.CheckpointRecord) []CheckpointEntry {
	out := slices.Clone(old)
	for _, r := range run {
		out = append(out, CheckpointEntry{ID: r.ID, At: r.At.UTC(), DurationSeconds: r.Duration.Seconds(), SizeBytes: r.Size,
			AlignmentSeconds: r.Alignment.Seconds(), Final: r.Final})
	}
	if n := len(out) - runtime.CheckpointHistory; n > 0 {
		out = out[n:]
	}
	return out
}

// operatorTotals adds finished runs' operator counters, by id.
type operatorTotals map[string]OperatorStatus

func (t operatorTotals) add(ops []pipeline.Operator) {
	for _, o := range ops {
		old, ok := t[o.ID]
		if !ok {
			old = OperatorStatus{Operator: o.ID, Plan: o.Plan, Transform: o.Transform}
		}
		old.In += o.In
		old.Out += o.Out
		old.addTime(o.Time)
		old.Lookup = mergeLookup(old.Lookup, lookupStatus(o.Lookup))
		t[o.ID] = old
	}
}

// operators lists the unit's operators in the order of its plan, the
// finished runs' counters added to the current run's (cur), with the
// levels (watermarks) of levels, the current run's or the last one's.
// Call with u.mu held.
func (u *unit) operators(cur, levels []pipeline.Operator, at time.Time) []OperatorStatus {
	if u.plan == nil {
		return nil
	}
	now := operatorTotals{}
	now.add(cur)
	times := map[string]pipeline.Time{}
	for _, o := range levels {
		times[o.ID] = o.Time
	}
	var out []OperatorStatus
	for _, n := range u.plan.Nodes {
		id := n.OperatorID
		b, inBase := u.opBase[id]
		c, inCur := now[id]
		if id == "" || !inBase && !inCur {
			continue // not an operator, or one that runs as its input (a renaming)
		}
		o := c
		if !inCur {
			o = b
		}
		o.In, o.Out = b.In+c.In, b.Out+c.Out
		o.TimeStatus = b.TimeStatus
		o.addTimes(c.TimeStatus)
		o.setLevels(times[id], at)
		o.Lookup = mergeLookup(b.Lookup, c.Lookup)
		out = append(out, o)
	}
	return out
}

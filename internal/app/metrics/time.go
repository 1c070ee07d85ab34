package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/etld/etld/internal/app/daemon"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// The series of time and pressure: watermarks, where each node's time
// goes, the calls of sinks and lookup joins, checkpoints' alignment and
// Kafka partitions' lag.

type timeDescs struct {
	watermark, eventLag                         *prometheus.Desc
	opBusy, opBackpressure, opRetries           *prometheus.Desc
	srcBusy, srcBackpressure, srcRetries        *prometheus.Desc
	sinkBusy, sinkRetries, sinkWrite, sinkFlush *prometheus.Desc
	sinkPending                                 *prometheus.Desc
	lookupLatency, lookupHits, lookupMisses     *prometheus.Desc
	lookupKeys, lookupTrips                     *prometheus.Desc
	cpAlignment                                 *prometheus.Desc
	partLag, partLagSeconds                     *prometheus.Desc
}

func newTimeDescs() timeDescs {
	d := prometheus.NewDesc
	op := []string{"pipeline", "operator"}
	src := []string{"pipeline", "source"}
	sink := []string{"pipeline", "sink"}
	// A source's series has the source label, an operator's the
	// operator label (the other is empty, which Prometheus drops).
	node := []string{"pipeline", "source", "operator"}
	return timeDescs{
		watermark:       d("etld_watermark_timestamp_seconds", "The watermark of a source or operator, from its data's event times (Unix time); it stays at the last one when a bounded input ends.", node, nil),
		eventLag:        d("etld_event_time_lag_seconds", "How far a source's or operator's watermark is behind the clock; absent once its input ended.", node, nil),
		opBusy:          d("etld_operator_busy_seconds_total", "Time an operator spent working on its input.", op, nil),
		opBackpressure:  d("etld_operator_backpressure_seconds_total", "Time an operator waited for room in its output: the operators after it are slower.", op, nil),
		opRetries:       d("etld_operator_retries_total", "Retries of a lookup join's lookups after a failure.", op, nil),
		srcBusy:         d("etld_source_busy_seconds_total", "Time a source spent reading (a bounded one) and preparing batches; an unbounded source's waits for new records are left out.", src, nil),
		srcBackpressure: d("etld_source_backpressure_seconds_total", "Time a source waited for room in its output: the operators after it are slower.", src, nil),
		srcRetries:      d("etld_source_retries_total", "Retries of a source's calls (connecting, reading, committing) after a failure.", src, nil),
		sinkBusy:        d("etld_sink_busy_seconds_total", "Time a sink spent in its connector's Write and Flush.", sink, nil),
		sinkRetries:     d("etld_sink_retries_total", "Retries of a sink's writes after a failure (a target that is away).", sink, nil),
		sinkWrite:       d("etld_sink_write_duration_seconds", "Duration of a sink's Write calls (a buffering sink's are short; its Flush sends).", sink, nil),
		sinkFlush:       d("etld_sink_flush_duration_seconds", "Duration of a sink's Flush calls: everything written before is acknowledged by the target.", sink, nil),
		sinkPending:     d("etld_sink_pending_call_seconds", "How long the sink's Write or Flush under way has been running, 0 between calls: a target that hangs shows here.", sink, nil),
		lookupLatency:   d("etld_lookup_duration_seconds", "Duration of a lookup join's lookups (one call for a batch's keys the cache did not hold).", op, nil),
		lookupHits:      d("etld_lookup_cache_hits_total", "Input rows of a lookup join whose key the cache held.", op, nil),
		lookupMisses:    d("etld_lookup_cache_misses_total", "Input rows of a lookup join whose key the cache did not hold (looked up).", op, nil),
		lookupKeys:      d("etld_lookup_keys_total", "Keys a lookup join looked up.", op, nil),
		lookupTrips:     d("etld_lookup_round_trips_total", "Queries a lookup join's table was sent.", op, nil),
		partLag:         d("etld_source_partition_lag_messages", "Messages between a source's position and the end of one partition (Kafka consumer lag).", []string{"pipeline", "source", "partition"}, nil),
		partLagSeconds:  d("etld_source_partition_lag_seconds", "A partition's lag in the messages' own times: the newest message's timestamp less the last one read's; absent while the source has not fetched the newest.", []string{"pipeline", "source", "partition"}, nil),
		cpAlignment:     d("etld_checkpoint_last_alignment_seconds", "The longest a union (UNION ALL, a join's inputs) held an input for the newest checkpoint's barrier.", []string{"pipeline"}, nil),
	}
}

func (d timeDescs) describe(ch chan<- *prometheus.Desc) {
	for _, x := range []*prometheus.Desc{d.watermark, d.eventLag, d.opBusy, d.opBackpressure, d.opRetries, d.srcBusy, d.srcBackpressure, d.srcRetries,
		d.sinkBusy, d.sinkRetries, d.sinkWrite, d.sinkFlush, d.sinkPending, d.lookupLatency, d.lookupHits, d.lookupMisses, d.lookupKeys, d.lookupTrips, d.cpAlignment, d.partLag, d.partLagSeconds} {
		ch <- x
	}
}

// collect sends the time series of st.
func (d timeDescs) collect(ch chan<- prometheus.Metric, st daemon.Status) {
	counter := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, labels...)
	}
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	levels := func(t daemon.TimeStatus, source, operator string) {
		if t.Watermark != nil {
			gauge(d.watermark, float64(t.Watermark.UnixMicro())/1e6, st.Name, source, operator)
		}
		if t.LagSeconds != nil {
			gauge(d.eventLag, *t.LagSeconds, st.Name, source, operator)
		}
	}
	for _, s := range st.Sources {
		levels(s.TimeStatus, s.Name, "")
		counter(d.srcBusy, s.BusySeconds, st.Name, s.Name)
		counter(d.srcBackpressure, s.BackpressureSeconds, st.Name, s.Name)
		counter(d.srcRetries, float64(s.Retries), st.Name, s.Name)
		for _, p := range s.Partitions {
			gauge(d.partLag, float64(p.Lag), st.Name, s.Name, p.Partition)
			if p.LagSeconds != nil {
				gauge(d.partLagSeconds, *p.LagSeconds, st.Name, s.Name, p.Partition)
			}
		}
	}
	for _, o := range st.Operators {
		levels(o.TimeStatus, "", o.Operator)
		counter(d.opBusy, o.BusySeconds, st.Name, o.Operator)
		counter(d.opBackpressure, o.BackpressureSeconds, st.Name, o.Operator)
		if l := o.Lookup; l != nil {
			counter(d.opRetries, float64(o.Retries), st.Name, o.Operator)
			histogram(ch, d.lookupLatency, l.Latency, st.Name, o.Operator)
			counter(d.lookupHits, float64(l.Hits), st.Name, o.Operator)
			counter(d.lookupMisses, float64(l.Misses), st.Name, o.Operator)
			counter(d.lookupKeys, float64(l.Keys), st.Name, o.Operator)
			counter(d.lookupTrips, float64(l.RoundTrips), st.Name, o.Operator)
		}
	}
	for _, s := range st.Sinks {
		counter(d.sinkBusy, s.BusySeconds, st.Name, s.Name)
		counter(d.sinkRetries, float64(s.Retries), st.Name, s.Name)
		histogram(ch, d.sinkWrite, s.Writes, st.Name, s.Name)
		histogram(ch, d.sinkFlush, s.Flushes, st.Name, s.Name)
		if s.PendingCallSeconds != nil {
			gauge(d.sinkPending, *s.PendingCallSeconds, st.Name, s.Name)
		}
	}
	if r := st.Checkpoints.Recent; len(r) > 0 {
		gauge(d.cpAlignment, r[len(r)-1].AlignmentSeconds, st.Name)
	}
}

// histogram sends l as a Prometheus histogram (empty when nil: the
// series exist before the first call).
func histogram(ch chan<- prometheus.Metric, desc *prometheus.Desc, l *daemon.LatencyStatus, labels ...string) {
	var s operator.LatencySnapshot
	if l != nil {
		s = l.Snapshot
	}
	buckets := make(map[float64]uint64, len(operator.LatencyBounds))
	var seen uint64
	for i, bound := range operator.LatencyBounds {
		if i < len(s.Buckets) {
			seen += s.Buckets[i]
		}
		buckets[bound] = seen
	}
	ch <- prometheus.MustNewConstHistogram(desc, s.Count, s.Sum.Seconds(), buckets, labels...)
}

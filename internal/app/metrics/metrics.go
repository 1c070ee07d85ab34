// Package metrics exposes the daemon's pipelines to Prometheus. The
// counters live in the pipelines (pipeline.Summary, connector.Meter,
// connector.Lagger); a Collector reads them at scrape time, so nothing is
// counted twice and a scrape costs one status walk.
package metrics

import (
	"cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/etld/etld/internal/app/daemon"
	"github.com/etld/etld/pipeline"
)

// StatusFunc lists the pipelines (daemon.Supervisor.Status).
type StatusFunc func() []daemon.Status

// Collector turns pipeline status into metrics.
type Collector struct {
	status StatusFunc
	descs  descs
}

type descs struct {
	state, restarts, reloadFailed                     *prometheus.Desc
	srcRead, srcEmitted, srcSkipped, srcBytes, srcLag *prometheus.Desc
	sinkIn, sinkWritten, sinkRejected, sinkBytes      *prometheus.Desc
	dropped                                           *prometheus.Desc
	cpCount, cpFailures, cpDuration, cpSize           *prometheus.Desc
	srcDLQ, sinkDLQ, errors, stateEntries, stateBytes *prometheus.Desc
	cpLastAt                                          *prometheus.Desc
	backfillRows, backfillPhase                       *prometheus.Desc
	time                                              timeDescs
}

func newDescs() descs {
	p := []string{"pipeline"}
	src := []string{"pipeline", "source"}
	sink := []string{"pipeline", "sink"}
	d := prometheus.NewDesc
	return descs{
		state:         d("etld_pipeline_state", "1 for the pipeline's current state, 0 for the others.", []string{"pipeline", "state"}, nil),
		restarts:      d("etld_pipeline_restarts_total", "Runs begun again after a failure.", p, nil),
		reloadFailed:  d("etld_pipeline_reload_failed", "1 when the pipeline's file changed and does not load: the previous version keeps running.", p, nil),
		srcRead:       d("etld_source_rows_read_total", "Records the source read.", src, nil),
		srcEmitted:    d("etld_source_rows_emitted_total", "Rows the source passed on, after decoding and computed columns.", src, nil),
		srcSkipped:    d("etld_source_rows_skipped_total", "Bad records skipped or dead-lettered (on_error).", src, nil),
		srcBytes:      d("etld_source_bytes_total", "Bytes the source read, for connectors that count them.", src, nil),
		srcLag:        d("etld_source_lag_messages", "Messages between the source's position and the end of its input (Kafka consumer lag).", src, nil),
		sinkIn:        d("etld_sink_rows_received_total", "Changes that reached the sink.", sink, nil),
		sinkWritten:   d("etld_sink_rows_written_total", "Changes the sink's target acknowledged (refused ones are in etld_sink_rows_rejected_total).", sink, nil),
		sinkRejected:  d("etld_sink_rows_rejected_total", "Changes the target refused for good (sink on_error skip or dead-letter).", sink, nil),
		sinkBytes:     d("etld_sink_bytes_total", "Bytes the sink wrote, for connectors that count them.", sink, nil),
		dropped:       d("etld_operator_rows_dropped_total", "Rows an operator discarded, by reason (late: behind the watermark).", []string{"pipeline", "operator", "reason"}, nil),
		cpCount:       d("etld_checkpoints_total", "Completed checkpoints.", p, nil),
		cpFailures:    d("etld_checkpoint_failures_total", "Checkpoints that could not be stored.", p, nil),
		cpDuration:    d("etld_checkpoint_last_duration_seconds", "Time from the newest checkpoint's trigger until it was stored.", p, nil),
		cpSize:        d("etld_checkpoint_last_size_bytes", "Size of the newest checkpoint's file (0 without a state dir).", p, nil),
		backfillRows:  d("etld_backfill_rows_replayed", "Records the running backfill of an edit of the pipeline's file replayed, both plans' together (present while one runs).", p, nil),
		backfillPhase: d("etld_backfill_phase", "1 for the running backfill's phase (replay, follow, waiting, catch-up, write), 0 for the others; present while one runs.", []string{"pipeline", "phase"}, nil),
		cpLastAt:      d("etld_checkpoint_last_timestamp_seconds", "When the newest checkpoint completed (Unix time).", p, nil),
		srcDLQ:        d("etld_source_rows_dead_lettered_total", "Bad records written to the source's dead letter (part of etld_source_rows_skipped_total).", src, nil),
		sinkDLQ:       d("etld_sink_rows_dead_lettered_total", "Refused changes written to the sink's dead letter (part of etld_sink_rows_rejected_total).", sink, nil),
		errors:        d("etld_pipeline_errors_total", "Errors the pipeline met: failed runs and a file that did not load.", p, nil),
		stateEntries:  d("etld_operator_state_entries", "Entries a stateful operator holds (groups, window groups, distinct rows).", []string{"pipeline", "operator", "state_id"}, nil),
		stateBytes:    d("etld_operator_state_bytes", "Size of a stateful operator's newest snapshot (0 before the first checkpoint).", []string{"pipeline", "operator", "state_id"}, nil),
		time:          newTimeDescs(),
	}
}

// NewCollector returns a collector over status.
func NewCollector(status StatusFunc) *Collector {
	return &Collector{status: status, descs: newDescs()}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	d := c.descs
	for _, x := range []*prometheus.Desc{d.state, d.restarts, d.reloadFailed, d.srcRead, d.srcEmitted, d.srcSkipped, d.srcBytes, d.srcLag, d.sinkIn, d.sinkWritten, d.sinkRejected, d.sinkBytes, d.dropped, d.cpCount, d.cpFailures, d.cpDuration, d.cpSize, d.cpLastAt, d.srcDLQ, d.sinkDLQ, d.errors, d.stateEntries, d.stateBytes, d.backfillRows, d.backfillPhase} {
		ch <- x
	}
	d.time.describe(ch)
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	d := c.descs
	counter := func(desc *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), labels...)
	}
	seen := map[string]bool{}
	for _, st := range c.status() {
		// Two files with one name: the second does not load; its
		// metrics would collide with the first's, so the first wins.
		if seen[st.Name] {
			continue
		}
		seen[st.Name] = true
		for _, s := range daemon.States {
			v := 0.0
			if s == st.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(d.state, prometheus.GaugeValue, v, st.Name, string(s))
		}
		counter(d.restarts, int64(st.Restarts), st.Name)
		if b := st.Backfill; b != nil {
			ch <- prometheus.MustNewConstMetric(d.backfillRows, prometheus.GaugeValue, float64(b.RowsReplayed), st.Name)
			for _, ph := range []string{pipeline.PhaseReplay, pipeline.PhaseFollow, pipeline.PhaseWaiting, pipeline.PhaseCatchUp, pipeline.PhaseWrite} {
				v := 0.0
				if ph == b.Phase {
					v = 1
				}
				ch <- prometheus.MustNewConstMetric(d.backfillPhase, prometheus.GaugeValue, v, st.Name, ph)
			}
		}
		counter(d.errors, int64(st.Errors), st.Name)
		reloadFailed := 0.0
		if st.ReloadError != "" {
			reloadFailed = 1
		}
		ch <- prometheus.MustNewConstMetric(d.reloadFailed, prometheus.GaugeValue, reloadFailed, st.Name)
		for _, s := range st.Sources {
			counter(d.srcRead, s.In, st.Name, s.Name)
			counter(d.srcEmitted, s.Out, st.Name, s.Name)
			counter(d.srcSkipped, s.Skipped, st.Name, s.Name)
			counter(d.srcDLQ, s.DeadLettered, st.Name, s.Name)
			if s.Bytes != nil {
				counter(d.srcBytes, *s.Bytes, st.Name, s.Name)
			}
			if s.Lag != nil {
				ch <- prometheus.MustNewConstMetric(d.srcLag, prometheus.GaugeValue, float64(*s.Lag), st.Name, s.Name)
			}
		}
		for _, s := range st.Sinks {
			counter(d.sinkIn, s.In, st.Name, s.Name)
			counter(d.sinkWritten, s.Out, st.Name, s.Name)
			counter(d.sinkRejected, s.Skipped, st.Name, s.Name)
			counter(d.sinkDLQ, s.DeadLettered, st.Name, s.Name)
			if s.Bytes != nil {
				counter(d.sinkBytes, *s.Bytes, st.Name, s.Name)
			}
		}
		for _, o := range st.Dropped {
			counter(d.dropped, o.Skipped, st.Name, o.Name, cmp.Or(o.Reason, "other"))
		}
		d.time.collect(ch, st)
		for _, o := range st.OperatorState {
			ch <- prometheus.MustNewConstMetric(d.stateEntries, prometheus.GaugeValue, float64(o.Entries), st.Name, o.Operator, o.StateID)
			ch <- prometheus.MustNewConstMetric(d.stateBytes, prometheus.GaugeValue, float64(o.Bytes), st.Name, o.Operator, o.StateID)
		}
		cp := st.Checkpoints
		counter(d.cpCount, cp.Count, st.Name)
		counter(d.cpFailures, cp.Failures, st.Name)
		if cp.LastID != 0 {
			ch <- prometheus.MustNewConstMetric(d.cpDuration, prometheus.GaugeValue, cp.LastDuration.Seconds(), st.Name)
			ch <- prometheus.MustNewConstMetric(d.cpSize, prometheus.GaugeValue, float64(cp.LastSize), st.Name)
			if cp.LastAt != nil {
				ch <- prometheus.MustNewConstMetric(d.cpLastAt, prometheus.GaugeValue, float64(cp.LastAt.UnixNano())/1e9, st.Name)
			}
		}
	}
}

// Registry is the daemon's Prometheus registry: the pipelines, reloads,
// build info, and the Go runtime and process collectors. It is a value,
// never the global default registry.
type Registry struct {
	*prometheus.Registry
	Reloads *prometheus.CounterVec
}

// NewRegistry registers everything over status.
func NewRegistry(status StatusFunc, version string) *Registry {
	reg := prometheus.NewRegistry()
	reloads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etld_reloads_total",
		Help: "Reloads of the pipelines directory (SIGHUP), by result: ok, or error when the directory could not be read or a file did not load.",
	}, []string{"result"})
	reloads.WithLabelValues("ok")
	reloads.WithLabelValues("error")
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "etld_build_info",
		Help:        "Always 1; the version label says which etld runs.",
		ConstLabels: prometheus.Labels{"version": version},
	})
	info.Set(1)
	reg.MustRegister(NewCollector(status), reloads, info,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Registry{Registry: reg, Reloads: reloads}
}

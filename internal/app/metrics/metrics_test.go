package metrics

import (
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/etld/etld/internal/app/daemon"
)

func ptr(n int64) *int64 { return &n }

func TestCollector(t *testing.T) {
	lastAt := time.Unix(1700000000, 500_000_000)
	wm, lag := time.Unix(1700000100, 250_000_000), 2.5
	status := []daemon.Status{
		{
			Name: "orders", File: "orders.yaml", State: daemon.Running, Restarts: 2, Errors: 3,
			Sources:       []daemon.Counter{{Name: "kafka_in", In: 10, Out: 9, Skipped: 1, Bytes: ptr(1234), Lag: ptr(42), TimeStatus: daemon.TimeStatus{Watermark: &wm, LagSeconds: &lag}}},
			Operators:     []daemon.OperatorStatus{{Operator: "q/window_aggregate#1", TimeStatus: daemon.TimeStatus{Watermark: &wm, WatermarkEnded: true}}},
			Sinks:         []daemon.Counter{{Name: "es", In: 9, Out: 8, Skipped: 1, DeadLettered: 1, Bytes: ptr(999)}},
			Dropped:       []daemon.Counter{{Name: "window", Skipped: 3, Reason: "late"}},
			Checkpoints:   daemon.Checkpoints{Count: 4, Failures: 1, LastID: 5, LastDuration: 1500 * time.Millisecond, LastSize: 2048, LastAt: &lastAt},
			OperatorState: []daemon.StateSize{{Operator: "q/group_aggregate#1", Plan: "GroupAggregate(groupBy=[id])", StateID: "transform/q/group_aggregate#1", Entries: 7, Bytes: 300}},
		},
		{Name: "logs", File: "logs.yaml", State: daemon.Finished, Sources: []daemon.Counter{{Name: "file", In: 5, Out: 5}}},
		// Its file changed and does not load; the previous version runs.
		{Name: "edited", File: "edited.yaml", State: daemon.Running, ReloadError: "edited.yaml:3:1: unknown key"},
		// An edit backfilled while the previous version serves.
		{Name: "rebuilt", File: "rebuilt.yaml", State: daemon.Backfilling, Backfill: &daemon.BackfillStatus{Phase: "catch-up", Checkpoint: 4, RowsReplayed: 1200}},
		// A second file with a used name: skipped rather than a duplicate series.
		{Name: "logs", File: "logs2.yaml", State: daemon.Failed},
	}
	reg := NewRegistry(func() []daemon.Status { return status }, "v1.2.3")
	reg.Reloads.WithLabelValues("ok").Inc()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			got[f.GetName()+labels(m)] = value(m)
		}
	}
	want := map[string]float64{
		`etld_pipeline_state{pipeline="orders",state="running"}`:                                                                 1,
		`etld_pipeline_state{pipeline="orders",state="failed"}`:                                                                  0,
		`etld_pipeline_state{pipeline="logs",state="finished"}`:                                                                  1,
		`etld_pipeline_state{pipeline="logs",state="failed"}`:                                                                    0,
		`etld_pipeline_state{pipeline="rebuilt",state="backfilling"}`:                                                            1,
		`etld_pipeline_state{pipeline="rebuilt",state="running"}`:                                                                0,
		`etld_backfill_rows_replayed{pipeline="rebuilt"}`:                                                                        1200,
		`etld_backfill_phase{phase="catch-up",pipeline="rebuilt"}`:                                                               1,
		`etld_backfill_phase{phase="replay",pipeline="rebuilt"}`:                                                                 0,
		`etld_pipeline_restarts_total{pipeline="orders"}`:                                                                        2,
		`etld_source_rows_read_total{pipeline="orders",source="kafka_in"}`:                                                       10,
		`etld_source_rows_emitted_total{pipeline="orders",source="kafka_in"}`:                                                    9,
		`etld_source_rows_skipped_total{pipeline="orders",source="kafka_in"}`:                                                    1,
		`etld_source_bytes_total{pipeline="orders",source="kafka_in"}`:                                                           1234,
		`etld_source_lag_messages{pipeline="orders",source="kafka_in"}`:                                                          42,
		`etld_sink_rows_received_total{pipeline="orders",sink="es"}`:                                                             9,
		`etld_sink_rows_written_total{pipeline="orders",sink="es"}`:                                                              8,
		`etld_sink_rows_rejected_total{pipeline="orders",sink="es"}`:                                                             1,
		`etld_sink_bytes_total{pipeline="orders",sink="es"}`:                                                                     999,
		`etld_operator_rows_dropped_total{operator="window",pipeline="orders",reason="late"}`:                                    3,
		`etld_source_rows_read_total{pipeline="logs",source="file"}`:                                                             5,
		`etld_checkpoints_total{pipeline="orders"}`:                                                                              4,
		`etld_checkpoint_failures_total{pipeline="orders"}`:                                                                      1,
		`etld_checkpoint_last_duration_seconds{pipeline="orders"}`:                                                               1.5,
		`etld_checkpoint_last_size_bytes{pipeline="orders"}`:                                                                     2048,
		`etld_checkpoints_total{pipeline="logs"}`:                                                                                0,
		`etld_reloads_total{result="ok"}`:                                                                                        1,
		`etld_reloads_total{result="error"}`:                                                                                     0,
		`etld_build_info{version="v1.2.3"}`:                                                                                      1,
		`etld_pipeline_reload_failed{pipeline="edited"}`:                                                                         1,
		`etld_pipeline_reload_failed{pipeline="orders"}`:                                                                         0,
		`etld_pipeline_errors_total{pipeline="orders"}`:                                                                          3,
		`etld_sink_rows_dead_lettered_total{pipeline="orders",sink="es"}`:                                                        1,
		`etld_source_rows_dead_lettered_total{pipeline="orders",source="kafka_in"}`:                                              0,
		`etld_checkpoint_last_timestamp_seconds{pipeline="orders"}`:                                                              1700000000.5,
		`etld_operator_state_entries{operator="q/group_aggregate#1",pipeline="orders",state_id="transform/q/group_aggregate#1"}`: 7,
		`etld_operator_state_bytes{operator="q/group_aggregate#1",pipeline="orders",state_id="transform/q/group_aggregate#1"}`:   300,
	}
	// A source's time series carry the source label, an operator's the
	// operator label; an ended input has no lag.
	for k, v := range map[string]float64{
		`etld_watermark_timestamp_seconds{operator="",pipeline="orders",source="kafka_in"}`:             1700000100.25,
		`etld_event_time_lag_seconds{operator="",pipeline="orders",source="kafka_in"}`:                  2.5,
		`etld_watermark_timestamp_seconds{operator="q/window_aggregate#1",pipeline="orders",source=""}`: 1700000100.25,
	} {
		want[k] = v
	}
	if _, ok := got[`etld_event_time_lag_seconds{operator="q/window_aggregate#1",pipeline="orders",source=""}`]; ok {
		t.Error("a lag for an operator whose input ended")
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	// Connectors that count no bytes and know no lag get no series.
	for k := range got {
		if strings.HasPrefix(k, "etld_source_bytes_total") && strings.Contains(k, `"logs"`) {
			t.Errorf("unexpected series %s", k)
		}
	}
	if _, ok := got["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
}

func labels(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+`="`+l.GetValue()+`"`)
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return -1
}

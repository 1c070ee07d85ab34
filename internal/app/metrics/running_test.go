package metrics

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/app/daemon"
	"github.com/etld/etld/internal/redact"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
)

// runDaemon runs the pipeline files (name: content) under a supervisor
// and returns its registry.
func runDaemon(t *testing.T, dir string, files map[string]string) *Registry {
	t.Helper()
	pipes := filepath.Join(dir, "pipelines")
	if err := os.MkdirAll(pipes, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(pipes, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sup := daemon.New(daemon.Options{
		Dir:                pipes,
		Load:               daemon.NewLoader(pipeline.Env{Registry: builtin.Registry()}, os.LookupEnv),
		StateDir:           filepath.Join(dir, "state"),
		CheckpointInterval: 200 * time.Millisecond,
		Secrets:            redact.NewSet(),
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		sup.Shutdown(ctx)
	})
	if _, err := sup.Reload(); err != nil {
		t.Fatal(err)
	}
	return NewRegistry(sup.Status, "test")
}

// scrape gathers reg: each series as `name{labels}` with its value, its
// empty labels left out as Prometheus leaves them out.
func scrape(t *testing.T, reg *Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var kept []*dto.LabelPair
			for _, l := range m.GetLabel() {
				if l.GetValue() != "" {
					kept = append(kept, l)
				}
			}
			m.Label = kept
			got[f.GetName()+labels(m)] = seriesValue(f, m)
		}
	}
	return got
}

// seriesValue is a counter's or gauge's value, a histogram's count.
func seriesValue(f *dto.MetricFamily, m *dto.Metric) float64 {
	if m.Histogram != nil {
		return float64(m.Histogram.GetSampleCount())
	}
	return value(m)
}

// timedFile is a followed CSV of events at 00:00:01, 03, 09 and 05 of
// 2024-01-01 UTC with a 2 s delay: the watermark of the source and of
// the operators after it is 00:00:07, and the input never ends, so the
// event-time lag is the clock's distance from it.
func timedFile(path string) string {
	return fmt.Sprintf(`version: 1
name: timed
sources:
  - name: ev
    type: file
    path: %s
    follow: true
    monitor_interval: 20ms
    schema: [k STRING, ms BIGINT, "ts AS TO_TIMESTAMP_LTZ(ms, 3)"]
    watermark: ts - INTERVAL '2' SECOND
transforms:
  - name: w
    sql: SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND)) WHERE k <> 'x' GROUP BY k, window_start, window_end
sinks:
  - name: out
    from: w
    type: blackhole
`, path)
}

const timedRows = "a,1704067201000\nb,1704067203000\na,1704067209000\nb,1704067205000\n"

// The watermark metrics of a running pipeline are its data's: the
// largest event time less the delay, exactly, for the source and each
// operator, and the lag is the clock's distance from it at the scrape.
func TestWatermarksOfARunningPipeline(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "ev.csv")
	if err := os.WriteFile(in, []byte(timedRows), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := runDaemon(t, dir, map[string]string{"timed.yaml": timedFile(in)})
	want := float64(time.Date(2024, 1, 1, 0, 0, 7, 0, time.UTC).Unix())
	series := []string{
		`{pipeline="timed",source="ev"}`,
		`{operator="w/calc#1",pipeline="timed"}`,
		`{operator="w/window_aggregate#1",pipeline="timed"}`,
	}
	var got map[string]float64
	var before, after time.Time
	testenv.Eventually(t, 20*time.Second, "the watermarks of the data", func() error {
		before = time.Now()
		got = scrape(t, reg)
		after = time.Now()
		for _, s := range series {
			if v, ok := got["etld_watermark_timestamp_seconds"+s]; !ok || v != want {
				return fmt.Errorf("watermark%s = %v (present %v), want %v", s, v, ok, want)
			}
		}
		return nil
	})
	for _, s := range series {
		lag, ok := got["etld_event_time_lag_seconds"+s]
		lo, hi := before.Sub(time.Unix(int64(want), 0)).Seconds()-1, after.Sub(time.Unix(int64(want), 0)).Seconds()
		// The daemon's counters are up to half a second old, but the lag
		// is measured at the scrape: between the clock before and after
		// it, less the second a progress report may lag behind.
		if !ok || lag < lo || lag > hi {
			t.Errorf("lag%s = %v (present %v), want in [%v, %v]", s, lag, ok, lo, hi)
		}
	}
}

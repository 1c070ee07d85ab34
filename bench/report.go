package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// engineResult is one engine's runs of a workload and their medians.
// Time is what rows/s and Ratio use: the wall time, except for Flink,
// whose job time (without the JVM's start) is used when it was measured.
type engineResult struct {
	Engine   string    `json:"engine"`
	NotRun   string    `json:"not_run,omitempty"`
	Error    string    `json:"error,omitempty"`
	Runs     []measure `json:"runs,omitempty"`
	Time     float64   `json:"time_s"`
	Wall     float64   `json:"wall_s"`
	CPU      float64   `json:"cpu_s"`
	RSSMiB   float64   `json:"peak_rss_mib"`
	RowsPerS float64   `json:"rows_per_s"`
	Ratio    float64   `json:"ratio_vs_baseline,omitempty"` // baseline time / this time
	// CPURatio is the baseline's CPU seconds over this engine's: on a
	// loaded machine the wall times swell with the wait for a core, the
	// CPU seconds much less (Flink's include its JVM's start).
	CPURatio float64 `json:"cpu_ratio_vs_baseline,omitempty"`
	OutRows  int64   `json:"out_rows,omitempty"`
	Checksum string  `json:"checksum,omitempty"`
	Check    string  `json:"check,omitempty"`
}

func (r *engineResult) summarize(rows int64) {
	var t, wall, cpu, rss []float64
	for _, m := range r.Runs {
		wall = append(wall, m.Wall)
		cpu = append(cpu, m.CPU)
		rss = append(rss, float64(m.PeakRSS)/(1<<20))
		if m.Inner > 0 {
			t = append(t, m.Inner)
		} else {
			t = append(t, m.Wall)
		}
	}
	r.Time, r.Wall, r.CPU, r.RSSMiB = median(t), median(wall), median(cpu), median(rss)
	if r.Time > 0 {
		r.RowsPerS = float64(rows) / r.Time
	}
}

type workloadResult struct {
	Name     string             `json:"name"`
	Desc     string             `json:"description"`
	Baseline string             `json:"baseline"`
	Engines  []engineResult     `json:"engines"`
	Extra    map[string]float64 `json:"extra,omitempty"`
}

func (w workloadResult) engine(name string) *engineResult {
	for i := range w.Engines {
		if w.Engines[i].Engine == name && w.Engines[i].Time > 0 {
			return &w.Engines[i]
		}
	}
	return nil
}

// target is one of the speed goals etld is held to (targets lists them)
// and what this run measured.
type target struct {
	Goal  string  `json:"goal"`
	Got   float64 `json:"got"`
	Want  string  `json:"want"`
	Met   bool    `json:"met"`
	Unit  string  `json:"unit"`
	Known bool    `json:"measured"`
	// CPU is the same ratio of CPU seconds (0 when not measured).
	CPU float64 `json:"cpu_ratio,omitempty"`
}

type report struct {
	Date      string           `json:"date"`
	Commit    string           `json:"commit,omitempty"`
	Host      string           `json:"host"`
	Rows      int64            `json:"rows"`
	Runs      int              `json:"runs"`
	Data      dataMeta         `json:"data"`
	Workloads []workloadResult `json:"workloads"`
	Targets   []target         `json:"targets"`
}

// targets are the speed goals etld is held to: speeds as etld's time
// over the other's (>= 1 is as fast).
func targets(ws []workloadResult) []target {
	var ts []target
	speedOf := func(w workloadResult, goal, ours, other string, min float64) {
		t := target{Goal: goal, Want: fmt.Sprintf(">= %.1fx", min), Unit: "x"}
		if a, b := w.engine(ours), w.engine(other); a != nil && b != nil {
			t.Got, t.Known = b.Time/a.Time, true
			if a.CPU > 0 {
				t.CPU = b.CPU / a.CPU
			}
			t.Met = t.Got >= min
		}
		ts = append(ts, t)
	}
	speed := func(w workloadResult, goal, other string, min float64) { speedOf(w, goal, "etld", other, min) }
	for _, w := range ws {
		switch w.Name {
		case "W1":
			speed(w, "W1 etld vs DuckDB", "duckdb", 1)
		case "W2-batch":
			speed(w, "W2 batch etld vs DuckDB", "duckdb", 1)
			speed(w, "W2 batch etld vs Go map loop", "go-map-loop", 0.8)
		case "W2-stream":
			speed(w, "W2 stream etld vs Flink mini-batch", "flink-mini-batch", 10)
			speed(w, "W2 stream etld vs etld pass-through", "etld-pass-through", 0.5)
		case "W4":
			t := target{Goal: "W4 RSS per key", Want: "<= 100", Unit: "B/key"}
			if v, ok := w.Extra["rss_bytes_per_key"]; ok && w.engine("etld-1M-keys") != nil && w.engine("etld-1k-keys") != nil {
				t.Got, t.Known, t.Met = v, true, v <= 100
			}
			ts = append(ts, t)
		case "W5":
			speed(w, "W5 etld vs Flink", "flink", 8)
		default:
			if strings.HasPrefix(w.Name, "W3-") {
				speed(w, w.Name+" etld vs DuckDB", "duckdb", 1)
			}
			if strings.HasPrefix(w.Name, "M-") && w.Name != "M-start" { // M-start: Flink's start alone
				speedOf(w, w.Name+" batch vs DuckDB", "etld-batch", "duckdb", 1)
				speedOf(w, w.Name+" stream vs Flink", "etld-stream", "flink-stream", 10)
				if w.engine("etld-batch-1cpu") != nil {
					speedOf(w, w.Name+" 2 cores vs 1", "etld-batch", "etld-batch-1cpu", 1.7)
				}
				if w.engine("etld-batch-2w") != nil {
					speedOf(w, w.Name+" 2 workers vs 1", "etld-batch-2w", "etld-batch", 1.7)
				}
			}
		}
	}
	return ts
}

func (rep report) print(out io.Writer) {
	fmt.Fprintf(out, "\netld bench, %s, commit %s, %d rows, %d runs each (medians), %s\n", rep.Date, rep.Commit, rep.Rows, rep.Runs, rep.Host)
	for _, w := range rep.Workloads {
		fmt.Fprintf(out, "\n%s: %s\n", w.Name, w.Desc)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "engine\trows/s\ttime s\twall s\tCPU s\tpeak RSS MiB\tvs "+w.Baseline+"\tCPU vs baseline\toutput\t")
		for _, r := range w.Engines {
			switch {
			case r.NotRun != "":
				fmt.Fprintf(tw, "%s\tnot run: %s\t\t\t\t\t\t\t\t\n", r.Engine, r.NotRun)
				continue
			case r.Error != "" && len(r.Runs) == 0:
				fmt.Fprintf(tw, "%s\tfailed: %s\t\t\t\t\t\t\t\t\n", r.Engine, oneLine(r.Error, 100))
				continue
			}
			ratio := "-"
			if r.Ratio > 0 {
				ratio = fmt.Sprintf("%.2fx", r.Ratio)
			}
			cpuRatio := "-"
			if r.CPURatio > 0 {
				cpuRatio = fmt.Sprintf("%.2fx", r.CPURatio)
			}
			check := r.Check
			if r.OutRows > 0 {
				check = fmt.Sprintf("%d rows %s", r.OutRows, check)
			}
			if r.Error != "" {
				check += " (error: " + oneLine(r.Error, 60) + ")"
			}
			fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t%.0f\t%s\t%s\t%s\t\n", r.Engine, r.RowsPerS, r.Time, r.Wall, r.CPU, r.RSSMiB, ratio, cpuRatio, check)
		}
		tw.Flush()
		if len(w.Extra) > 0 {
			keys := make([]string, 0, len(w.Extra))
			for k := range w.Extra {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(out, "  %s = %.4g\n", k, w.Extra[k])
			}
		}
	}
	printMatrix(out, rep.Workloads)
	fmt.Fprintln(out, "\ntargets (etld's speed as the other's time / etld's):")
	for _, t := range rep.Targets {
		got, met := "not measured", ""
		if t.Known {
			got = fmt.Sprintf("%.2f %s", t.Got, t.Unit)
			met = "met"
			if !t.Met {
				met = "NOT met"
			}
		}
		cpu := ""
		if t.CPU > 0 {
			cpu = fmt.Sprintf("  (CPU seconds: %.2fx)", t.CPU)
		}
		fmt.Fprintf(out, "  %-40s %-14s want %-8s %-7s%s\n", t.Goal, got, t.Want, met, cpu)
	}
	fmt.Fprintln(out, "(time s: the wall time, for Flink the job's time between two SELECT NOW(); wall s is the whole process)")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

package conformance

// Cases of window aggregates on a processing-time attribute. Which
// window a row falls in depends on the clock; what does not is the end
// of a bounded input: Flink drops the processing-time timers not yet
// due when a finite stream finishes, so windows of a day (which the run
// does not outlast) emit nothing.

func init() { areaCases = append(areaCases, procWindowCases) }

func procWindowCases() []genCase {
	qs := []struct{ name, mode, query string }{
		{"tumble", "streaming", "SELECT k, window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE op, DESCRIPTOR(pt), INTERVAL '1' DAY)) GROUP BY k, window_start, window_end"},
		{"hop", "streaming", "SELECT window_start, window_end, SUM(v) FROM TABLE(HOP(TABLE op, DESCRIPTOR(pt), INTERVAL '12' HOUR, INTERVAL '1' DAY)) GROUP BY window_start, window_end"},
		{"cumulate", "streaming", "SELECT window_start, window_end, MAX(v) FROM TABLE(CUMULATE(TABLE op, DESCRIPTOR(pt), INTERVAL '12' HOUR, INTERVAL '1' DAY)) GROUP BY window_start, window_end"},
		{"legacy-tumble", "streaming", "SELECT k, TUMBLE_START(pt, INTERVAL '1' DAY), COUNT(*) FROM op GROUP BY TUMBLE(pt, INTERVAL '1' DAY), k"},
		{"tumble-batch", "batch", "SELECT k, window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE op, DESCRIPTOR(pt), INTERVAL '1' DAY)) GROUP BY k, window_start, window_end"},
	}
	var out []genCase
	for _, c := range qs {
		out = append(out, genCase{
			name:   "procwindow-" + c.name,
			header: []string{"mode: " + c.mode, tableOP},
			query:  c.query,
			data:   map[string]string{"op": dataOP},
		})
	}
	return out
}

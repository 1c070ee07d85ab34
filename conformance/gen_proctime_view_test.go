package conformance

// Cases of PROCTIME() in a select list: a processing-time attribute as a
// source's PROCTIME() column is, as long as projections pass it on
// unchanged. Each result leaves the clock out: a day's window over a
// bounded input emits nothing (Flink drops the timers not yet due), and
// a processing-time ROW_NUMBER or Deduplicate numbers rows in arrival
// order.

func init() { areaCases = append(areaCases, procTimeViewCases) }

func procTimeViewCases() []genCase {
	const sub = "(SELECT k, v, PROCTIME() AS p FROM op)"
	qs := []struct{ name, query string }{
		{"legacy-tumble", "SELECT k, TUMBLE_START(p, INTERVAL '1' DAY), COUNT(*) FROM " + sub + " GROUP BY TUMBLE(p, INTERVAL '1' DAY), k"},
		{"renamed-tumble", "SELECT TUMBLE_START(t, INTERVAL '1' DAY), SUM(v) FROM (SELECT v, p AS t FROM " + sub + " WHERE v > 1) GROUP BY TUMBLE(t, INTERVAL '1' DAY)"},
		{"row-number", "SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY p) FROM " + sub},
		{"dedup-first", "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY p) AS rn FROM " + sub + ") WHERE rn = 1"},
	}
	var out []genCase
	for _, c := range qs {
		out = append(out, genCase{
			name:   "proctime-view-" + c.name,
			header: []string{"mode: streaming", tableOP},
			query:  c.query,
			data:   map[string]string{"op": dataOP},
		})
	}
	return out
}

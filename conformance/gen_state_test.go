package conformance

// Event time after an outer join: an interval outer join pads a side's
// time attribute with NULL where no row matched, and a window aggregate
// over that column meets rows without an event time. Flink's fails the
// job ("RowTime field should not be null"); etld refuses the plan (the
// join's output keeps no time attribute of a padded side).

func init() {
	areaCases = append(areaCases, func() []genCase {
		return []genCase{
			{name: "state-window-null-rowtime-after-outer-join", header: []string{"mode: streaming", tableE},
				query: "WITH j AS (SELECT a.k, a.v, b.ts FROM e a LEFT JOIN e b ON a.k = b.k AND b.v > 3 AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '10' SECOND) " +
					"SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE j, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end",
				data: map[string]string{"e": dataE}},
			{name: "state-window-null-rowtime-after-full-join", header: []string{"mode: streaming", tableE},
				query: "WITH j AS (SELECT a.k, a.ts FROM e a FULL JOIN e b ON a.k = b.k AND a.v > 3 AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '10' SECOND) " +
					"SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE j, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end",
				data: map[string]string{"e": dataE}},
		}
	})
}

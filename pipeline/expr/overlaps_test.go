package expr

import "testing"

// TestOverlaps: (s0, e0) OVERLAPS (s1, e1), read as Calcite expands it,
// with TimeFunctionsITCase's periods and the results Flink 2.3 gives
// (conformance cases fn-flink-time-overlaps-*).
func TestOverlaps(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"(TIME '02:55:00', INTERVAL '1' HOUR) OVERLAPS (TIME '03:30:00', INTERVAL '2' HOUR)", "BOOLEAN NOT NULL true"},
		{"(TIME '09:00:00', TIME '09:30:00') OVERLAPS (TIME '09:29:00', TIME '09:31:00')", "BOOLEAN NOT NULL true"},
		{"(TIME '09:00:00', TIME '10:00:00') OVERLAPS (TIME '10:15:00', INTERVAL '3' HOUR)", "BOOLEAN NOT NULL false"},
		{"(DATE '2011-03-10', INTERVAL '10' DAY) OVERLAPS (DATE '2011-03-19', INTERVAL '10' DAY)", "BOOLEAN NOT NULL true"},
		// Periods that touch overlap; the ends are put in order first.
		{"(TIMESTAMP '2011-03-10 05:02:02', INTERVAL '0' SECOND) OVERLAPS (TIMESTAMP '2011-03-10 05:02:02', TIMESTAMP '2011-03-10 05:02:01')", "BOOLEAN NOT NULL true"},
		{"(TIMESTAMP '2011-03-10 05:02:02.001', INTERVAL '0' SECOND) OVERLAPS (TIMESTAMP '2011-03-10 05:02:02.002', TIMESTAMP '2011-03-10 05:02:02.002')", "BOOLEAN NOT NULL false"},
		{"(ts, INTERVAL '1' DAY) OVERLAPS (ts - INTERVAL '2' DAY, ts)", "BOOLEAN true"},
		{"(ts, CAST(NULL AS TIMESTAMP(3))) OVERLAPS (ts, ts)", "BOOLEAN null"},
	})
}

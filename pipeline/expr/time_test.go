package expr

import "testing"

// TestTimeType: TIME literals, CASTs, EXTRACT, comparisons and the clock
// functions; expected values taken from Flink 2.3.
func TestTimeType(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"TIME '10:30:45'", "TIME(0) NOT NULL 10:30:45"},
		{"TIME '10:30:45.123'", "TIME(3) NOT NULL 10:30:45.123"},
		{"CAST('10:30:45.5' AS TIME)", "TIME(0) NOT NULL 10:30:45"},
		{"CAST(TIME '10:30:45' AS STRING)", "STRING NOT NULL 10:30:45"},
		{"CAST(TIMESTAMP '2024-01-02 10:30:45.123' AS TIME)", "TIME(0) NOT NULL 10:30:45"},
		{"CAST(ts AS TIME(3))", "TIME(3) 10:30:45.123"},
		{"EXTRACT(HOUR FROM TIME '10:30:45')", "BIGINT NOT NULL 10"},
		{"EXTRACT(MILLISECOND FROM TIME '10:30:45.123')", "BIGINT NOT NULL 123"},
		{"HOUR(TIME '10:30:45')", "BIGINT NOT NULL 10"},
		{"TIME '10:30:45' < TIME '11:00:00'", "BOOLEAN NOT NULL true"},
		{"TIME '10:30:45' = '10:30:45'", "BOOLEAN NOT NULL true"},
		{"CAST(TIME '10:30:45' AS TIMESTAMP)", "TIMESTAMP(3) NOT NULL 1970-01-01T10:30:45"},
		{"CAST(CAST('10:30:45.123' AS TIME(3)) AS STRING)", "STRING NOT NULL 10:30:45.123"},
		{"CAST('10:30:45.123456' AS TIME(6))", "TIME(3) NOT NULL 10:30:45.123"},
		{"CURRENT_TIME", "TIME(0) NOT NULL 07:08:09.123"},
		{"LOCALTIME", "TIME(0) NOT NULL 07:08:09.123"},
		{"EXTRACT(YEAR FROM TIME '10:30:45')", "error: YEAR of a TIME"},
		{"CAST('25:00:00' AS TIME)", "error: cannot parse"},
	})
}

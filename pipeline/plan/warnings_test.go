package plan_test

import (
	"strings"
	"testing"
)

func TestStateWarnings(t *testing.T) {
	const head = "version: 1\nname: p\n%TTL%sources:\n  - name: s\n    type: datagen\n    schema: [k BIGINT, ts TIMESTAMP(3)]\n    watermark: ts - INTERVAL '1' SECOND\n" +
		"transforms:\n  - name: t\n    sql: %SQL%\nsinks:\n  - name: o\n    from: t\n    type: blackhole\n"
	cases := []struct {
		name, ttl, sql string
		want           []string
	}{
		{"group by, no ttl", "", "SELECT k, COUNT(*) AS n FROM s GROUP BY k",
			[]string{`p.yaml:9:5: warning: transform "t": GroupAggregate(groupBy=[k], select=[COUNT(*)]) keeps state for every key it sees, and no state_ttl expires it`}},
		{"distinct, no ttl", "", "SELECT DISTINCT k FROM s", []string{`transform "t": Distinct`}},
		{"join, no ttl", "", "SELECT a.k FROM s AS a JOIN s AS b ON a.k = b.k", []string{`transform "t": Join(`}},
		{"group by with ttl", "state_ttl: 1h\n", "SELECT k, COUNT(*) AS n FROM s GROUP BY k", nil},
		{"global aggregate", "", "SELECT COUNT(*) AS n FROM s", nil},
		{"window", "", "SELECT k, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE s, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.NewReplacer("%TTL%", tc.ttl, "%SQL%", tc.sql).Replace(head)
			got := buildPlan(t, allConnectors(), "p.yaml", []byte(src), func(string) (string, bool) { return "", false }).StateWarnings()
			if len(got) != len(tc.want) {
				t.Fatalf("warnings = %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q, want it to contain %q", got[i], w)
				}
			}
		})
	}
}

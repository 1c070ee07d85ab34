package plan_test

import (
	"strings"
	"testing"
)

// TestStateWarningsTopN: a Top-N of an insert-only input without PARTITION
// BY keeps at most its N rows, so it gets no warning of unbounded state;
// one with a partition keeps N rows per partition, and one over an
// updating input (RetractStrategy) keeps every row: both are named.
func TestStateWarningsTopN(t *testing.T) {
	const head = "version: 1\nname: p\nsources:\n  - name: s\n    type: datagen\n    schema: [k BIGINT, v BIGINT]\n" +
		"transforms:\n%AGG%  - name: t\n    sql: %SQL%\nsinks:\n  - name: o\n    from: t\n    type: blackhole\n"
	const agg = "  - name: a\n    sql: SELECT k, SUM(v) AS v FROM s GROUP BY k\n"
	cases := []struct {
		name, agg, sql string
		want           []string
	}{
		{"top-n without partition", "", "SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (ORDER BY v DESC) AS rn FROM s) WHERE rn <= 3", nil},
		{"top-n per partition", "", "SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM s) WHERE rn <= 3",
			[]string{`transform "t": Rank(`}},
		{"top-n over an updating input", agg, "SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (ORDER BY v DESC) AS rn FROM a) WHERE rn <= 3",
			[]string{`transform "a": GroupAggregate(`, `transform "t": Rank(`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.NewReplacer("%AGG%", tc.agg, "%SQL%", tc.sql).Replace(head)
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

package plan_test

import (
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/plan"
)

// A streaming regular join whose one reader is a Calc that only picks
// columns emits those columns itself (JoinSpec.Output), over insert-only
// and updating inputs and for each outer kind; a semi join and a join
// under a Calc that computes keep their whole rows.
func TestStreamingJoinEmitsPickedColumns(t *testing.T) {
	const head = `version: 1
name: pick
sources:
  - name: a
    type: datagen
    schema: [id BIGINT, k BIGINT, s STRING]
  - name: b
    type: datagen
    schema: [id BIGINT, k BIGINT, s STRING]
transforms:
  - name: counts
    sql: SELECT k, COUNT(*) AS n, MAX(s) AS s FROM b GROUP BY k
`
	tests := []struct {
		name, sql string
		picked    bool
	}{
		{"inner", "SELECT b.s, a.id FROM a JOIN b ON a.k = b.k", true},
		{"left updating", "SELECT c.n, a.s FROM a LEFT JOIN counts c ON a.k = c.k", true},
		{"right", "SELECT a.id, b.s FROM a RIGHT JOIN b ON a.k = b.k", true},
		{"full updating", "SELECT c.s, a.id, c.n FROM counts c FULL JOIN a ON a.k = c.k", true},
		{"semi", "SELECT a.id FROM a WHERE a.k IN (SELECT k FROM b)", false},
		{"computed", "SELECT a.id + b.id AS x FROM a JOIN b ON a.k = b.k", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := head + fmt.Sprintf("  - name: j\n    sql: %s\nsinks:\n  - {name: o, from: j, type: blackhole}\n", tc.sql)
			p := buildPlan(t, allConnectors(), "pick.yaml", []byte(src), nil)
			defer p.Close()
			outs := plan.JoinOutputs(p)
			if len(outs) != 1 {
				t.Fatalf("%d regular joins, want 1", len(outs))
			}
			if got := outs[0] != nil; got != tc.picked {
				t.Fatalf("join emits picked columns %v (%v), want %v", got, outs[0], tc.picked)
			}
		})
	}
}

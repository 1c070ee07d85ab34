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

// A join on computed keys reads its inputs through Calcs that add the
// keys and drops them in a picking Calc above; the SELECT's picking
// Calc over that one is the projection the join emits (the two
// composed), streaming as in batch.
func TestJoinOutputComposesPickingCalcs(t *testing.T) {
	src := `version: 1
name: pick
sources:
  - name: a
    type: datagen
    schema: [id BIGINT, k BIGINT, s STRING]
  - name: b
    type: datagen
    schema: [id BIGINT, k BIGINT, s STRING]
transforms:
  - name: j
    sql: SELECT b.s, a.id FROM a JOIN b ON CAST(a.k AS STRING) = CAST(b.k AS STRING)
sinks:
  - {name: o, from: j, type: blackhole}
`
	p := buildPlan(t, allConnectors(), "pick.yaml", []byte(src), nil)
	defer p.Close()
	outs := plan.JoinOutputs(p)
	// The joined row: a's id, k, s and key, then b's (b.s at 4+2).
	if len(outs) != 1 || fmt.Sprint(outs[0]) != "[6 0]" {
		t.Fatalf("the join emits %v, want [[6 0]]", outs)
	}
}

package plan_test

import (
	"strings"
	"testing"
)

// TestTopNQualifiedStarOfJoin: a Top-N whose subquery selects t.* of a
// join (Nexmark q9: SELECT A.*, B.price, ROW_NUMBER() ... FROM auction A,
// bid B) gives t's columns and the others it names, in order; the
// planner once counted t.* as all the join's columns and panicked.
func TestTopNQualifiedStarOfJoin(t *testing.T) {
	const src = `version: 1
name: p
sources:
  - name: a
    type: datagen
    schema: [id BIGINT, name STRING]
  - name: b
    type: datagen
    schema: [auction BIGINT, price BIGINT, note STRING]
transforms:
  - name: t
    sql: |
      SELECT * FROM (
        SELECT A.*, B.price, ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC) AS rn
        FROM a A, b B WHERE A.id = B.auction
      ) WHERE rn <= 1
sinks:
  - name: o
    from: t
    type: blackhole
`
	p := buildPlan(t, allConnectors(), "p.yaml", []byte(src), func(string) (string, bool) { return "", false })
	var names []string
	for _, f := range p.Transforms[0].Root.Schema.Fields {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, ","), "id,name,price,rn"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
}

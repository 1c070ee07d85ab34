package plan_test

import (
	"strings"
	"testing"
)

const buildPipeline = `version: 1
name: enrich
sources:
  - name: orders
    type: datagen
    schema: [id BIGINT, cust BIGINT]
  - name: custs
    type: file
    path: c.csv
    schema: [id BIGINT, name STRING]
  - name: more
    type: file
    path: m.csv
    schema: [id BIGINT, cust BIGINT]
transforms:
  - name: stream_dim
    sql: SELECT o.id, c.name FROM orders o LEFT JOIN custs c ON o.cust = c.id
  - name: dim_stream
    sql: SELECT o.id, c.name FROM custs c LEFT JOIN orders o ON o.cust = c.id
  - name: files_left
    sql: SELECT m.id, c.name FROM more m LEFT JOIN custs c ON m.cust = c.id
  - name: files_right
    sql: SELECT m.id, c.name FROM more m RIGHT JOIN custs c ON m.cust = c.id
  - name: streams
    sql: SELECT a.id FROM orders a JOIN orders b ON a.id = b.cust
sinks:
  - {name: o1, from: stream_dim, type: print}
  - {name: o2, from: dim_stream, type: print}
  - {name: o3, from: files_left, type: print}
  - {name: o4, from: files_right, type: print}
  - {name: o5, from: streams, type: print}
`

// A streaming join reads its bounded input first when the other is not,
// the padded (right) input when both are bounded but for a RIGHT JOIN,
// and neither of two unbounded inputs.
func TestJoinBuildInput(t *testing.T) {
	p := buildPlan(t, allConnectors(), "enrich.yaml", []byte(buildPipeline), nil)
	defer p.Close()
	g, err := p.Graph()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"stream_dim": 1, "dim_stream": 0, "files_left": 1, "files_right": 0, "streams": -1}
	seen := 0
	for _, u := range g.Unions {
		name := strings.Split(u.ID, "/")[1]
		w, ok := want[name]
		if !ok {
			continue
		}
		seen++
		got := -1
		if u.BuildFirst {
			got = u.Build
		}
		if got != w {
			t.Errorf("%s: build input %d, want %d (-1: none)", name, got, w)
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of the %d joins", seen, len(want))
	}
}

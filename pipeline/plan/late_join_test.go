package plan_test

import (
	"slices"
	"strings"
	"testing"
)

const lateJoinPipeline = `version: 1
name: latejoin
late_rows: {policy: dead-letter, file: late.jsonl}
sources:
  - name: a
    type: file
    path: a.csv
    schema: [k STRING, v INT, ts TIMESTAMP(3)]
    watermark: ts - INTERVAL '1' SECOND
  - name: b
    type: file
    path: b.csv
    schema: [id STRING, w BIGINT, t TIMESTAMP(3)]
    watermark: t
transforms:
  - name: wj
    sql: >-
      SELECT x.k, y.w FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '5' SECOND)) x
      JOIN TABLE(TUMBLE(TABLE b, DESCRIPTOR(t), INTERVAL '5' SECOND)) y
      ON x.k = y.id AND x.window_start = y.window_start AND x.window_end = y.window_end
sinks:
  - {name: o, from: wj, type: print}
`

// A window join drops late rows, so with late_rows: dead-letter its node
// hands them on, described with the columns of the input each came from.
func TestWindowJoinLateRowsGoToDeadLetters(t *testing.T) {
	p := buildPlan(t, allConnectors(), "latejoin.yaml", []byte(lateJoinPipeline), nil)
	defer p.Close()
	g, err := p.Graph()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, on := range g.Ops {
		if !strings.HasPrefix(on.Name, "WindowJoin") {
			continue
		}
		found = true
		if on.Late == nil {
			t.Fatal("the window join's late rows go nowhere")
		}
		if len(on.LateInputs) != 2 || !slices.Contains(on.LateInputs[0].Names(), "k") || !slices.Contains(on.LateInputs[1].Names(), "id") {
			t.Errorf("late rows' columns %v, want the left input's (k ...) and the right's (id ...)", on.LateInputs)
		}
	}
	if !found {
		t.Fatal("no WindowJoin node")
	}
}

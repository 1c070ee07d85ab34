package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/runtime/joinop"
)

const selfIntervalPipeline = `version: 1
name: selfjoin
execution: batch
sources:
  - name: ev
    type: file
    path: e.csv
    schema: [id BIGINT, k BIGINT, j BIGINT, ts TIMESTAMP(3)]
    watermark: ts - INTERVAL '1' SECOND
  - name: other
    type: file
    path: o.csv
    schema: [id BIGINT, k BIGINT, j BIGINT, ts TIMESTAMP(3)]
    watermark: ts - INTERVAL '1' SECOND
transforms:
  - name: self
    sql: SELECT a.id, b.id AS bid FROM ev a JOIN ev b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '2' SECOND AND b.ts
  - name: self_left
    sql: SELECT a.id, b.j FROM ev a LEFT JOIN ev b ON a.k = b.k AND a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' SECOND
  - name: other_keys
    sql: SELECT a.id, b.id AS bid FROM ev a JOIN ev b ON a.k = b.j AND a.ts BETWEEN b.ts - INTERVAL '2' SECOND AND b.ts
  - name: two_sources
    sql: SELECT a.id, b.id AS bid FROM ev a JOIN other b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '2' SECOND AND b.ts
sinks:
  - {name: o1, from: self, type: print}
  - {name: o2, from: self_left, type: print}
  - {name: o3, from: other_keys, type: print}
  - {name: o4, from: two_sources, type: print}
`

// A batch interval self-join (one scan on both sides, both read by the
// same key and time) holds each row once; one of two sources, or of
// other keys on each side, holds each side's rows.
func TestBatchIntervalSelfJoinHoldsOnce(t *testing.T) {
	p := buildPlan(t, allConnectors(), "selfjoin.yaml", []byte(selfIntervalPipeline), nil)
	defer p.Close()
	g, err := p.Graph()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"self": true, "self_left": true, "other_keys": false, "two_sources": false}
	seen := 0
	for _, on := range g.Ops {
		h, ok := on.Op.(*joinop.IntervalHashJoin)
		if !ok {
			continue
		}
		name := strings.Split(on.ID, "/")[1]
		if h.HoldsOnce() != want[name] {
			t.Errorf("%s: holds once %t, want %t", name, h.HoldsOnce(), want[name])
		}
		seen++
	}
	if seen != len(want) {
		t.Fatalf("%d interval hash joins, want %d", seen, len(want))
	}
}

// A streaming interval self-join (one source on both inputs, run as
// one worker) adds each row to both sides as it comes on the left,
// whatever keys each side reads, and reads its source once: a second
// copy of the source's watermarks, arriving in its own time, would move
// the join's watermark between rows at random. One of two sources does
// not, nor a join run as two workers.
func TestStreamingIntervalSelfJoinSameInputs(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) { testStreamingIntervalSelfJoin(t, workers) })
	}
}

func testStreamingIntervalSelfJoin(t *testing.T, workers int) {
	yaml := strings.Replace(selfIntervalPipeline, "execution: batch", fmt.Sprintf("execution: streaming\nparallelism: %d", workers), 1)
	p := buildPlan(t, allConnectors(), "selfjoin.yaml", []byte(yaml), nil)
	defer p.Close()
	g, err := p.Graph()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"self": workers == 1, "self_left": workers == 1, "other_keys": workers == 1, "two_sources": false}
	seen := 0
	for _, on := range g.Ops {
		j, ok := on.Op.(interface{ SameInputs() bool })
		if !ok {
			continue
		}
		name := strings.Split(on.ID, "/")[1]
		if j.SameInputs() != want[name] {
			t.Errorf("%s: same inputs %t, want %t", name, j.SameInputs(), want[name])
		}
		for _, un := range g.Unions {
			if on.Input == &un.Node && (len(un.Inputs) == 1) != want[name] {
				t.Errorf("%s: its inputs read %d times, want once: %t", name, len(un.Inputs), want[name])
			}
		}
		seen++
	}
	if seen != len(want) {
		t.Fatalf("%d streaming interval joins, want %d", seen, len(want))
	}
}

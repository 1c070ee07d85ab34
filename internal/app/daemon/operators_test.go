package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// counted is a bounded pipeline of a CSV file through a GROUP BY.
func counted(dir string) string {
	return fmt.Sprintf(`version: 1
name: counted
sources:
  - name: ev
    type: file
    path: %s
    format: csv
    schema: [k STRING, v INT]
transforms:
  - name: per_k
    sql: SELECT k, COUNT(*) AS n FROM ev WHERE v > 0 GROUP BY k
sinks:
  - name: out
    from: per_k
    type: blackhole
`, filepath.Join(dir, "ev.csv"))
}

// /pipelines lists every operator that runs (the GROUP BY's projection
// only renames, so its rows pass on as they are) by its short id with its
// plan text and counters, and names the stateful one by that id too.
func TestStatusListsOperatorsByShortID(t *testing.T) {
	h := newHarness(t)
	if err := os.WriteFile(filepath.Join(h.dir, "ev.csv"), []byte("a,1\nb,2\na,3\nc,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.write("counted.yaml", counted(h.dir))
	h.reload()
	st := h.waitState("counted.yaml", Finished)
	byID := map[string]OperatorStatus{}
	var ids []string
	for _, o := range st.Operators {
		byID[o.Operator] = o
		ids = append(ids, o.Operator)
	}
	if got := strings.Join(ids, " "); got != "per_k/calc#1 per_k/group_aggregate#1" {
		t.Fatalf("operators %s", got)
	}
	agg := byID["per_k/group_aggregate#1"]
	if !strings.HasPrefix(agg.Plan, "GroupAggregate(") || agg.Transform != "per_k" || agg.In != 3 {
		t.Errorf("the GROUP BY: %+v, want its plan, transform per_k and 3 rows in (the filter keeps 3 of 4)", agg)
	}
	if f := byID["per_k/calc#1"]; f.In != 4 || f.Out != 3 {
		t.Errorf("the filter: %+v, want 4 rows in, 3 out", f)
	}
	if len(st.OperatorState) != 1 || st.OperatorState[0].Operator != "per_k/group_aggregate#1" || st.OperatorState[0].Plan != agg.Plan {
		t.Errorf("operator_state %+v, want the GROUP BY by its id", st.OperatorState)
	}
}

// Counters of time add up over runs; the last 20 checkpoints are kept
// across runs; lookups add up with their ratio taken over the sum.
func TestTimeAddsUpOverRuns(t *testing.T) {
	run := func(busy time.Duration, hits, misses int64) []pipeline.Operator {
		var lat operator.Latency
		lat.Observe(3 * time.Millisecond)
		return []pipeline.Operator{{ID: "q/lookup_join#1", Plan: "LookupJoin(...)", In: 10, Time: pipeline.Time{Busy: busy, Backpressure: busy / 2, Retries: 1},
			Lookup: &operator.LookupCounts{Hits: hits, Misses: misses, Keys: misses, RoundTrips: 1, Latency: lat.Snapshot()}}}
	}
	totals := operatorTotals{}
	totals.add(run(time.Second, 3, 1))
	totals.add(run(2*time.Second, 0, 4))
	o := totals["q/lookup_join#1"]
	if o.In != 20 || o.BusySeconds != 3 || o.BackpressureSeconds != 1.5 || o.Retries != 2 {
		t.Errorf("totals %+v", o)
	}
	if l := o.Lookup; l.Hits != 3 || l.Misses != 5 || l.HitRatio != 3.0/8 || l.RoundTrips != 2 || l.Latency.Count != 2 || *l.Latency.P99 != 0.005 {
		t.Errorf("lookups %+v, latency %+v", l, l.Latency)
	}
	var recent []CheckpointEntry
	for run := range 3 {
		var cps []runtime.CheckpointRecord
		for i := range 15 {
			cps = append(cps, runtime.CheckpointRecord{ID: int64(run*100 + i), Size: 1})
		}
		recent = recentCheckpoints(recent, cps)
	}
	if len(recent) != runtime.CheckpointHistory || recent[0].ID != 110 || recent[len(recent)-1].ID != 214 {
		t.Errorf("kept %d checkpoints from %d to %d, want the last 20: 110 to 214", len(recent), recent[0].ID, recent[len(recent)-1].ID)
	}
}

package joinop

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// itcaseLateSteps is the conformance case itcase-ijoin-agg as the join
// sees it in Flink: a self-join ON L.a = R.a AND L.ts >= R.ts AND L.ts <
// R.ts + INTERVAL '3' SECOND (bounds 0 and 3 s - 1 µs) over rows (a, ts
// in seconds) read with a per-record watermark ts - 1 s; each row
// reaches the left input, then the right, then its watermark. The rows
// at 3 s come behind the watermark 3 s but within the bounds.
func itcaseLateSteps() []ijStep {
	rows := [][2]int64{{1, 1}, {1, 2}, {1, 4}, {2, 3}, {1, 3}, {2, 5}, {3, 7}, {2, 6}, {3, 8}, {3, 9}, {1, 10}}
	var steps []ijStep
	wm := operator.NoWatermark
	for _, r := range rows {
		steps = append(steps,
			ijStep{side: 0, key: int(r[0]), at: r[1] * 1e6, val: "v"},
			ijStep{side: 1, key: int(r[0]), at: r[1] * 1e6, val: "v"})
		wm = max(wm, (r[1]-1)*1e6)
		steps = append(steps, ijWM(wm))
	}
	return append(steps, ijWM(operator.MaxWatermark-1))
}

func itcaseLateSpec() IntervalJoinSpec {
	return IntervalJoinSpec{Kind: InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
		LeftTime: 1, RightTime: 1, Lower: 0, Upper: 3e6 - 1}
}

// A row behind the watermark joins only the other side's rows that
// Flink's TimeIntervalJoin still keeps: Flink 2.3 counts 9 pairs for key
// 1, 3 for key 2 and 6 for key 3 on this stream (the case's flink.out),
// not the 10, 5 and 6 that every pair within the bounds would give. The
// same holds when the join is restored from a snapshot after any step,
// and nothing is kept once the last watermark passed.
func TestIntervalJoinLateRowsAsFlink(t *testing.T) {
	steps := itcaseLateSteps()
	ref := NewIntervalJoin(itcaseLateSpec())
	want := make([][]string, len(steps))
	pairs := map[string]int{}
	for i, s := range steps {
		want[i] = stepIJ(t, ref, i, s)
		for _, g := range want[i] {
			pairs[strings.Fields(strings.TrimPrefix(g, "+I["))[0]]++
		}
	}
	if wantPairs := map[string]int{"1": 9, "2": 3, "3": 6}; !maps.Equal(pairs, wantPairs) {
		t.Fatalf("pairs by key %v, want Flink's %v", pairs, wantPairs)
	}
	for cut := range steps {
		j := NewIntervalJoin(itcaseLateSpec())
		for i := range cut {
			stepIJ(t, j, i, steps[i])
		}
		snap, err := j.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		r := NewIntervalJoin(itcaseLateSpec())
		if err := r.Restore(snap); err != nil {
			t.Fatalf("cut %d: restore: %v", cut, err)
		}
		for i := cut; i < len(steps); i++ {
			if got := stepIJ(t, r, i, steps[i]); !slices.Equal(got, want[i]) {
				t.Fatalf("cut %d step %d: got %q, want %q", cut, i, got, want[i])
			}
		}
		if n := r.StateEntries(); n != 0 {
			t.Errorf("cut %d: %d rows kept after the last watermark", cut, n)
		}
	}
}

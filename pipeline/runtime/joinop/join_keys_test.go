package joinop

import (
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// runJoinStepsRestoring is runJoinSteps with the join snapshotted before
// every step and replaced by one restored from the snapshot.
func runJoinStepsRestoring(t *testing.T, spec JoinSpec, steps []joinStep, setup func(*Join)) {
	t.Helper()
	j := NewJoin(spec)
	setup(j)
	for i, s := range steps {
		state, err := j.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		j = NewJoin(spec)
		setup(j)
		if err := j.Restore(state); err != nil {
			t.Fatalf("restore before step %d: %v", i, err)
		}
		var c joinCollector
		if err := j.ProcessInput(s.side, &row.Batch{Changes: []row.Change{s.in}}, &c); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if !slices.Equal(c.got, s.want) {
			t.Errorf("step %d (side %d %s): got %q, want %q", i, s.side, s.in, c.got, s.want)
		}
	}
}

// A null-safe key (IS NOT DISTINCT FROM, Flink's filterNulls false)
// matches NULL with NULL; a plain key of the same join still never does.
func TestJoinNullSafeKey(t *testing.T) {
	spec := JoinSpec{Kind: LeftJoin, LeftKeys: []int{0, 1}, RightKeys: []int{0, 1}, LeftWidth: 3, RightWidth: 3, NullSafe: []bool{true, false}}
	steps := []joinStep{
		{0, optest.Ins(nil, 1, "a"), []string{"+I[null, 1, a, null, null, null]"}},
		{1, optest.Ins(nil, 1, "x"), []string{"-D[null, 1, a, null, null, null]", "+I[null, 1, a, null, 1, x]"}},
		{1, optest.Ins(2, 1, "y"), nil},
		// The second key is compared with =: NULL never matches.
		{0, optest.Ins(nil, nil, "b"), []string{"+I[null, null, b, null, null, null]"}},
		{1, optest.Ins(nil, nil, "z"), nil},
		{1, optest.Del(nil, 1, "x"), []string{"-D[null, 1, a, null, 1, x]", "+I[null, 1, a, null, null, null]"}},
		{0, optest.Ins(2, 1, "c"), []string{"+I[2, 1, c, 2, 1, y]"}},
	}
	runJoinSteps(t, NewJoin(spec), steps)
	runJoinStepsRestoring(t, spec, steps, func(*Join) {})
}

// A join without an equality key keeps all rows of a side in one group:
// every row meets every row of the other side, tested by the residual
// (Flink's join with empty keys on a single parallel instance).
func TestJoinWithoutKey(t *testing.T) {
	spec := JoinSpec{Kind: FullJoin, LeftWidth: 2, RightWidth: 2,
		Residual: func(r row.Row) (bool, error) { return r[0].Int64() < r[2].Int64() || r[1].Str() == r[3].Str(), nil }}
	steps := []joinStep{
		{0, optest.Ins(1, "a"), []string{"+I[1, a, null, null]"}},
		{0, optest.Ins(5, "b"), []string{"+I[5, b, null, null]"}},
		{1, optest.Ins(3, "b"), []string{"-D[1, a, null, null]", "+I[1, a, 3, b]", "-D[5, b, null, null]", "+I[5, b, 3, b]"}},
		{1, optest.Ins(0, "z"), []string{"+I[null, null, 0, z]"}},
		{0, optest.Del(1, "a"), []string{"-D[1, a, 3, b]"}},
		{0, optest.Ins(-1, "q"), []string{"+I[-1, q, 3, b]", "-D[null, null, 0, z]", "+I[-1, q, 0, z]"}},
		{1, optest.Del(3, "b"), []string{"-D[5, b, 3, b]", "+I[5, b, null, null]", "-D[-1, q, 3, b]"}},
	}
	runJoinSteps(t, NewJoin(spec), steps)
	runJoinStepsRestoring(t, spec, steps, func(*Join) {})
}

// The state TTL of a join without a key expires rows one by one, as a
// keyed join's: an expired left row meets no new right row, and its
// retraction later emits nothing of it.
func TestJoinWithoutKeyTTL(t *testing.T) {
	clock := optest.NewFakeClock()
	spec := JoinSpec{Kind: InnerJoin, LeftWidth: 2, RightWidth: 2}
	ttl := func(j *Join) { j.SetStateTTL(operator.StateTTL{TTL: 10 * time.Second, Now: clock.Now}) }
	at := func(sec int64, s joinStep) joinStep { clock.Set(sec); return s }
	j := NewJoin(spec)
	ttl(j)
	runJoinSteps(t, j, []joinStep{at(0, joinStep{0, optest.Ins(1, "a"), nil})})
	runJoinSteps(t, j, []joinStep{at(5, joinStep{0, optest.Ins(2, "b"), nil})})
	runJoinSteps(t, j, []joinStep{at(12, joinStep{1, optest.Ins(9, "x"), []string{"+I[2, b, 9, x]"}})})
	state, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	k := NewJoin(spec)
	ttl(k)
	if err := k.Restore(state); err != nil {
		t.Fatal(err)
	}
	runJoinSteps(t, k, []joinStep{at(16, joinStep{1, optest.Ins(8, "y"), nil})})
	if got := k.StateEntries(); got != 2 {
		t.Errorf("state entries %d, want 2 (x, y; a and b expired)", got)
	}
}

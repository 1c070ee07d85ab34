package joinop

import (
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// joinStep is one change on input side (0 left, 1 right) and the changes
// the join must emit for it.
type joinStep struct {
	side int
	in   row.Change
	want []string
}

type joinCollector struct{ got []string }

func (c *joinCollector) Emit(k row.Kind, r row.Row) {
	c.got = append(c.got, row.Change{Kind: k, Row: r}.String())
}

// joinSpec2 joins [k, a] with [k, b] on k.
func joinSpec2(kind JoinKind) JoinSpec {
	return JoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2}
}

func runJoinSteps(t *testing.T, j *Join, steps []joinStep) {
	t.Helper()
	for i, s := range steps {
		var c joinCollector
		b := &row.Batch{Changes: []row.Change{s.in}}
		if err := j.ProcessInput(s.side, b, &c); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if !slices.Equal(c.got, s.want) {
			t.Errorf("step %d (side %d %s): got %q, want %q", i, s.side, s.in, c.got, s.want)
		}
	}
}

func TestJoinChangelog(t *testing.T) {
	tests := []struct {
		name  string
		kind  JoinKind
		steps []joinStep
	}{
		{"inner, insert-only, match after and before", InnerJoin, []joinStep{
			{0, optest.Ins(1, "a"), nil},
			{1, optest.Ins(1, "x"), []string{"+I[1, a, 1, x]"}},
			{0, optest.Ins(1, "b"), []string{"+I[1, b, 1, x]"}},
			{1, optest.Ins(2, "y"), nil},
			{0, optest.Ins(nil, "n"), nil}, // a null key never matches
			{1, optest.Ins(nil, "m"), nil},
		}},
		{"inner, updating right, retraction of a matched row", InnerJoin, []joinStep{
			{0, optest.Ins(1, "a"), nil},
			{1, optest.Ins(1, "x"), []string{"+I[1, a, 1, x]"}},
			{1, optest.UB(1, "x"), []string{"-U[1, a, 1, x]"}},
			{1, optest.UA(1, "z"), []string{"+U[1, a, 1, z]"}},
			{0, optest.Del(1, "a"), []string{"-D[1, a, 1, z]"}},
			{1, optest.Del(1, "z"), nil},
		}},
		{"left, match arrives after", LeftJoin, []joinStep{
			{0, optest.Ins(1, "a"), []string{"+I[1, a, null, null]"}},
			{1, optest.Ins(1, "x"), []string{"-D[1, a, null, null]", "+I[1, a, 1, x]"}},
			{1, optest.Ins(1, "y"), []string{"+I[1, a, 1, y]"}},
			{1, optest.Del(1, "x"), []string{"-D[1, a, 1, x]"}},
			{1, optest.Del(1, "y"), []string{"-D[1, a, 1, y]", "+I[1, a, null, null]"}},
			{0, optest.Del(1, "a"), []string{"-D[1, a, null, null]"}},
			{0, optest.Ins(nil, "n"), []string{"+I[null, n, null, null]"}},
			{1, optest.Ins(nil, "m"), nil},
		}},
		{"left, match before, duplicates", LeftJoin, []joinStep{
			{1, optest.Ins(1, "x"), nil},
			{0, optest.Ins(1, "a"), []string{"+I[1, a, 1, x]"}},
			{0, optest.Ins(1, "a"), []string{"+I[1, a, 1, x]"}},
			{1, optest.Del(1, "x"), []string{"-D[1, a, 1, x]", "-D[1, a, 1, x]", "+I[1, a, null, null]", "+I[1, a, null, null]"}},
		}},
		{"right", RightJoin, []joinStep{
			{1, optest.Ins(1, "x"), []string{"+I[null, null, 1, x]"}},
			{0, optest.Ins(1, "a"), []string{"-D[null, null, 1, x]", "+I[1, a, 1, x]"}},
			{0, optest.Del(1, "a"), []string{"-D[1, a, 1, x]", "+I[null, null, 1, x]"}},
		}},
		{"full", FullJoin, []joinStep{
			{0, optest.Ins(1, "a"), []string{"+I[1, a, null, null]"}},
			{1, optest.Ins(2, "y"), []string{"+I[null, null, 2, y]"}},
			{1, optest.Ins(1, "x"), []string{"-D[1, a, null, null]", "+I[1, a, 1, x]"}},
			{0, optest.Del(1, "a"), []string{"-D[1, a, 1, x]", "+I[null, null, 1, x]"}},
		}},
		{"semi", SemiJoin, []joinStep{
			{0, optest.Ins(1, "a"), nil},
			{1, optest.Ins(1, "x"), []string{"+I[1, a]"}},
			{1, optest.Ins(1, "y"), nil},
			{0, optest.Ins(1, "b"), []string{"+I[1, b]"}},
			{1, optest.Del(1, "x"), nil},
			{1, optest.Del(1, "y"), []string{"-D[1, a]", "-D[1, b]"}},
			{0, optest.Ins(nil, "n"), nil},
		}},
		{"anti", AntiJoin, []joinStep{
			{0, optest.Ins(1, "a"), []string{"+I[1, a]"}},
			{1, optest.Ins(1, "x"), []string{"-D[1, a]"}},
			{0, optest.Ins(1, "b"), nil},
			{1, optest.Del(1, "x"), []string{"+I[1, a]", "+I[1, b]"}},
			{0, optest.Ins(nil, "n"), []string{"+I[null, n]"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			steps := tc.steps
			semi := tc.kind == SemiJoin || tc.kind == AntiJoin
			for i := range steps {
				if semi {
					slices.Sort(steps[i].want)
				}
			}
			j := NewJoin(joinSpec2(tc.kind))
			for i, s := range steps {
				var c joinCollector
				if err := j.ProcessInput(s.side, &row.Batch{Changes: []row.Change{s.in}}, &c); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if semi {
					slices.Sort(c.got) // several left rows of one key come in map order
				}
				if !slices.Equal(c.got, s.want) && !(len(c.got) == 0 && len(s.want) == 0) {
					t.Errorf("step %d (side %d %s): got %q, want %q", i, s.side, s.in, c.got, s.want)
				}
			}
		})
	}
}

func TestJoinResidualAndUniqueKey(t *testing.T) {
	spec := joinSpec2(LeftJoin)
	spec.RightUnique = []int{0}
	// ON l.k = r.k AND l.a < r.b
	spec.Residual = func(r row.Row) (bool, error) { return r[1].Str() < r[3].Str(), nil }
	j := NewJoin(spec)
	runJoinSteps(t, j, []joinStep{
		{0, optest.Ins(1, "m"), []string{"+I[1, m, null, null]"}},
		{1, optest.Ins(1, "a"), nil}, // a < m: no match
		{1, optest.UB(1, "a"), nil},
		{1, optest.UA(1, "z"), []string{"-D[1, m, null, null]", "+I[1, m, 1, z]"}},
	})
	if got := j.StateEntries(); got != 2 {
		t.Errorf("state entries %d, want 2 (the right side keeps one row per unique key)", got)
	}
}

func TestJoinSnapshotRestore(t *testing.T) {
	j := NewJoin(joinSpec2(FullJoin))
	runJoinSteps(t, j, []joinStep{
		{0, optest.Ins(1, "a"), []string{"+I[1, a, null, null]"}},
		{0, optest.Ins(1, "a"), []string{"+I[1, a, null, null]"}},
		{1, optest.Ins(2, "y"), []string{"+I[null, null, 2, y]"}},
	})
	state, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	k := NewJoin(joinSpec2(FullJoin))
	if err := k.Restore(state); err != nil {
		t.Fatal(err)
	}
	runJoinSteps(t, k, []joinStep{
		{1, optest.Ins(1, "x"), []string{"-D[1, a, null, null]", "-D[1, a, null, null]", "+I[1, a, 1, x]", "+I[1, a, 1, x]"}},
		{0, optest.Ins(2, "b"), []string{"-D[null, null, 2, y]", "+I[2, b, 2, y]"}},
		{0, optest.Del(2, "b"), []string{"-D[2, b, 2, y]", "+I[null, null, 2, y]"}},
	})
	if err := k.Restore(state[:len(state)-1]); err == nil {
		t.Error("a cut state was restored")
	}
}

func TestJoinBatch(t *testing.T) {
	spec := joinSpec2(FullJoin)
	spec.Batch = true
	j := NewJoin(spec)
	runJoinSteps(t, j, []joinStep{
		{0, optest.Ins(1, "a"), nil},
		{1, optest.Ins(1, "x"), nil},
		{0, optest.Ins(3, "c"), nil},
		{1, optest.Ins(2, "y"), nil},
		{1, optest.Ins(nil, "z"), nil},
	})
	state, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	j = NewJoin(spec)
	if err := j.Restore(state); err != nil {
		t.Fatal(err)
	}
	var c joinCollector
	if err := j.Finish(&c); err != nil {
		t.Fatal(err)
	}
	slices.Sort(c.got)
	want := []string{"+I[1, a, 1, x]", "+I[3, c, null, null]", "+I[null, null, 2, y]", "+I[null, null, null, z]"}
	if !slices.Equal(c.got, want) {
		t.Errorf("batch full join: got %q, want %q", c.got, want)
	}
}

func TestJoinNotInNullRule(t *testing.T) {
	spec := joinSpec2(AntiJoin)
	spec.NullAware = true
	spec.RightWidth = 1
	j := NewJoin(spec)
	runJoinSteps(t, j, []joinStep{
		{0, optest.Ins(1, "a"), []string{"+I[1, a]"}},
		{0, optest.Ins(nil, "n"), []string{"+I[null, n]"}}, // NULL NOT IN (empty) is true
		{1, optest.Ins(2), []string{"-D[null, n]"}},        // NULL NOT IN (2) is unknown
		{1, optest.Ins(1), []string{"-D[1, a]"}},
		{1, optest.Del(1), []string{"+I[1, a]"}},
		{1, optest.Ins(nil), []string{"-D[1, a]"}}, // 1 NOT IN (2, NULL) is unknown
		{0, optest.Ins(3, "c"), nil},
	})
	state, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	k := NewJoin(spec)
	if err := k.Restore(state); err != nil {
		t.Fatal(err)
	}
	var c joinCollector
	if err := k.ProcessInput(1, &row.Batch{Changes: []row.Change{optest.Del(nil)}}, &c); err != nil {
		t.Fatal(err)
	}
	slices.Sort(c.got)
	if want := []string{"+I[1, a]", "+I[3, c]"}; !slices.Equal(c.got, want) {
		t.Errorf("after the NULL left the restored right side: got %q, want %q", c.got, want)
	}
	for _, step := range []joinStep{{1, optest.Del(2), []string{"+I[null, n]"}}} {
		runJoinSteps(t, k, []joinStep{step})
	}
}

// A batch join keeps no ages, whatever TTL it is given: it holds its
// left rows until the end of input, and none may expire before.
func TestBatchJoinHasNoTTL(t *testing.T) {
	spec := joinSpec2(LeftJoin)
	spec.Batch = true
	j := NewJoin(spec)
	j.SetStateTTL(operator.StateTTL{TTL: time.Second})
	if j.Expiring() || j.SweepEvery() != 0 {
		t.Fatalf("a batch join expires state: expiring %v, sweep every %v", j.Expiring(), j.SweepEvery())
	}
	state, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if state[0] != JoinStateVersion {
		t.Fatalf("snapshot version %d, want %d (no ages)", state[0], JoinStateVersion)
	}
}

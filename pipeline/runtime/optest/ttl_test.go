package optest

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/rankop"
)

type ttlOp interface {
	operator.Lifecycle
	operator.Snapshotter
	operator.StateSizer
	operator.TTLSetter
}

func runTTLSteps(t *testing.T, op ttlOp, clock *fakeClock, steps []TTLStep) {
	t.Helper()
	for i, s := range steps {
		clock.Set(s.At)
		out := &Out{}
		b := &row.Batch{Changes: []row.Change{s.In}}
		var err error
		if two, ok := op.(operator.TwoInput); ok {
			err = two.ProcessInput(s.Side, b, out)
		} else {
			err = op.(operator.Operator).Process(b, out)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := out.Take(); !slices.Equal(got, s.Want) {
			t.Errorf("step %d (t=%ds, %s): got %q, want %q", i, s.At, s.In, got, s.Want)
		}
	}
}

func countSum() []aggop.AggCall {
	return []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 1, ArgType: TBigInt}}
}

// The cases below are Flink's semantics with table.exec.state.ttl = 10 s
// (processing time, OnCreateAndWrite, NeverReturnExpired): a key's state
// lives until 10 s after its last write.
func TestStateTTLChangelog(t *testing.T) {
	groupSteps := []TTLStep{
		{At: 0, In: Ins("a", 1), Want: []string{"+I[a, 1, 1]"}},
		{At: 5, In: Ins("a", 2), Want: []string{"-U[a, 1, 1]", "+U[a, 2, 3]"}},
		// Written at 5: alive until 15.
		{At: 14, In: Ins("a", 1), Want: []string{"-U[a, 2, 3]", "+U[a, 3, 4]"}},
		// Written at 14, expired at 24: the retraction is ignored.
		{At: 24, In: Del("a", 1), Want: nil},
		// A new row starts the key again: +I, not -U/+U.
		{At: 24, In: Ins("a", 5), Want: []string{"+I[a, 1, 5]"}},
		// A retraction that leaves the result as it was still emits
		// -U/+U while a TTL is set (Flink's GroupAggFunction).
		{At: 25, In: Ins("a", 0), Want: []string{"-U[a, 1, 5]", "+U[a, 2, 5]"}},
	}
	tests := []struct {
		name  string
		op    func() ttlOp
		steps []TTLStep
	}{
		{"group aggregate", func() ttlOp { return Must(aggop.NewGroupAgg([]int{0}, countSum(), aggop.GroupAggOptions{})) }, groupSteps},
		{"group aggregate, mini-batch", func() ttlOp {
			return Must(aggop.NewGroupAgg([]int{0}, countSum(), aggop.GroupAggOptions{MiniBatch: true}))
		}, groupSteps},
		{"group aggregate, result unchanged", func() ttlOp {
			return Must(aggop.NewGroupAgg([]int{0}, []aggop.AggCall{{Func: aggop.Max, Arg: 1, ArgType: TBigInt}}, aggop.GroupAggOptions{InsertOnly: true}))
		}, []TTLStep{
			{At: 0, In: Ins("a", 5), Want: []string{"+I[a, 5]"}},
			{At: 1, In: Ins("a", 3), Want: []string{"-U[a, 5]", "+U[a, 5]"}},
		}},
		{"intersect all", func() ttlOp { return Must(aggop.NewSetOp(aggop.IntersectAll, 1, false)) }, []TTLStep{
			{At: 0, In: Ins("x", int32(0)), Want: nil},
			{At: 5, In: Ins("x", int32(1)), Want: []string{"+I[x]"}},
			// Written at 5, expired at 15: the retraction is dropped, and
			// the counts start again from 0.
			{At: 15, In: Del("x", int32(1)), Want: nil},
			{At: 15, In: Ins("x", int32(1)), Want: nil},
			{At: 16, In: Ins("x", int32(0)), Want: []string{"+I[x]"}},
		}},
		{"distinct", func() ttlOp { return aggop.NewDistinct() }, []TTLStep{
			{At: 0, In: Ins("x", 1), Want: []string{"+I[x, 1]"}},
			{At: 5, In: Ins("x", 1), Want: nil}, // refreshes: alive until 15
			{At: 14, In: Ins("x", 1), Want: nil},
			{At: 24, In: Ins("x", 1), Want: []string{"+I[x, 1]"}},
		}},
		{"dedup keep first, processing time", func() ttlOp { return rankop.NewDedup(rankop.DedupSpec{Key: []int{0}, TimeCol: 1}) }, []TTLStep{
			{At: 0, In: Ins("a", "p"), Want: []string{"+I[a, p]"}},
			{At: 5, In: Ins("a", "q"), Want: nil}, // a dropped row does not refresh
			{At: 10, In: Ins("a", "r"), Want: []string{"+I[a, r]"}},
		}},
		{"dedup keep last, processing time", func() ttlOp {
			return rankop.NewDedup(rankop.DedupSpec{Key: []int{0}, TimeCol: 1, KeepLast: true})
		}, []TTLStep{
			{At: 0, In: Ins("a", "p"), Want: []string{"+I[a, p]"}},
			{At: 5, In: Ins("a", "q"), Want: []string{"-U[a, p]", "+U[a, q]"}},
			{At: 14, In: Ins("a", "r"), Want: []string{"-U[a, q]", "+U[a, r]"}},
			{At: 24, In: Ins("a", "s"), Want: []string{"+I[a, s]"}},
		}},
		{"top-2 append-only", func() ttlOp { return rankop.NewTopN(topNSpec(rankop.AppendFast, false, 1, 2)) }, []TTLStep{
			{At: 0, In: Ins("c", "x", 10), Want: []string{"+I[c, x, 10]"}},
			{At: 1, In: Ins("c", "y", 20), Want: []string{"+I[c, y, 20]"}},
			{At: 2, In: Ins("c", "z", 30), Want: []string{"-D[c, x, 10]", "+I[c, z, 30]"}},
			// Expired at 12: the partition starts empty.
			{At: 12, In: Ins("c", "w", 1), Want: []string{"+I[c, w, 1]"}},
		}},
		{"top-2 retract", func() ttlOp { return rankop.NewTopN(topNSpec(rankop.Retract, true, 1, 2)) }, []TTLStep{
			{At: 0, In: Ins("c", "x", 10), Want: []string{"+I[c, x, 10, 1]"}},
			{At: 10, In: Del("c", "x", 10), Want: nil}, // expired: ignored
			{At: 10, In: Ins("c", "y", 5), Want: []string{"+I[c, y, 5, 1]"}},
		}},
		{"top-2 update-fast", func() ttlOp { return Must(rankop.NewUpdatableTopN(updateFastSpec(true, 1, 2))) }, []TTLStep{
			{At: 0, In: Ins("a", "x", 1), Want: []string{"+I[a, x, 1, 1]"}},
			{At: 5, In: UA("a", "x", 2), Want: []string{"-U[a, x, 1, 1]", "+U[a, x, 2, 1]"}},
			// Written at 5, expired at 15: x enters an empty top again.
			{At: 15, In: UA("a", "x", 3), Want: []string{"+I[a, x, 3, 1]"}},
		}},
		{"inner join", func() ttlOp { return joinop.NewJoin(joinSpec2(joinop.InnerJoin)) }, []TTLStep{
			{At: 0, Side: 0, In: Ins(1, "a"), Want: nil},
			{At: 5, Side: 1, In: Ins(1, "x"), Want: []string{"+I[1, a, 1, x]"}},
			// The left row expired at 10 (probing it does not refresh).
			{At: 10, Side: 1, In: Ins(1, "y"), Want: nil},
			// Its retraction still joins with the right's live rows, as
			// Flink's StreamingJoinOperator does.
			{At: 11, Side: 0, In: Del(1, "a"), Want: []string{"-D[1, a, 1, x]", "-D[1, a, 1, y]"}},
			{At: 15, Side: 0, In: Ins(1, "b"), Want: []string{"+I[1, b, 1, y]"}},
		}},
		{"left join: matches refresh the outer row", func() ttlOp { return joinop.NewJoin(joinSpec2(joinop.LeftJoin)) }, []TTLStep{
			{At: 0, Side: 0, In: Ins(1, "a"), Want: []string{"+I[1, a, null, null]"}},
			// The match changes the left row's match count: a write.
			{At: 8, Side: 1, In: Ins(1, "x"), Want: []string{"-D[1, a, null, null]", "+I[1, a, 1, x]"}},
			{At: 17, Side: 1, In: Del(1, "x"), Want: []string{"-D[1, a, 1, x]", "+I[1, a, null, null]"}},
			// Left written at 17; the right row was removed: nothing left
			// at 27, and a new right row finds no left row.
			{At: 27, Side: 1, In: Ins(1, "y"), Want: nil},
		}},
		{"semi join", func() ttlOp { return joinop.NewJoin(joinSpec2(joinop.SemiJoin)) }, []TTLStep{
			{At: 0, Side: 0, In: Ins(1, "a"), Want: nil},
			{At: 10, Side: 1, In: Ins(1, "x"), Want: nil}, // the left row expired
			{At: 11, Side: 0, In: Ins(1, "b"), Want: []string{"+I[1, b]"}},
		}},
		{"anti join", func() ttlOp { return joinop.NewJoin(joinSpec2(joinop.AntiJoin)) }, []TTLStep{
			{At: 0, Side: 1, In: Ins(1, "x"), Want: nil},
			{At: 10, Side: 0, In: Ins(1, "a"), Want: []string{"+I[1, a]"}}, // the right row expired
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewFakeClock()
			op := tt.op()
			op.SetStateTTL(operator.StateTTL{TTL: TTL10s, Now: clock.Now})
			runTTLSteps(t, op, clock, tt.steps)
		})
	}
}

// TestStateTTLFreesUntouchedKeys: keys nobody writes again leave the
// state, through the sweep after a batch of other keys and through the
// node's timer sweep on a quiet input.
func TestStateTTLFreesUntouchedKeys(t *testing.T) {
	ops := map[string]func() ttlOp{
		"group aggregate":   func() ttlOp { return Must(aggop.NewGroupAgg([]int{0}, countSum(), aggop.GroupAggOptions{})) },
		"distinct":          func() ttlOp { return aggop.NewDistinct() },
		"dedup":             func() ttlOp { return rankop.NewDedup(rankop.DedupSpec{Key: []int{0}, TimeCol: 1, KeepLast: true}) },
		"top-n":             func() ttlOp { return rankop.NewTopN(topNSpec(rankop.Retract, false, 1, 3)) },
		"top-n update-fast": func() ttlOp { return Must(rankop.NewUpdatableTopN(updateFastSpec(false, 1, 3))) },
		"join":              func() ttlOp { return joinop.NewJoin(joinSpec2(joinop.LeftJoin)) },
	}
	for name, mk := range ops {
		t.Run(name, func(t *testing.T) {
			clock := NewFakeClock()
			op := mk()
			op.SetStateTTL(operator.StateTTL{TTL: TTL10s, Now: clock.Now})
			var steps []TTLStep
			for i := range 1000 {
				steps = append(steps, TTLStep{At: 0, In: Ins(i, 1, 1)})
			}
			feed(t, op, 0, steps)
			if n := op.StateEntries(); n != 1000 {
				t.Fatalf("state entries %d, want 1000", n)
			}
			clock.Set(9)
			feed(t, op, 0, []TTLStep{{In: Ins(5000, 1, 1)}})
			if n := op.StateEntries(); n != 1001 {
				t.Fatalf("before the TTL: state entries %d, want 1001", n)
			}
			// From 10 s the first 1000 keys are expired; each batch frees
			// at most sweepBudget of them, more than it can add.
			clock.Set(10)
			for i := range 4 {
				feed(t, op, 0, []TTLStep{{In: Ins(5001+i, 1, 1)}})
			}
			if n := op.StateEntries(); n != 5 {
				t.Errorf("after the TTL: state entries %d, want 5 (the keys written at 9 s and 10 s)", n)
			}
			sw := op.(operator.Sweeper)
			if sw.SweepEvery() <= 0 {
				t.Fatalf("SweepEvery %v with a TTL", sw.SweepEvery())
			}
			clock.Set(20)
			sw.Sweep()
			if n := op.StateEntries(); n != 0 {
				t.Errorf("after a quiet sweep: state entries %d, want 0", n)
			}
		})
	}
}

// feed processes steps as one batch (columns [k, v, w] fit every
// operator of TestStateTTLFreesUntouchedKeys; a join gets them on side).
func feed(t *testing.T, op ttlOp, side int, steps []TTLStep) {
	t.Helper()
	b := &row.Batch{}
	for _, s := range steps {
		r := s.In.Row
		if _, ok := op.(*joinop.Join); ok {
			r = r[:2]
		}
		b.Append(s.In.Kind, r)
	}
	var err error
	if two, ok := op.(operator.TwoInput); ok {
		err = two.ProcessInput(side, b, &Out{})
	} else {
		err = op.(operator.Operator).Process(b, &Out{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestStateTTLRestoreKeepsAges: a restored operator expires a key when
// the key's last write before the checkpoint is TTL old, not TTL after
// the restore; a snapshot without times (a run without TTL, or from
// before the TTL existed) restores with the restore time as every
// key's last write; a snapshot with times restores into a run without
// TTL.
func TestStateTTLRestoreKeepsAges(t *testing.T) {
	tests := []struct {
		name   string
		op     func() ttlOp
		setup  []TTLStep // at 0 and 5
		probe  TTLStep   // at 9 (alive) and again at 10 (expired)
		alive  []string
		expire []string
	}{
		{"group aggregate", func() ttlOp { return Must(aggop.NewGroupAgg([]int{0}, countSum(), aggop.GroupAggOptions{})) },
			[]TTLStep{{At: 0, In: Ins("a", 1)}, {At: 5, In: Ins("b", 1)}},
			TTLStep{In: Del("a", 1)}, []string{"-D[a, 1, 1]"}, nil},
		{"distinct", func() ttlOp { return aggop.NewDistinct() },
			[]TTLStep{{At: 0, In: Ins("a", 1)}, {At: 5, In: Ins("b", 1)}},
			TTLStep{In: Ins("a", 1)}, nil, []string{"+I[a, 1]"}},
		{"dedup", func() ttlOp { return rankop.NewDedup(rankop.DedupSpec{Key: []int{0}, TimeCol: 1}) },
			[]TTLStep{{At: 0, In: Ins("a", "p")}, {At: 5, In: Ins("b", "q")}},
			TTLStep{In: Ins("a", "r")}, nil, []string{"+I[a, r]"}},
		{"top-n", func() ttlOp { return rankop.NewTopN(topNSpec(rankop.Retract, false, 1, 2)) },
			[]TTLStep{{At: 0, In: Ins("a", "x", 1)}, {At: 5, In: Ins("b", "y", 1)}},
			TTLStep{In: Del("a", "x", 1)}, []string{"-D[a, x, 1]"}, nil},
		{"top-n update-fast", func() ttlOp { return Must(rankop.NewUpdatableTopN(updateFastSpec(false, 1, 2))) },
			[]TTLStep{{At: 0, In: Ins("a", "x", 1)}, {At: 5, In: Ins("b", "y", 1)}},
			TTLStep{In: UA("a", "x", 2)}, []string{"-U[a, x, 1]", "+U[a, x, 2]"}, []string{"+I[a, x, 2]"}},
		{"join", func() ttlOp { return joinop.NewJoin(joinSpec2(joinop.InnerJoin)) },
			[]TTLStep{{At: 0, Side: 0, In: Ins(1, "a")}, {At: 5, Side: 0, In: Ins(2, "b")}},
			TTLStep{Side: 1, In: Ins(1, "x")}, []string{"+I[1, a, 1, x]"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewFakeClock()
			op := tt.op()
			op.SetStateTTL(operator.StateTTL{TTL: TTL10s, Now: clock.Now})
			for _, s := range tt.setup {
				s.Want = nil
				clock.Set(s.At)
				runQuiet(t, op, s)
			}
			state, err := op.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range []int64{9, 10} {
				clock.Set(at)
				r := tt.op()
				r.SetStateTTL(operator.StateTTL{TTL: TTL10s, Now: clock.Now})
				if err := r.Restore(state); err != nil {
					t.Fatal(err)
				}
				want := tt.alive
				if at == 10 {
					want = tt.expire
				}
				p := tt.probe
				p.At, p.Want = at, want
				runTTLSteps(t, r, clock, []TTLStep{p})
			}

			// Without times: the restore time is every key's last write.
			plain := tt.op()
			for _, s := range tt.setup {
				runQuiet(t, plain, s)
			}
			old, err := plain.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			clock.Set(100)
			r := tt.op()
			r.SetStateTTL(operator.StateTTL{TTL: TTL10s, Now: clock.Now})
			if err := r.Restore(old); err != nil {
				t.Fatal(err)
			}
			p := tt.probe
			p.At, p.Want = 109, tt.alive
			runTTLSteps(t, r, clock, []TTLStep{p})
			clock.Set(100)
			r = tt.op()
			r.SetStateTTL(operator.StateTTL{TTL: TTL10s, Now: clock.Now})
			if err := r.Restore(old); err != nil {
				t.Fatal(err)
			}
			p.At, p.Want = 110, tt.expire
			runTTLSteps(t, r, clock, []TTLStep{p})

			// A snapshot with times restores into a run without TTL,
			// which keeps every key.
			r = tt.op()
			if err := r.Restore(state); err != nil {
				t.Fatal(err)
			}
			p.At, p.Want = 1000, tt.alive
			runTTLSteps(t, r, clock, []TTLStep{p})
		})
	}
}

func runQuiet(t *testing.T, op ttlOp, s TTLStep) {
	t.Helper()
	b := &row.Batch{Changes: []row.Change{s.In}}
	var err error
	if two, ok := op.(operator.TwoInput); ok {
		err = two.ProcessInput(s.Side, b, &Out{})
	} else {
		err = op.(operator.Operator).Process(b, &Out{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestStateTTLOffIsUnchanged: without a TTL the snapshots keep their
// old versions byte for byte, so checkpoints of earlier runs and of
// this one are interchangeable.
func TestStateTTLOffIsUnchanged(t *testing.T) {
	for name, op := range map[string]ttlOp{
		"group aggregate": Must(aggop.NewGroupAgg([]int{0}, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}, aggop.GroupAggOptions{})),
		"distinct":        aggop.NewDistinct(),
		"dedup":           rankop.NewDedup(rankop.DedupSpec{Key: []int{0}, TimeCol: 1}),
		"top-n":           rankop.NewTopN(topNSpec(rankop.Retract, false, 1, 2)),
		"join":            joinop.NewJoin(joinSpec2(joinop.InnerJoin)),
	} {
		op.SetStateTTL(operator.StateTTL{})
		runQuiet(t, op, TTLStep{In: Ins(1, "a", 1)})
		state, err := op.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]byte{"group aggregate": aggop.GroupAggStateVersion, "distinct": aggop.DistinctStateVersion,
			"dedup": rankop.DedupStateVersion, "top-n": rankop.TopNStateVersion, "join": joinop.JoinStateVersion}[name]
		if state[0] != want {
			t.Errorf("%s: snapshot version %d without a TTL, want %d", name, state[0], want)
		}
		if op.(operator.Sweeper).SweepEvery() != 0 {
			t.Errorf("%s: sweeps without a TTL", name)
		}
	}
}

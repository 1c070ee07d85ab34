package optest

import (
	"testing"

	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// TestStateTTLRestoreOverLiveState: Restore replaces the state, its
// ages too. An operator that took more keys after its snapshot (at 5,
// under ids the restored state reuses) and is then restored in place
// expires the snapshot's key when its own age says (alive at 9, gone at
// 10), not by an age left over from the replaced state; every operator
// with a state TTL resets its TTL list (state.TTLList.Reset) or builds
// a new one.
func TestStateTTLRestoreOverLiveState(t *testing.T) {
	tests := []struct {
		name   string
		op     func() ttlOp
		first  TTLStep   // at 0: in the snapshot
		later  []TTLStep // at 5: replaced by the restore
		probe  TTLStep
		alive  []string
		expire []string
	}{
		{"group aggregate", func() ttlOp { return Must(aggop.NewGroupAgg([]int{0}, countSum(), aggop.GroupAggOptions{})) },
			TTLStep{In: Ins("a", 1)}, []TTLStep{{In: Ins("b", 1)}, {In: Ins("c", 1)}},
			TTLStep{In: Del("a", 1)}, []string{"-D[a, 1, 1]"}, nil},
		{"distinct", func() ttlOp { return aggop.NewDistinct() },
			TTLStep{In: Ins("a", 1)}, []TTLStep{{In: Ins("b", 1)}, {In: Ins("c", 1)}},
			TTLStep{In: Ins("a", 1)}, nil, []string{"+I[a, 1]"}},
		{"dedup", func() ttlOp { return rankop.NewDedup(rankop.DedupSpec{Key: []int{0}, TimeCol: 1}) },
			TTLStep{In: Ins("a", "p")}, []TTLStep{{In: Ins("b", "q")}, {In: Ins("c", "q")}},
			TTLStep{In: Ins("a", "r")}, nil, []string{"+I[a, r]"}},
		{"top-n", func() ttlOp { return rankop.NewTopN(topNSpec(rankop.Retract, false, 1, 2)) },
			TTLStep{In: Ins("a", "x", 1)}, []TTLStep{{In: Ins("b", "y", 1)}, {In: Ins("c", "y", 1)}},
			TTLStep{In: Del("a", "x", 1)}, []string{"-D[a, x, 1]"}, nil},
		{"over ordered by a non-time column", func() ttlOp {
			return Must(windowop.NewNonTimeOver(windowop.NonTimeSpec{Keys: []int{0}, Order: 1, Aggs: countSum()}, windowop.WindowOptions{}))
		},
			TTLStep{In: Ins("a", 1)}, []TTLStep{{In: Ins("b", 1)}, {In: Ins("c", 1)}},
			TTLStep{In: Ins("a", 2)}, []string{"+I[a, 2, 2, 3]"}, []string{"+I[a, 2, 1, 2]"}},
		{"join", func() ttlOp { return joinop.NewJoin(joinSpec2(joinop.InnerJoin)) },
			TTLStep{Side: 0, In: Ins(1, "a")}, []TTLStep{{Side: 0, In: Ins(2, "b")}, {Side: 0, In: Ins(3, "c")}},
			TTLStep{Side: 1, In: Ins(1, "x")}, []string{"+I[1, a, 1, x]"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, at := range []int64{9, 10} {
				clock := NewFakeClock()
				op := tt.op()
				op.SetStateTTL(operator.StateTTL{TTL: TTL10s, Now: clock.Now})
				clock.Set(0)
				runQuiet(t, op, tt.first)
				state, err := op.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				clock.Set(5)
				for _, s := range tt.later {
					runQuiet(t, op, s)
				}
				if err := op.Restore(state); err != nil {
					t.Fatal(err)
				}
				want := tt.alive
				if at == 10 {
					want = tt.expire
				}
				p := tt.probe
				p.At, p.Want = at, want
				runTTLSteps(t, op, clock, []TTLStep{p})
			}
		})
	}
}

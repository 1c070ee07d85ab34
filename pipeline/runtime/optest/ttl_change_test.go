package optest

import (
	"testing"
	"time"

	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/rankop"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// TestStateTTLChangeAcrossRestore: a state TTL changed between the run
// that took a checkpoint and the run that restores it (state_ttl edited)
// migrates the state in place: each key keeps its last write, and the
// new TTL applies to it. Shortened from an hour to 10 s, a key written
// at 0 is alive at 9 and gone at 10 (its first check after the restore
// expires it); lengthened from 10 s to an hour, the same key is alive
// at 10 and at 3599, and gone at 3600.
func TestStateTTLChangeAcrossRestore(t *testing.T) {
	tests := []struct {
		name   string
		op     func() ttlOp
		setup  []TTLStep // at 0 and 5
		probe  TTLStep
		alive  []string
		expire []string
	}{
		{"group aggregate", func() ttlOp { return Must(aggop.NewGroupAgg([]int{0}, countSum(), aggop.GroupAggOptions{})) },
			[]TTLStep{{At: 0, In: Ins("a", 1)}, {At: 5, In: Ins("b", 1)}},
			TTLStep{In: Del("a", 1)}, []string{"-D[a, 1, 1]"}, nil},
		{"distinct", func() ttlOp { return aggop.NewDistinct() },
			[]TTLStep{{At: 0, In: Ins("a", 1)}, {At: 5, In: Ins("b", 1)}},
			TTLStep{In: Ins("a", 1)}, nil, []string{"+I[a, 1]"}},
		{"intersect all", func() ttlOp { return Must(aggop.NewSetOp(aggop.IntersectAll, 1, false)) },
			[]TTLStep{{At: 0, In: Ins("a", int32(0))}, {At: 5, In: Ins("b", int32(0))}},
			TTLStep{In: Ins("a", int32(1))}, []string{"+I[a]"}, nil},
		{"dedup", func() ttlOp { return rankop.NewDedup(rankop.DedupSpec{Key: []int{0}, TimeCol: 1}) },
			[]TTLStep{{At: 0, In: Ins("a", "p")}, {At: 5, In: Ins("b", "q")}},
			TTLStep{In: Ins("a", "r")}, nil, []string{"+I[a, r]"}},
		{"top-n", func() ttlOp { return rankop.NewTopN(topNSpec(rankop.Retract, false, 1, 2)) },
			[]TTLStep{{At: 0, In: Ins("a", "x", 1)}, {At: 5, In: Ins("b", "y", 1)}},
			TTLStep{In: Del("a", "x", 1)}, []string{"-D[a, x, 1]"}, nil},
		{"top-n update-fast", func() ttlOp { return Must(rankop.NewUpdatableTopN(updateFastSpec(false, 1, 2))) },
			[]TTLStep{{At: 0, In: Ins("a", "x", 1)}, {At: 5, In: Ins("b", "y", 1)}},
			TTLStep{In: UA("a", "x", 2)}, []string{"-U[a, x, 1]", "+U[a, x, 2]"}, []string{"+I[a, x, 2]"}},
		{"over ordered by a non-time column", func() ttlOp {
			return Must(windowop.NewNonTimeOver(windowop.NonTimeSpec{Keys: []int{0}, Order: 1, Aggs: countSum()}, windowop.WindowOptions{}))
		},
			[]TTLStep{{At: 0, In: Ins("a", 1)}, {At: 5, In: Ins("b", 1)}},
			TTLStep{In: Ins("a", 2)}, []string{"+I[a, 2, 2, 3]"}, []string{"+I[a, 2, 1, 2]"}},
		{"join", func() ttlOp { return joinop.NewJoin(joinSpec2(joinop.InnerJoin)) },
			[]TTLStep{{At: 0, Side: 0, In: Ins(1, "a")}, {At: 5, Side: 0, In: Ins(2, "b")}},
			TTLStep{Side: 1, In: Ins(1, "x")}, []string{"+I[1, a, 1, x]"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				before, after time.Duration
				alive, gone   int64
			}{
				{time.Hour, TTL10s, 9, 10},
				{TTL10s, time.Hour, 3599, 3600},
			} {
				clock := NewFakeClock()
				op := tt.op()
				op.SetStateTTL(operator.StateTTL{TTL: c.before, Now: clock.Now})
				for _, s := range tt.setup {
					clock.Set(s.At)
					runQuiet(t, op, s)
				}
				state, err := op.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				for _, at := range []int64{c.alive, c.gone} {
					// The restore runs at 6, before the old TTL would have
					// expired anything.
					clock.Set(6)
					r := tt.op()
					r.SetStateTTL(operator.StateTTL{TTL: c.after, Now: clock.Now})
					if err := r.Restore(state); err != nil {
						t.Fatal(err)
					}
					want := tt.alive
					if at == c.gone {
						want = tt.expire
					}
					p := tt.probe
					p.At, p.Want = at, want
					runTTLSteps(t, r, clock, []TTLStep{p})
				}
			}
		})
	}
}

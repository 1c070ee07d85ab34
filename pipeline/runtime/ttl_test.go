package runtime

import (
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// fakeClock is an injected processing-time clock: tests move it instead
// of sleeping.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newFakeClock() *fakeClock { return &fakeClock{t: time.UnixMilli(1_700_000_000_000)} }

// set moves the clock to sec seconds after its start.
func (c *fakeClock) set(sec int64) { c.t = time.UnixMilli(1_700_000_000_000 + sec*1000) }

// ttlStep is one change at a clock time (seconds) on an input (0 or 1,
// for a join) and the changes it must emit.
type ttlStep struct {
	at   int64
	side int
	in   row.Change
	want []string
}

type ttlOp interface {
	Operator
	Snapshotter
	StateSizer
	TTLSetter
}

func runTTLSteps(t *testing.T, op ttlOp, clock *fakeClock, steps []ttlStep) {
	t.Helper()
	for i, s := range steps {
		clock.set(s.at)
		out := &aggOut{}
		b := &row.Batch{Changes: []row.Change{s.in}}
		var err error
		if two, ok := op.(TwoInput); ok {
			err = two.ProcessInput(s.side, b, out)
		} else {
			err = op.Process(b, out)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := out.take(); !slices.Equal(got, s.want) {
			t.Errorf("step %d (t=%ds, %s): got %q, want %q", i, s.at, s.in, got, s.want)
		}
	}
}

const ttl10s = 10 * time.Second

func countSum() []AggCall {
	return []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 1, ArgType: tBigInt}}
}

// The cases below are Flink's semantics with table.exec.state.ttl = 10 s
// (processing time, OnCreateAndWrite, NeverReturnExpired): a key's state
// lives until 10 s after its last write.
func TestStateTTLChangelog(t *testing.T) {
	groupSteps := []ttlStep{
		{at: 0, in: ins("a", 1), want: []string{"+I[a, 1, 1]"}},
		{at: 5, in: ins("a", 2), want: []string{"-U[a, 1, 1]", "+U[a, 2, 3]"}},
		// Written at 5: alive until 15.
		{at: 14, in: ins("a", 1), want: []string{"-U[a, 2, 3]", "+U[a, 3, 4]"}},
		// Written at 14, expired at 24: the retraction is ignored.
		{at: 24, in: del("a", 1), want: nil},
		// A new row starts the key again: +I, not -U/+U.
		{at: 24, in: ins("a", 5), want: []string{"+I[a, 1, 5]"}},
		// A retraction that leaves the result as it was still emits
		// -U/+U while a TTL is set (Flink's GroupAggFunction).
		{at: 25, in: ins("a", 0), want: []string{"-U[a, 1, 5]", "+U[a, 2, 5]"}},
	}
	tests := []struct {
		name  string
		op    func() ttlOp
		steps []ttlStep
	}{
		{"group aggregate", func() ttlOp { return NewGroupAgg([]int{0}, countSum(), GroupAggOptions{}) }, groupSteps},
		{"group aggregate, mini-batch", func() ttlOp {
			return NewGroupAgg([]int{0}, countSum(), GroupAggOptions{MiniBatch: true})
		}, groupSteps},
		{"group aggregate, result unchanged", func() ttlOp {
			return NewGroupAgg([]int{0}, []AggCall{{Func: Max, Arg: 1, ArgType: tBigInt}}, GroupAggOptions{InsertOnly: true})
		}, []ttlStep{
			{at: 0, in: ins("a", 5), want: []string{"+I[a, 5]"}},
			{at: 1, in: ins("a", 3), want: []string{"-U[a, 5]", "+U[a, 5]"}},
		}},
		{"distinct", func() ttlOp { return NewDistinct() }, []ttlStep{
			{at: 0, in: ins("x", 1), want: []string{"+I[x, 1]"}},
			{at: 5, in: ins("x", 1), want: nil}, // refreshes: alive until 15
			{at: 14, in: ins("x", 1), want: nil},
			{at: 24, in: ins("x", 1), want: []string{"+I[x, 1]"}},
		}},
		{"dedup keep first, processing time", func() ttlOp { return NewDedup(DedupSpec{Key: []int{0}, TimeCol: 1}) }, []ttlStep{
			{at: 0, in: ins("a", "p"), want: []string{"+I[a, p]"}},
			{at: 5, in: ins("a", "q"), want: nil}, // a dropped row does not refresh
			{at: 10, in: ins("a", "r"), want: []string{"+I[a, r]"}},
		}},
		{"dedup keep last, processing time", func() ttlOp {
			return NewDedup(DedupSpec{Key: []int{0}, TimeCol: 1, KeepLast: true})
		}, []ttlStep{
			{at: 0, in: ins("a", "p"), want: []string{"+I[a, p]"}},
			{at: 5, in: ins("a", "q"), want: []string{"-U[a, p]", "+U[a, q]"}},
			{at: 14, in: ins("a", "r"), want: []string{"-U[a, q]", "+U[a, r]"}},
			{at: 24, in: ins("a", "s"), want: []string{"+I[a, s]"}},
		}},
		{"top-2 append-only", func() ttlOp { return NewTopN(topNSpec(AppendFast, false, 1, 2)) }, []ttlStep{
			{at: 0, in: ins("c", "x", 10), want: []string{"+I[c, x, 10]"}},
			{at: 1, in: ins("c", "y", 20), want: []string{"+I[c, y, 20]"}},
			{at: 2, in: ins("c", "z", 30), want: []string{"-D[c, x, 10]", "+I[c, z, 30]"}},
			// Expired at 12: the partition starts empty.
			{at: 12, in: ins("c", "w", 1), want: []string{"+I[c, w, 1]"}},
		}},
		{"top-2 retract", func() ttlOp { return NewTopN(topNSpec(Retract, true, 1, 2)) }, []ttlStep{
			{at: 0, in: ins("c", "x", 10), want: []string{"+I[c, x, 10, 1]"}},
			{at: 10, in: del("c", "x", 10), want: nil}, // expired: ignored
			{at: 10, in: ins("c", "y", 5), want: []string{"+I[c, y, 5, 1]"}},
		}},
		{"top-2 update-fast", func() ttlOp { return NewUpdatableTopN(updateFastSpec(true, 1, 2)) }, []ttlStep{
			{at: 0, in: ins("a", "x", 1), want: []string{"+I[a, x, 1, 1]"}},
			{at: 5, in: ua("a", "x", 2), want: []string{"-U[a, x, 1, 1]", "+U[a, x, 2, 1]"}},
			// Written at 5, expired at 15: x enters an empty top again.
			{at: 15, in: ua("a", "x", 3), want: []string{"+I[a, x, 3, 1]"}},
		}},
		{"inner join", func() ttlOp { return NewJoin(joinSpec2(InnerJoin)) }, []ttlStep{
			{at: 0, side: 0, in: ins(1, "a"), want: nil},
			{at: 5, side: 1, in: ins(1, "x"), want: []string{"+I[1, a, 1, x]"}},
			// The left row expired at 10 (probing it does not refresh).
			{at: 10, side: 1, in: ins(1, "y"), want: nil},
			// Its retraction still joins with the right's live rows, as
			// Flink's StreamingJoinOperator does.
			{at: 11, side: 0, in: del(1, "a"), want: []string{"-D[1, a, 1, x]", "-D[1, a, 1, y]"}},
			{at: 15, side: 0, in: ins(1, "b"), want: []string{"+I[1, b, 1, y]"}},
		}},
		{"left join: matches refresh the outer row", func() ttlOp { return NewJoin(joinSpec2(LeftJoin)) }, []ttlStep{
			{at: 0, side: 0, in: ins(1, "a"), want: []string{"+I[1, a, null, null]"}},
			// The match changes the left row's match count: a write.
			{at: 8, side: 1, in: ins(1, "x"), want: []string{"-D[1, a, null, null]", "+I[1, a, 1, x]"}},
			{at: 17, side: 1, in: del(1, "x"), want: []string{"-D[1, a, 1, x]", "+I[1, a, null, null]"}},
			// Left written at 17; the right row was removed: nothing left
			// at 27, and a new right row finds no left row.
			{at: 27, side: 1, in: ins(1, "y"), want: nil},
		}},
		{"semi join", func() ttlOp { return NewJoin(joinSpec2(SemiJoin)) }, []ttlStep{
			{at: 0, side: 0, in: ins(1, "a"), want: nil},
			{at: 10, side: 1, in: ins(1, "x"), want: nil}, // the left row expired
			{at: 11, side: 0, in: ins(1, "b"), want: []string{"+I[1, b]"}},
		}},
		{"anti join", func() ttlOp { return NewJoin(joinSpec2(AntiJoin)) }, []ttlStep{
			{at: 0, side: 1, in: ins(1, "x"), want: nil},
			{at: 10, side: 0, in: ins(1, "a"), want: []string{"+I[1, a]"}}, // the right row expired
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			op := tt.op()
			op.SetStateTTL(StateTTL{TTL: ttl10s, Now: clock.now})
			runTTLSteps(t, op, clock, tt.steps)
		})
	}
}

// TestStateTTLFreesUntouchedKeys: keys nobody writes again leave the
// state, through the sweep after a batch of other keys and through the
// node's timer sweep on a quiet input.
func TestStateTTLFreesUntouchedKeys(t *testing.T) {
	ops := map[string]func() ttlOp{
		"group aggregate":   func() ttlOp { return NewGroupAgg([]int{0}, countSum(), GroupAggOptions{}) },
		"distinct":          func() ttlOp { return NewDistinct() },
		"dedup":             func() ttlOp { return NewDedup(DedupSpec{Key: []int{0}, TimeCol: 1, KeepLast: true}) },
		"top-n":             func() ttlOp { return NewTopN(topNSpec(Retract, false, 1, 3)) },
		"top-n update-fast": func() ttlOp { return NewUpdatableTopN(updateFastSpec(false, 1, 3)) },
		"join":              func() ttlOp { return NewJoin(joinSpec2(LeftJoin)) },
	}
	for name, mk := range ops {
		t.Run(name, func(t *testing.T) {
			clock := newFakeClock()
			op := mk()
			op.SetStateTTL(StateTTL{TTL: ttl10s, Now: clock.now})
			var steps []ttlStep
			for i := range 1000 {
				steps = append(steps, ttlStep{at: 0, in: ins(i, 1, 1)})
			}
			feed(t, op, 0, steps)
			if n := op.StateEntries(); n != 1000 {
				t.Fatalf("state entries %d, want 1000", n)
			}
			clock.set(9)
			feed(t, op, 0, []ttlStep{{in: ins(5000, 1, 1)}})
			if n := op.StateEntries(); n != 1001 {
				t.Fatalf("before the TTL: state entries %d, want 1001", n)
			}
			// From 10 s the first 1000 keys are expired; each batch frees
			// at most sweepBudget of them, more than it can add.
			clock.set(10)
			for i := range 4 {
				feed(t, op, 0, []ttlStep{{in: ins(5001+i, 1, 1)}})
			}
			if n := op.StateEntries(); n != 5 {
				t.Errorf("after the TTL: state entries %d, want 5 (the keys written at 9 s and 10 s)", n)
			}
			sw := op.(Sweeper)
			if sw.SweepEvery() <= 0 {
				t.Fatalf("SweepEvery %v with a TTL", sw.SweepEvery())
			}
			clock.set(20)
			sw.Sweep()
			if n := op.StateEntries(); n != 0 {
				t.Errorf("after a quiet sweep: state entries %d, want 0", n)
			}
		})
	}
}

// feed processes steps as one batch (columns [k, v, w] fit every
// operator of TestStateTTLFreesUntouchedKeys; a join gets them on side).
func feed(t *testing.T, op ttlOp, side int, steps []ttlStep) {
	t.Helper()
	b := &row.Batch{}
	for _, s := range steps {
		r := s.in.Row
		if _, ok := op.(*Join); ok {
			r = r[:2]
		}
		b.Append(s.in.Kind, r)
	}
	var err error
	if two, ok := op.(TwoInput); ok {
		err = two.ProcessInput(side, b, &aggOut{})
	} else {
		err = op.Process(b, &aggOut{})
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
		setup  []ttlStep // at 0 and 5
		probe  ttlStep   // at 9 (alive) and again at 10 (expired)
		alive  []string
		expire []string
	}{
		{"group aggregate", func() ttlOp { return NewGroupAgg([]int{0}, countSum(), GroupAggOptions{}) },
			[]ttlStep{{at: 0, in: ins("a", 1)}, {at: 5, in: ins("b", 1)}},
			ttlStep{in: del("a", 1)}, []string{"-D[a, 1, 1]"}, nil},
		{"distinct", func() ttlOp { return NewDistinct() },
			[]ttlStep{{at: 0, in: ins("a", 1)}, {at: 5, in: ins("b", 1)}},
			ttlStep{in: ins("a", 1)}, nil, []string{"+I[a, 1]"}},
		{"dedup", func() ttlOp { return NewDedup(DedupSpec{Key: []int{0}, TimeCol: 1}) },
			[]ttlStep{{at: 0, in: ins("a", "p")}, {at: 5, in: ins("b", "q")}},
			ttlStep{in: ins("a", "r")}, nil, []string{"+I[a, r]"}},
		{"top-n", func() ttlOp { return NewTopN(topNSpec(Retract, false, 1, 2)) },
			[]ttlStep{{at: 0, in: ins("a", "x", 1)}, {at: 5, in: ins("b", "y", 1)}},
			ttlStep{in: del("a", "x", 1)}, []string{"-D[a, x, 1]"}, nil},
		{"top-n update-fast", func() ttlOp { return NewUpdatableTopN(updateFastSpec(false, 1, 2)) },
			[]ttlStep{{at: 0, in: ins("a", "x", 1)}, {at: 5, in: ins("b", "y", 1)}},
			ttlStep{in: ua("a", "x", 2)}, []string{"-U[a, x, 1]", "+U[a, x, 2]"}, []string{"+I[a, x, 2]"}},
		{"join", func() ttlOp { return NewJoin(joinSpec2(InnerJoin)) },
			[]ttlStep{{at: 0, side: 0, in: ins(1, "a")}, {at: 5, side: 0, in: ins(2, "b")}},
			ttlStep{side: 1, in: ins(1, "x")}, []string{"+I[1, a, 1, x]"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			op := tt.op()
			op.SetStateTTL(StateTTL{TTL: ttl10s, Now: clock.now})
			for _, s := range tt.setup {
				s.want = nil
				clock.set(s.at)
				runQuiet(t, op, s)
			}
			state, err := op.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range []int64{9, 10} {
				clock.set(at)
				r := tt.op()
				r.SetStateTTL(StateTTL{TTL: ttl10s, Now: clock.now})
				if err := r.Restore(state); err != nil {
					t.Fatal(err)
				}
				want := tt.alive
				if at == 10 {
					want = tt.expire
				}
				p := tt.probe
				p.at, p.want = at, want
				runTTLSteps(t, r, clock, []ttlStep{p})
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
			clock.set(100)
			r := tt.op()
			r.SetStateTTL(StateTTL{TTL: ttl10s, Now: clock.now})
			if err := r.Restore(old); err != nil {
				t.Fatal(err)
			}
			p := tt.probe
			p.at, p.want = 109, tt.alive
			runTTLSteps(t, r, clock, []ttlStep{p})
			clock.set(100)
			r = tt.op()
			r.SetStateTTL(StateTTL{TTL: ttl10s, Now: clock.now})
			if err := r.Restore(old); err != nil {
				t.Fatal(err)
			}
			p.at, p.want = 110, tt.expire
			runTTLSteps(t, r, clock, []ttlStep{p})

			// A snapshot with times restores into a run without TTL,
			// which keeps every key.
			r = tt.op()
			if err := r.Restore(state); err != nil {
				t.Fatal(err)
			}
			p.at, p.want = 1000, tt.alive
			runTTLSteps(t, r, clock, []ttlStep{p})
		})
	}
}

func runQuiet(t *testing.T, op ttlOp, s ttlStep) {
	t.Helper()
	b := &row.Batch{Changes: []row.Change{s.in}}
	var err error
	if two, ok := op.(TwoInput); ok {
		err = two.ProcessInput(s.side, b, &aggOut{})
	} else {
		err = op.Process(b, &aggOut{})
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
		"group aggregate": NewGroupAgg([]int{0}, []AggCall{{Func: CountStar, Arg: -1}}, GroupAggOptions{}),
		"distinct":        NewDistinct(),
		"dedup":           NewDedup(DedupSpec{Key: []int{0}, TimeCol: 1}),
		"top-n":           NewTopN(topNSpec(Retract, false, 1, 2)),
		"join":            NewJoin(joinSpec2(InnerJoin)),
	} {
		op.SetStateTTL(StateTTL{})
		runQuiet(t, op, ttlStep{in: ins(1, "a", 1)})
		state, err := op.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]byte{"group aggregate": groupAggStateVersion, "distinct": distinctStateVersion,
			"dedup": dedupStateVersion, "top-n": topNStateVersion, "join": joinStateVersion}[name]
		if state[0] != want {
			t.Errorf("%s: snapshot version %d without a TTL, want %d", name, state[0], want)
		}
		if op.(Sweeper).SweepEvery() != 0 {
			t.Errorf("%s: sweeps without a TTL", name)
		}
	}
}

package runtime

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// step is one call of an operator's driver: a batch or a watermark.
type step struct {
	batch []row.Change
	wm    int64
}

func drive(t *testing.T, op Operator, steps []step, out *aggOut) {
	t.Helper()
	for i, s := range steps {
		var err error
		if s.batch != nil {
			err = op.Process(aggBatch(s.batch...), out)
		} else {
			err = op.Watermark(s.wm, out)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
}

// changeStream makes n batches over a few keys: with updating, a third of
// the changes retract a live row (-D, or -U then +U with a new value).
// Column 0 is the key (STRING), 1 a BIGINT, 2 a DECIMAL(10,2), 3 a
// TIMESTAMP rising with jitter, 4 a DECIMAL(38, 6) past int64 from a few
// values (a key too); a watermark follows every batch.
func changeStream(seed uint64, n int, updating bool) []step {
	rnd := rand.New(rand.NewPCG(seed, 7))
	var live []row.Row
	var steps []step
	clock := ts("2024-01-01 00:00:00")
	for range n {
		var b []row.Change
		for range 1 + rnd.IntN(6) {
			if updating && len(live) > 0 && rnd.IntN(3) == 0 {
				i := rnd.IntN(len(live))
				old := live[i]
				if rnd.IntN(2) == 0 {
					b = append(b, row.Change{Kind: D, Row: old})
					live = slices.Delete(live, i, i+1)
					continue
				}
				nw := old.Clone()
				nw[1] = row.BigIntValue(int64(rnd.IntN(50)))
				b = append(b, row.Change{Kind: UB, Row: old}, row.Change{Kind: UA, Row: nw})
				live[i] = nw
				continue
			}
			clock += int64(rnd.IntN(40)) * 1_000_000
			r := row.Row{
				row.StringValue(string(rune('a' + rnd.IntN(5)))),
				row.BigIntValue(int64(rnd.IntN(50))),
				row.DecimalValue(int64(rnd.IntN(10000)), 2),
				row.TimestampValue(clock - int64(rnd.IntN(90))*1_000_000), // some rows late
				wideDec(rnd.IntN(3)+1, rnd.IntN(3), rnd.IntN(2) == 0),
			}
			if rnd.IntN(10) == 0 {
				r[1] = row.NullValue
			}
			b = append(b, row.Change{Kind: I, Row: r})
			live = append(live, r)
		}
		steps = append(steps, step{batch: b}, step{wm: clock - 30_000_000})
	}
	return steps
}

// TestSnapshotRestoreContinuesExactly cuts a run at every step: the
// operator is snapshotted, a new one restored from it (and that one
// snapshotted and restored again), and the rest of the input must give the
// new operator exactly the output the uninterrupted one gave.
func TestSnapshotRestoreContinuesExactly(t *testing.T) {
	aggs := []AggCall{
		{Func: CountStar, Arg: -1},
		{Func: Sum, Arg: 1, ArgType: tBigInt},
		{Func: Min, Arg: 1, ArgType: tBigInt},
		{Func: Max, Arg: 2, ArgType: tDec(10, 2)},
		{Func: CountDistinct, Arg: 1, ArgType: tBigInt},
		{Func: Avg, Arg: 2, ArgType: tDec(10, 2)},
		{Func: FirstValue, Arg: 1, ArgType: tBigInt},
		{Func: LastValue, Arg: 2, ArgType: tDec(10, 2)},
		{Func: ListAgg, Arg: 0, ArgType: tString, Sep: ";"},
		{Func: ListAgg, Arg: 0, ArgType: tString, Sep: ",", Distinct: true},
		{Func: VarSamp, Arg: 1, ArgType: tBigInt},
		{Func: StddevPop, Arg: 1, ArgType: tBigInt, Distinct: true},
		{Func: Sum, Arg: 4, ArgType: tDec(38, 6)},
		{Func: Min, Arg: 4, ArgType: tDec(38, 6)},
		{Func: Avg, Arg: 4, ArgType: tDec(38, 6)},
		{Func: CountDistinct, Arg: 4, ArgType: tDec(38, 6)},
	}
	winAggs := []AggCall{
		{Func: CountStar, Arg: -1},
		{Func: Sum, Arg: 2, ArgType: tDec(10, 2)},
		{Func: Max, Arg: 1, ArgType: tBigInt},
		{Func: SumDistinct, Arg: 1, ArgType: tBigInt},
		{Func: FirstValue, Arg: 1, ArgType: tBigInt},
		{Func: LastValue, Arg: 1, ArgType: tBigInt},
		{Func: ListAgg, Arg: 0, ArgType: tString, Sep: ","},
		{Func: VarPop, Arg: 1, ArgType: tBigInt},
	}
	tumble := WindowSpec{Kind: Tumble, TimeCol: 3, Size: minute}
	hop := WindowSpec{Kind: Hop, TimeCol: 3, Size: 3 * minute, Slide: minute}
	cumulate := WindowSpec{Kind: Cumulate, TimeCol: 3, Size: 4 * minute, Step: minute}
	cases := []struct {
		name     string
		op       func() Operator
		updating bool
	}{
		{"group agg over updates", func() Operator { return NewGroupAgg([]int{0}, aggs, GroupAggOptions{}) }, true},
		{"group agg insert-only", func() Operator { return NewGroupAgg([]int{0}, aggs, GroupAggOptions{InsertOnly: true}) }, false},
		{"group agg batch", func() Operator { return NewGroupAgg([]int{0, 1}, aggs, GroupAggOptions{Batch: true}) }, true},
		{"global agg", func() Operator { return NewGroupAgg(nil, aggs, GroupAggOptions{}) }, true},
		{"group agg by a DECIMAL(38) key", func() Operator { return NewGroupAgg([]int{4}, aggs, GroupAggOptions{}) }, true},
		{"distinct over updates", func() Operator { return NewGroupAgg([]int{0, 1}, nil, GroupAggOptions{}) }, true},
		{"distinct", func() Operator { return NewDistinct() }, false},
		{"tumble", func() Operator { return NewWindowAgg(tumble, []int{0}, winAggs, WindowOptions{}) }, false},
		{"hop", func() Operator { return NewWindowAgg(hop, []int{0}, winAggs, WindowOptions{}) }, false},
		{"cumulate", func() Operator { return NewWindowAgg(cumulate, []int{0}, winAggs, WindowOptions{}) }, false},
		{"tumble batch", func() Operator { return NewWindowAgg(tumble, []int{0}, winAggs, WindowOptions{Batch: true}) }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(3) {
				steps := changeStream(seed, 25, tc.updating)
				// The uninterrupted run, its output after each step.
				ref := tc.op()
				var after [][]string
				out := &aggOut{}
				for i := range steps {
					drive(t, ref, steps[i:i+1], out)
					after = append(after, out.take())
				}
				if err := ref.Finish(out); err != nil {
					t.Fatal(err)
				}
				finish := out.take()
				for cut := 0; cut <= len(steps); cut++ {
					a := tc.op()
					drive(t, a, steps[:cut], &aggOut{})
					b := restored(t, tc.op, a)
					c := restored(t, tc.op, b)
					var got, want []string
					for i := cut; i < len(steps); i++ {
						drive(t, c, steps[i:i+1], out)
						got = append(got, out.take()...)
						want = append(want, after[i]...)
					}
					if err := c.Finish(out); err != nil {
						t.Fatal(err)
					}
					got = append(got, out.take()...)
					want = append(want, finish...)
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d, cut at step %d:\ngot  %q\nwant %q", seed, cut, got, want)
					}
					if cnt, ok := ref.(Counters); ok {
						n, _ := cnt.Dropped()
						m, _ := c.(Counters).Dropped()
						if n != m {
							t.Fatalf("seed %d, cut %d: dropped %d after restore, %d uninterrupted", seed, cut, m, n)
						}
					}
				}
			}
		})
	}
}

// wideDec is a DECIMAL(38, 6) whose unscaled value is hi·2^64 + lo, negated
// when neg.
func wideDec(hi, lo int, neg bool) row.Value {
	x := row.Int128{Hi: int64(hi), Lo: uint64(lo)}
	if neg {
		x = x.Neg()
	}
	return row.Decimal128Value(x, 6)
}

func restored(t *testing.T, fresh func() Operator, from Operator) Operator {
	t.Helper()
	state, err := from.(Snapshotter).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	op := fresh()
	if err := op.(Snapshotter).Restore(state); err != nil {
		t.Fatalf("restore: %v", err)
	}
	return op
}

// TestRestoreRefusesDamagedState: every truncation of a snapshot is an
// error, never a panic or a silently smaller state.
func TestRestoreRefusesDamagedState(t *testing.T) {
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Max, Arg: 1, ArgType: tBigInt}, {Func: CountDistinct, Arg: 1, ArgType: tBigInt},
		{Func: ListAgg, Arg: 0, ArgType: tString, Sep: ","}, {Func: LastValue, Arg: 1, ArgType: tBigInt}}
	steps := changeStream(1, 10, true)
	ops := map[string]func() Operator{
		"group": func() Operator { return NewGroupAgg([]int{0}, aggs, GroupAggOptions{}) },
		"window": func() Operator {
			return NewWindowAgg(WindowSpec{Kind: Hop, TimeCol: 3, Size: 2 * minute, Slide: minute}, []int{0}, aggs, WindowOptions{})
		},
		"distinct": func() Operator { return NewDistinct() },
	}
	for name, fresh := range ops {
		op := fresh()
		in := steps
		if name != "group" {
			in = changeStream(1, 10, false)
		}
		drive(t, op, in, &aggOut{})
		state, err := op.(Snapshotter).Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		for n := range len(state) {
			if err := fresh().(Snapshotter).Restore(state[:n]); err == nil {
				t.Errorf("%s: restore of the first %d of %d bytes succeeded", name, n, len(state))
			}
		}
	}
}

func FuzzGroupAggRestore(f *testing.F) {
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Min, Arg: 1, ArgType: tBigInt}, {Func: CountDistinct, Arg: 1, ArgType: tBigInt},
		{Func: FirstValue, Arg: 1, ArgType: tBigInt}, {Func: ListAgg, Arg: 0, ArgType: tString, Distinct: true}}
	g := NewGroupAgg([]int{0}, aggs, GroupAggOptions{})
	drive(&testing.T{}, g, changeStream(2, 8, true), &aggOut{})
	state, _ := g.Snapshot()
	f.Add(state)
	f.Fuzz(func(t *testing.T, b []byte) {
		g := NewGroupAgg([]int{0}, aggs, GroupAggOptions{})
		if err := g.Restore(b); err != nil {
			return
		}
		// A state that restores must be usable.
		drive(t, g, changeStream(3, 3, true), &aggOut{})
		if _, err := g.Snapshot(); err != nil {
			t.Fatal(err)
		}
	})
}

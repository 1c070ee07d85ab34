package optest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// changeStream makes n batches over a few keys: with updating, a third of
// the changes retract a live row (-D, or -U then +U with a new value).
// Column 0 is the key (STRING), 1 a BIGINT, 2 a DECIMAL(10,2), 3 a
// TIMESTAMP rising with jitter, 4 a DECIMAL(38, 6) past int64 from a few
// values (a key too); a watermark follows every batch.
func changeStream(seed uint64, n int, updating bool) []Step {
	rnd := rand.New(rand.NewPCG(seed, 7))
	var live []row.Row
	var steps []Step
	clock := TS("2024-01-01 00:00:00")
	for range n {
		var b []row.Change
		for range 1 + rnd.IntN(6) {
			if updating && len(live) > 0 && rnd.IntN(3) == 0 {
				i := rnd.IntN(len(live))
				old := live[i]
				if rnd.IntN(2) == 0 {
					b = append(b, row.Change{Kind: row.Delete, Row: old})
					live = slices.Delete(live, i, i+1)
					continue
				}
				nw := old.Clone()
				nw[1] = row.BigIntValue(int64(rnd.IntN(50)))
				b = append(b, row.Change{Kind: row.UpdateBefore, Row: old}, row.Change{Kind: row.UpdateAfter, Row: nw})
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
			b = append(b, row.Change{Kind: row.Insert, Row: r})
			live = append(live, r)
		}
		steps = append(steps, Step{Batch: b}, Step{wm: clock - 30_000_000})
	}
	return steps
}

// TestSnapshotRestoreContinuesExactly cuts a run at every step: the
// operator is snapshotted, a new one restored from it (and that one
// snapshotted and restored again), and the rest of the input must give the
// new operator exactly the output the uninterrupted one gave.
func TestSnapshotRestoreContinuesExactly(t *testing.T) {
	aggs := []aggop.AggCall{
		{Func: aggop.CountStar, Arg: -1},
		{Func: aggop.Sum, Arg: 1, ArgType: TBigInt},
		{Func: aggop.Min, Arg: 1, ArgType: TBigInt},
		{Func: aggop.Max, Arg: 2, ArgType: TDec(10, 2)},
		{Func: aggop.CountDistinct, Arg: 1, ArgType: TBigInt},
		{Func: aggop.Avg, Arg: 2, ArgType: TDec(10, 2)},
		{Func: aggop.FirstValue, Arg: 1, ArgType: TBigInt},
		{Func: aggop.LastValue, Arg: 2, ArgType: TDec(10, 2)},
		{Func: aggop.ListAgg, Arg: 0, ArgType: TString, Sep: ";"},
		{Func: aggop.ListAgg, Arg: 0, ArgType: TString, Sep: ",", Distinct: true},
		{Func: aggop.VarSamp, Arg: 1, ArgType: TBigInt},
		{Func: aggop.StddevPop, Arg: 1, ArgType: TBigInt, Distinct: true},
		{Func: aggop.Sum, Arg: 4, ArgType: TDec(38, 6)},
		{Func: aggop.Min, Arg: 4, ArgType: TDec(38, 6)},
		{Func: aggop.Avg, Arg: 4, ArgType: TDec(38, 6)},
		{Func: aggop.CountDistinct, Arg: 4, ArgType: TDec(38, 6)},
		{Func: aggop.ArrayAgg, Arg: 1, ArgType: TBigInt, KeepNulls: true},
		{Func: aggop.ArrayAgg, Arg: 0, ArgType: TString, Distinct: true},
		{Func: aggop.JSONArrayAgg, Arg: 0, ArgType: TString},
	}
	winAggs := []aggop.AggCall{
		{Func: aggop.CountStar, Arg: -1},
		{Func: aggop.Sum, Arg: 2, ArgType: TDec(10, 2)},
		{Func: aggop.Max, Arg: 1, ArgType: TBigInt},
		{Func: aggop.SumDistinct, Arg: 1, ArgType: TBigInt},
		{Func: aggop.FirstValue, Arg: 1, ArgType: TBigInt},
		{Func: aggop.LastValue, Arg: 1, ArgType: TBigInt},
		{Func: aggop.ListAgg, Arg: 0, ArgType: TString, Sep: ","},
		{Func: aggop.VarPop, Arg: 1, ArgType: TBigInt},
		{Func: aggop.ArrayAgg, Arg: 1, ArgType: TBigInt, KeepNulls: true},
	}
	tumble := windowop.WindowSpec{Kind: windowop.Tumble, TimeCol: 3, Size: Minute}
	hop := windowop.WindowSpec{Kind: windowop.Hop, TimeCol: 3, Size: 3 * Minute, Slide: Minute}
	cumulate := windowop.WindowSpec{Kind: windowop.Cumulate, TimeCol: 3, Size: 4 * Minute, Step: Minute}
	cases := []struct {
		name     string
		op       func() operator.Operator
		updating bool
	}{
		{"group agg over updates", func() operator.Operator { return Must(aggop.NewGroupAgg([]int{0}, aggs, aggop.GroupAggOptions{})) }, true},
		{"group agg insert-only", func() operator.Operator {
			return Must(aggop.NewGroupAgg([]int{0}, aggs, aggop.GroupAggOptions{InsertOnly: true}))
		}, false},
		{"group agg batch", func() operator.Operator {
			return Must(aggop.NewGroupAgg([]int{0, 1}, aggs, aggop.GroupAggOptions{Batch: true}))
		}, true},
		{"global agg", func() operator.Operator { return Must(aggop.NewGroupAgg(nil, aggs, aggop.GroupAggOptions{})) }, true},
		{"group agg by a DECIMAL(38) key", func() operator.Operator { return Must(aggop.NewGroupAgg([]int{4}, aggs, aggop.GroupAggOptions{})) }, true},
		{"distinct over updates", func() operator.Operator { return Must(aggop.NewGroupAgg([]int{0, 1}, nil, aggop.GroupAggOptions{})) }, true},
		{"distinct", func() operator.Operator { return aggop.NewDistinct() }, false},
		{"tumble", func() operator.Operator {
			return Must(windowop.NewWindowAgg(tumble, []int{0}, winAggs, windowop.WindowOptions{}))
		}, false},
		{"hop", func() operator.Operator {
			return Must(windowop.NewWindowAgg(hop, []int{0}, winAggs, windowop.WindowOptions{}))
		}, false},
		{"cumulate", func() operator.Operator {
			return Must(windowop.NewWindowAgg(cumulate, []int{0}, winAggs, windowop.WindowOptions{}))
		}, false},
		{"over ordered by a non-time column, over updates", func() operator.Operator {
			return Must(windowop.NewNonTimeOver(windowop.NonTimeSpec{Keys: []int{0}, Order: 1, Aggs: aggs, Funcs: []windowop.FuncKind{windowop.Rank}}, windowop.WindowOptions{}))
		}, true},
		{"over ordered by a non-time column, ROWS", func() operator.Operator {
			return Must(windowop.NewNonTimeOver(windowop.NonTimeSpec{Order: 2, Rows: true, Aggs: aggs}, windowop.WindowOptions{}))
		}, false},
		{"tumble batch", func() operator.Operator {
			return Must(windowop.NewWindowAgg(tumble, []int{0}, winAggs, windowop.WindowOptions{Batch: true}))
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(3) {
				steps := changeStream(seed, 25, tc.updating)
				// The uninterrupted run, its output after each step.
				ref := tc.op()
				var after [][]string
				out := &Out{}
				for i := range steps {
					Drive(t, ref, steps[i:i+1], out)
					after = append(after, out.Take())
				}
				if err := ref.Finish(out); err != nil {
					t.Fatal(err)
				}
				finish := out.Take()
				for cut := 0; cut <= len(steps); cut++ {
					a := tc.op()
					Drive(t, a, steps[:cut], &Out{})
					b := Restored(t, tc.op, a)
					c := Restored(t, tc.op, b)
					var got, want []string
					for i := cut; i < len(steps); i++ {
						Drive(t, c, steps[i:i+1], out)
						got = append(got, out.Take()...)
						want = append(want, after[i]...)
					}
					if err := c.Finish(out); err != nil {
						t.Fatal(err)
					}
					got = append(got, out.Take()...)
					want = append(want, finish...)
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d, cut at step %d:\ngot  %q\nwant %q", seed, cut, got, want)
					}
					if cnt, ok := ref.(operator.Counters); ok {
						n, _ := cnt.Dropped()
						m, _ := c.(operator.Counters).Dropped()
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

// TestRestoreRefusesDamagedState: every truncation of a snapshot is an
// error, never a panic or a silently smaller state.
func TestRestoreRefusesDamagedState(t *testing.T) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Max, Arg: 1, ArgType: TBigInt}, {Func: aggop.CountDistinct, Arg: 1, ArgType: TBigInt},
		{Func: aggop.ListAgg, Arg: 0, ArgType: TString, Sep: ","}, {Func: aggop.LastValue, Arg: 1, ArgType: TBigInt}}
	steps := changeStream(1, 10, true)
	ops := map[string]func() operator.Operator{
		"group": func() operator.Operator { return Must(aggop.NewGroupAgg([]int{0}, aggs, aggop.GroupAggOptions{})) },
		"window": func() operator.Operator {
			return Must(windowop.NewWindowAgg(windowop.WindowSpec{Kind: windowop.Hop, TimeCol: 3, Size: 2 * Minute, Slide: Minute}, []int{0}, aggs, windowop.WindowOptions{}))
		},
		"distinct": func() operator.Operator { return aggop.NewDistinct() },
	}
	for name, fresh := range ops {
		op := fresh()
		in := steps
		if name != "group" {
			in = changeStream(1, 10, false)
		}
		Drive(t, op, in, &Out{})
		state, err := op.(operator.Snapshotter).Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		for n := range len(state) {
			if err := fresh().(operator.Snapshotter).Restore(state[:n]); err == nil {
				t.Errorf("%s: restore of the first %d of %d bytes succeeded", name, n, len(state))
			}
		}
	}
}

func FuzzGroupAggRestore(f *testing.F) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Min, Arg: 1, ArgType: TBigInt}, {Func: aggop.CountDistinct, Arg: 1, ArgType: TBigInt},
		{Func: aggop.FirstValue, Arg: 1, ArgType: TBigInt}, {Func: aggop.ListAgg, Arg: 0, ArgType: TString, Distinct: true}}
	g := Must(aggop.NewGroupAgg([]int{0}, aggs, aggop.GroupAggOptions{}))
	Drive(&testing.T{}, g, changeStream(2, 8, true), &Out{})
	state, _ := g.Snapshot()
	f.Add(state)
	f.Fuzz(func(t *testing.T, b []byte) {
		g := Must(aggop.NewGroupAgg([]int{0}, aggs, aggop.GroupAggOptions{}))
		if err := g.Restore(b); err != nil {
			return
		}
		// A state that restores must be usable.
		Drive(t, g, changeStream(3, 3, true), &Out{})
		if _, err := g.Snapshot(); err != nil {
			t.Fatal(err)
		}
	})
}

package sortop_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/sortop"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// A batch run's OVER, SESSION and interval join over their input sorted
// by time (sortop.TimeSorted) give what the operators give holding every
// row until the end of the input (the batch mode they had): random
// inputs with rows out of time order (late in streaming terms), ties,
// NULL keys, a worker or two, the sort in memory or spilled in runs of a
// few rows, and a snapshot and restore in the middle.

const sortSec = 1_000_000

// sortRows are random rows [key BIGINT (NULL at times), name STRING,
// amount BIGINT, ts TIMESTAMP]: times mostly rising by up to 3 s, a
// tenth jumping back up to 20 s, a few before 1970, ties.
func sortRows(rng *rand.Rand, n, keys int) []row.Change {
	out := make([]row.Change, n)
	t := int64(rng.IntN(5)) * sortSec
	if rng.IntN(3) == 0 {
		t = -10 * sortSec
	}
	for i := range out {
		ts := t
		if rng.IntN(10) == 0 {
			ts -= int64(rng.IntN(20)) * sortSec
		} else {
			t += int64(rng.IntN(4)) * sortSec / 2
		}
		var key any = rng.IntN(keys)
		if rng.IntN(15) == 0 {
			key = nil
		}
		out[i] = optest.Ins(key, fmt.Sprintf("n%d", rng.IntN(5)), rng.IntN(100), row.TimestampValue(ts))
	}
	return out
}

// feedSorted runs op over changes of side 0 (and side 1 of a join) in
// random batches, with random watermarks, an optional snapshot and
// restore into a fresh operator from build midway, then the final
// watermark and Finish; it returns the output lines.
func feedSorted(t *testing.T, rng *rand.Rand, build func() operator.Lifecycle, sides [2][]row.Change, restore bool) []string {
	t.Helper()
	op := build()
	var out optest.Out
	wm := int64(-30 * sortSec)
	pos := [2]int{}
	half := (len(sides[0]) + len(sides[1])) / 2
	done := 0
	restored := !restore
	for pos[0] < len(sides[0]) || pos[1] < len(sides[1]) {
		side := rng.IntN(2)
		if pos[side] == len(sides[side]) {
			side = 1 - side
		}
		n := min(1+rng.IntN(8), len(sides[side])-pos[side])
		b := optest.Batch(sides[side][pos[side] : pos[side]+n]...)
		pos[side] += n
		done += n
		var err error
		if two, ok := op.(operator.TwoInput); ok {
			err = two.ProcessInput(side, b, &out)
		} else {
			err = op.(operator.Operator).Process(b, &out)
		}
		if err != nil {
			t.Fatal(err)
		}
		wm += int64(rng.IntN(3)) * sortSec
		if err := op.Watermark(wm, &out); err != nil {
			t.Fatal(err)
		}
		if !restored && done >= half {
			restored = true
			snap, err := op.(operator.Snapshotter).Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			op = build()
			if err := op.(operator.Snapshotter).Restore(snap); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := op.Watermark(operator.MaxWatermark, &out); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(&out); err != nil {
		t.Fatal(err)
	}
	return out.Lines
}

// sortVariants are the ways the sorted operator runs: spilling runs of
// a few rows or not, restored midway or not.
var sortVariants = []struct {
	name    string
	spill   int64
	restore bool
}{{"memory", 0, false}, {"spilled", 300, false}, {"restored", 0, true}, {"spilled and restored", 300, true}}

func sortedOp(op operator.Lifecycle, cols [2]int, wm func(int64) int64, spill int64) operator.Lifecycle {
	s := sortop.NewTimeSorted(op, cols, wm)
	// A watermark every few rows, as every 1024 rows of a large input.
	sortop.SetSortBatch(s, 1+int(spill%7))
	if spill > 0 {
		s.(interface{ SetStateBudget(int64) }).SetStateBudget(2 * spill)
	}
	return s
}

// keyedOr builds one operator, or two workers of a Keyed.
func keyedOr(t *testing.T, keys []int, workers int, build func() (operator.KeyGrouped, error)) operator.Lifecycle {
	t.Helper()
	if workers == 1 {
		op, err := build()
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	k, err := runtime.NewKeyed(keys, workers, build)
	if err != nil {
		t.Fatal(err)
	}
	return k.Op()
}

func TestBatchOverSortedSameAsHeld(t *testing.T) {
	frames := []windowop.OverSpec{
		{Rows: true, Preceding: 2}, {Rows: true, Preceding: windowop.Unbounded},
		{Preceding: 3 * sortSec}, {Preceding: windowop.Unbounded},
	}
	aggs := []aggop.AggCall{
		{Func: aggop.CountStar, Arg: -1},
		{Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt},
		{Func: aggop.Max, Arg: 2, ArgType: optest.TBigInt},
		{Func: aggop.Min, Arg: 1, ArgType: row.Type{ID: row.String}},
	}
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		spec := frames[seed%4]
		spec.TimeCol, spec.Aggs = 3, aggs
		if seed%5 != 4 {
			spec.Keys = []int{0} // else one global partition
		}
		spec.Funcs = []windowop.RowFunc{{Kind: windowop.Lag, Arg: 2, Offset: 1, Default: -1}, {Kind: windowop.RowNumber}, {Kind: windowop.Rank}}
		rows := sortRows(rng, 60+rng.IntN(200), 1+rng.IntN(6))
		held := feedSorted(t, rand.New(rand.NewPCG(seed, 1)), func() operator.Lifecycle {
			op, err := windowop.NewOverAgg(spec, windowop.WindowOptions{Batch: true})
			if err != nil {
				t.Fatal(err)
			}
			return op
		}, [2][]row.Change{rows}, false)
		for _, v := range sortVariants {
			for _, workers := range []int{1, 2} {
				if workers == 2 && len(spec.Keys) == 0 {
					continue
				}
				got := feedSorted(t, rand.New(rand.NewPCG(seed, 2)), func() operator.Lifecycle {
					op := keyedOr(t, spec.Keys, workers, func() (operator.KeyGrouped, error) {
						return windowop.NewOverAgg(spec, windowop.WindowOptions{Batch: true, Sorted: true})
					})
					return sortedOp(op, [2]int{3}, windowop.OverSortedWatermark, v.spill)
				}, [2][]row.Change{rows}, v.restore)
				if workers == 2 {
					// Workers emit a time's rows by partition.
					got, held := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(held))
					if !slices.Equal(got, held) {
						t.Fatalf("seed %d, %s, %s, 2 workers:\nsorted %q\nheld   %q", seed, spec, v.name, got, held)
					}
					continue
				}
				// One instance emits rows in (time, arrival) order either way.
				if !slices.Equal(got, held) {
					t.Fatalf("seed %d, %s, %s:\nsorted %q\nheld   %q", seed, spec, v.name, got, held)
				}
			}
		}
	}
}

func TestBatchSessionSortedSameAsHeld(t *testing.T) {
	aggs := []aggop.AggCall{
		{Func: aggop.CountStar, Arg: -1},
		{Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt},
		{Func: aggop.Max, Arg: 1, ArgType: row.Type{ID: row.String}},
	}
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 9))
		gap := int64(1+rng.IntN(4)) * sortSec
		keys := []int{0}
		if seed%5 == 4 {
			keys = nil
		}
		rows := sortRows(rng, 60+rng.IntN(200), 1+rng.IntN(6))
		held := feedSorted(t, rand.New(rand.NewPCG(seed, 1)), func() operator.Lifecycle {
			op, err := windowop.NewSessionAgg(3, gap, keys, aggs, windowop.WindowOptions{Batch: true})
			if err != nil {
				t.Fatal(err)
			}
			return op
		}, [2][]row.Change{rows}, false)
		slices.Sort(held)
		for _, v := range sortVariants {
			for _, workers := range []int{1, 2} {
				if workers == 2 && len(keys) == 0 {
					continue
				}
				got := feedSorted(t, rand.New(rand.NewPCG(seed, 2)), func() operator.Lifecycle {
					op := keyedOr(t, keys, workers, func() (operator.KeyGrouped, error) {
						return windowop.NewSessionAgg(3, gap, keys, aggs, windowop.WindowOptions{Batch: true, Sorted: true})
					})
					return sortedOp(op, [2]int{3}, windowop.SessionSortedWatermark, v.spill)
				}, [2][]row.Change{rows}, v.restore)
				// Sessions ending together come out in the order they
				// were opened, which depends on the order rows came in.
				slices.Sort(got)
				if !slices.Equal(got, held) {
					t.Fatalf("seed %d, gap %d s, %s, %d workers:\nsorted %q\nheld   %q", seed, gap/sortSec, v.name, workers, got, held)
				}
			}
		}
	}
}

// The interval join over sorted input against every pair that meets its
// condition (the regular join a batch run planned before): inner and
// outer joins, bounds on both sides of zero, NULL keys, NULL times.
func TestBatchIntervalJoinSortedSameAsAllPairs(t *testing.T) {
	kinds := []joinop.JoinKind{joinop.InnerJoin, joinop.LeftJoin, joinop.RightJoin, joinop.FullJoin}
	for seed := range uint64(48) {
		rng := rand.New(rand.NewPCG(seed, 11))
		lower := int64(rng.IntN(9)-6) * sortSec
		upper := lower + int64(rng.IntN(6))*sortSec
		spec := joinop.IntervalJoinSpec{Kind: kinds[seed%4], LeftKeys: []int{0}, RightKeys: []int{0},
			LeftWidth: 4, RightWidth: 4, LeftTime: 3, RightTime: 3, Lower: lower, Upper: upper, Sorted: true}
		nk := 1 + rng.IntN(5)
		sides := [2][]row.Change{sortRows(rng, 20+rng.IntN(80), nk), sortRows(rng, 20+rng.IntN(80), nk)}
		for s := range sides {
			for i := range sides[s] {
				if rng.IntN(25) == 0 {
					sides[s][i].Row[3] = row.NullValue
				}
			}
		}
		want := allPairs(spec, sides)
		for _, v := range sortVariants {
			for _, workers := range []int{1, 2} {
				got := feedSorted(t, rand.New(rand.NewPCG(seed, 3)), func() operator.Lifecycle {
					var op operator.Lifecycle = joinop.NewIntervalJoin(spec)
					if workers == 2 {
						k, err := runtime.NewKeyedTwo(spec.LeftKeys, spec.RightKeys, 2, func() (operator.KeyGrouped, error) { return joinop.NewIntervalJoin(spec), nil })
						if err != nil {
							t.Fatal(err)
						}
						op = k.Op()
					}
					return sortedOp(op, [2]int{3, 3}, spec.SortedWatermark, v.spill)
				}, sides, v.restore)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d, %v [%d s, %d s], %s, %d workers:\nsorted %q\npairs  %q", seed, spec.Kind, lower/sortSec, upper/sortSec, v.name, workers, got, want)
				}
			}
		}
	}
}

// allPairs is the join by its definition: each left and right row of
// one non-NULL key whose times meet r + lower <= l <= r + upper, and an
// outer side's rows that met none padded with NULLs; sorted lines.
func allPairs(spec joinop.IntervalJoinSpec, sides [2][]row.Change) []string {
	var out optest.Out
	matched := [2][]bool{make([]bool, len(sides[0])), make([]bool, len(sides[1]))}
	for i, l := range sides[0] {
		for j, r := range sides[1] {
			lk, rk, lt, rt := l.Row[0], r.Row[0], l.Row[3], r.Row[3]
			if lk.IsNull() || rk.IsNull() || lt.IsNull() || rt.IsNull() || lk != rk {
				continue
			}
			if d := lt.Micros() - rt.Micros(); d >= spec.Lower && d <= spec.Upper {
				out.Emit(row.Insert, append(slices.Clone(l.Row), r.Row...))
				matched[0][i], matched[1][j] = true, true
			}
		}
	}
	outer := [2]bool{spec.Kind == joinop.LeftJoin || spec.Kind == joinop.FullJoin, spec.Kind == joinop.RightJoin || spec.Kind == joinop.FullJoin}
	for s := range sides {
		if !outer[s] {
			continue
		}
		for i, c := range sides[s] {
			if !matched[s][i] {
				pad := make(row.Row, 8)
				copy(pad[4*s:], c.Row)
				out.Emit(row.Insert, pad)
			}
		}
	}
	slices.Sort(out.Lines)
	return out.Lines
}

// A restore into a widened column type retags the rows held, as the
// operator retags its own state.
func TestTimeSortedWidensHeldRows(t *testing.T) {
	spec := windowop.OverSpec{Keys: []int{0}, TimeCol: 3, Rows: true, Preceding: 1,
		Aggs: []aggop.AggCall{{Func: aggop.Max, Arg: 2, ArgType: row.Type{ID: row.Int}}}}
	build := func() operator.Lifecycle {
		op, err := windowop.NewOverAgg(spec, windowop.WindowOptions{Batch: true, Sorted: true})
		if err != nil {
			t.Fatal(err)
		}
		return sortop.NewTimeSorted(op, [2]int{3}, windowop.OverSortedWatermark)
	}
	op := build()
	var out optest.Out
	in := optest.Batch(optest.Ins(1, "a", int32(5), row.TimestampValue(2*sortSec)), optest.Ins(1, "a", int32(7), row.TimestampValue(sortSec)))
	if err := op.(operator.Operator).Process(in, &out); err != nil {
		t.Fatal(err)
	}
	snap, err := op.(operator.Snapshotter).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	op = build()
	w, ok := op.(operator.Widener)
	if !ok || !w.CanWiden() {
		t.Fatal("the sorted OVER cannot widen")
	}
	w.WidenRestore(map[row.TypeID]row.TypeID{row.Int: row.BigInt})
	if err := op.(operator.Snapshotter).Restore(snap); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Rows) != 2 {
		t.Fatalf("got %v", out.Lines)
	}
	for _, c := range out.Rows {
		if c.Row[2].Type() != row.BigInt || c.Row[4].Type() != row.BigInt {
			t.Fatalf("not widened: %v (%s, %s)", c, c.Row[2].Type(), c.Row[4].Type())
		}
	}
	if got := out.Lines[1]; got != "+I[1, a, 5, 1970-01-01T00:00:02, 7]" {
		t.Fatalf("second row %s", got)
	}
}

// A TimeSorted carves its rows when the operator it wraps does
// (operator.Carving), so that its node lends the OVER, SESSION or window
// slabs the reader gives back; over an operator that does not, it does
// not either.
func TestTimeSortedCarvesAsItsOperator(t *testing.T) {
	over := optest.Must(windowop.NewOverAgg(windowop.OverSpec{Keys: []int{0}, TimeCol: 3, Rows: true, Preceding: 2,
		Aggs: []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}}, windowop.WindowOptions{Batch: true, Sorted: true}))
	for _, tc := range []struct {
		name string
		op   operator.Lifecycle
		want bool
	}{
		{"OVER", over, true},
		{"an operator that does not carve", plainOp{}, false},
	} {
		got := sortop.NewTimeSorted(tc.op, [2]int{3}, windowop.OverSortedWatermark)
		cv, ok := got.(operator.Carving)
		if !ok || cv.CarvesRows() != tc.want {
			t.Errorf("%s: Carving %v, CarvesRows want %v", tc.name, ok, tc.want)
		}
	}
}

// plainOp is an operator that emits nothing and carves nothing.
type plainOp struct{}

func (plainOp) Process(*row.Batch, operator.Emitter) error { return nil }
func (plainOp) Watermark(int64, operator.Emitter) error    { return nil }
func (plainOp) Finish(operator.Emitter) error              { return nil }

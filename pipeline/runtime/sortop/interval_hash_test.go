package sortop_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// A batch INNER or LEFT interval join run as a hash join
// (joinop.IntervalHashJoin) gives every pair that meets its condition,
// as the sorted interval join (TimeSorted over the streaming
// IntervalJoin) does: BIGINT, STRING and two-column keys, NULL keys and
// times, rows out of time order, bounds on both sides of zero (and
// empty ones), a residual, and a checkpoint midway restored into the
// same operator or into the other one (the snapshots share a layout,
// so a run upgraded or downgraded midway goes on).

// hashCase is one random interval join and its inputs.
type hashCase struct {
	spec  joinop.IntervalJoinSpec
	sides [2][]row.Change
}

func randomHashCase(seed uint64) hashCase {
	rng := rand.New(rand.NewPCG(seed, 17))
	lower := int64(rng.IntN(9)-6) * sortSec
	upper := lower + int64(rng.IntN(6)-1)*sortSec // now and then lower > upper: no pair
	kind := []joinop.JoinKind{joinop.InnerJoin, joinop.LeftJoin}[seed%2]
	keys := [][]int{{0}, {1}, {0, 1}}[seed/2%3]
	types := []row.TypeID{row.BigInt, row.String, row.BigInt, row.Timestamp}
	spec := joinop.IntervalJoinSpec{Kind: kind, LeftKeys: keys, RightKeys: keys, LeftWidth: 4, RightWidth: 4,
		LeftTypes: types, RightTypes: types, LeftTime: 3, RightTime: 3, Lower: lower, Upper: upper, Sorted: true}
	if seed%5 == 4 {
		// The rest of the ON condition: l.amount >= r.amount.
		spec.Residual = func(j row.Row) (bool, error) { return j[2].Int64() >= j[6].Int64(), nil }
	}
	switch {
	case seed%3 == 2:
		// A Calc's picked columns, done by the join.
		spec.Output = []int{6, 0, 3, 5}
	case seed%6 == 1:
		// Columns neither key nor time, one twice: the join holds
		// them and the keys and times alone.
		spec.Output = []int{2, 6, 2}
	}
	nk := 1 + rng.IntN(5)
	sides := [2][]row.Change{sortRows(rng, 20+rng.IntN(120), nk), sortRows(rng, 20+rng.IntN(120), nk)}
	for s := range sides {
		for i := range sides[s] {
			switch rng.IntN(25) {
			case 0:
				sides[s][i].Row[3] = row.NullValue
			case 1:
				sides[s][i].Row[1] = row.NullValue
			}
		}
	}
	return hashCase{spec: spec, sides: sides}
}

// pairsOf is the join by its definition, over any key columns and the
// residual; sorted lines.
func pairsOf(spec joinop.IntervalJoinSpec, sides [2][]row.Change) []string {
	var out optest.Out
	for _, l := range sides[0] {
		matched := false
		for _, r := range sides[1] {
			ok := !l.Row[3].IsNull() && !r.Row[3].IsNull()
			for k, lk := range spec.LeftKeys {
				a, b := l.Row[lk], r.Row[spec.RightKeys[k]]
				ok = ok && !a.IsNull() && !b.IsNull() && a == b
			}
			if !ok {
				continue
			}
			d := l.Row[3].Micros() - r.Row[3].Micros()
			if d < spec.Lower || d > spec.Upper {
				continue
			}
			j := append(slices.Clone(l.Row), r.Row...)
			if spec.Residual != nil {
				if ok, _ := spec.Residual(j); !ok {
					continue
				}
			}
			out.Emit(row.Insert, j)
			matched = true
		}
		if !matched && spec.Kind == joinop.LeftJoin {
			out.Emit(row.Insert, append(slices.Clone(l.Row), make(row.Row, 4)...))
		}
	}
	if spec.Output != nil {
		all := out
		out = optest.Out{}
		for _, r := range all.Rows {
			p := make(row.Row, len(spec.Output))
			for k, c := range spec.Output {
				p[k] = r.Row[c]
			}
			out.Emit(row.Insert, p)
		}
	}
	slices.Sort(out.Lines)
	return out.Lines
}

// A self-join (one node feeding both inputs the same rows, a
// checkpoint's barriers aligned between them) held once for both sides
// gives every pair of its rows that meets the condition: restored into
// itself, from the sorted join and into it.
func TestBatchIntervalHashSelfJoinSameAsAllPairs(t *testing.T) {
	fell := 0
	for seed := range uint64(60) {
		c := randomHashCase(seed)
		rows := c.sides[seed%2]
		want := pairsOf(c.spec, [2][]row.Change{rows, rows})
		keyed := seed%4 < 2
		hash := func() operator.Lifecycle {
			h := joinop.NewIntervalHashJoin(c.spec, innerJoin(t, c.spec, keyed))
			h.SetSameInputs()
			if !h.HoldsOnce() {
				t.Fatalf("seed %d: a self-join holds each side's rows", seed)
			}
			return h
		}
		sorted := func() operator.Lifecycle {
			return sortedOp(innerJoin(t, c.spec, keyed), [2]int{3, 3}, c.spec.SortedWatermark, 0)
		}
		spilled := func() operator.Lifecycle {
			h := hash().(*joinop.IntervalHashJoin)
			h.SetSorted(func(inner operator.TwoInput, budget int64) operator.TwoInput {
				fell++
				return sortedOp(inner, [2]int{3, 3}, c.spec.SortedWatermark, 300).(operator.TwoInput)
			})
			h.SetStateBudget(int64(3000 + 300*(seed%5)))
			return h
		}
		for _, v := range []struct {
			name          string
			before, after func() operator.Lifecycle
			restore       bool
		}{
			{"hash", hash, hash, false},
			{"hash restored", hash, hash, true},
			{"sorted restored as hash", sorted, hash, true},
			{"hash restored as sorted", hash, sorted, true},
			{"sorted", sorted, sorted, false},
			{"spilled", spilled, spilled, false},
			{"hash handing its rows to the sorted join, restored", spilled, spilled, true},
		} {
			got := feedSame(t, rand.New(rand.NewPCG(seed, 5)), v.before, v.after, rows, v.restore)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, %v keys %v [%d s, %d s], residual %t, output %v, %s:\ngot  %q\nwant %q", seed, c.spec.Kind, c.spec.LeftKeys,
					c.spec.Lower/sortSec, c.spec.Upper/sortSec, c.spec.Residual != nil, c.spec.Output, v.name, got, want)
			}
		}
	}
	if fell < 60 {
		t.Fatalf("the self-join handed its rows to the sorted join %d times in 120 runs over its budget", fell)
	}
}

// feedSame gives each batch of rows to both inputs of a join, in a
// random order, and restores it (built by after) midway between two
// batches, where a checkpoint's barriers align.
func feedSame(t *testing.T, rng *rand.Rand, before, after func() operator.Lifecycle, rows []row.Change, restore bool) []string {
	t.Helper()
	op := before().(operator.TwoInput)
	var out optest.Out
	wm := int64(-30 * sortSec)
	for pos := 0; pos < len(rows); {
		n := min(1+rng.IntN(8), len(rows)-pos)
		first := rng.IntN(2)
		for _, side := range []int{first, 1 - first} {
			if err := op.ProcessInput(side, optest.Batch(rows[pos:pos+n]...), &out); err != nil {
				t.Fatal(err)
			}
		}
		pos += n
		wm += int64(rng.IntN(3)) * sortSec
		if err := op.Watermark(wm, &out); err != nil {
			t.Fatal(err)
		}
		if restore && pos >= len(rows)/2 {
			restore = false
			snap, err := op.(operator.Snapshotter).Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			op = after().(operator.TwoInput)
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

// innerJoin is the streaming join a batch interval join wraps: one
// IntervalJoin, or its keyed workers (as the planner builds it for a
// join with keys).
func innerJoin(t *testing.T, spec joinop.IntervalJoinSpec, keyed bool) operator.TwoInput {
	t.Helper()
	if !keyed {
		return joinop.NewIntervalJoin(spec)
	}
	k, err := runtime.NewKeyedTwo(spec.LeftKeys, spec.RightKeys, 1, func() (operator.KeyGrouped, error) { return joinop.NewIntervalJoin(spec), nil })
	if err != nil {
		t.Fatal(err)
	}
	return k.Op().(operator.TwoInput)
}

func TestBatchIntervalHashJoinSameAsAllPairs(t *testing.T) {
	for seed := range uint64(60) {
		c := randomHashCase(seed)
		want := pairsOf(c.spec, c.sides)
		keyed := seed%4 < 2
		hash := func() operator.Lifecycle { return joinop.NewIntervalHashJoin(c.spec, innerJoin(t, c.spec, keyed)) }
		sorted := func() operator.Lifecycle {
			return sortedOp(innerJoin(t, c.spec, keyed), [2]int{3, 3}, c.spec.SortedWatermark, 0)
		}
		for _, v := range []struct {
			name          string
			before, after func() operator.Lifecycle
			restore       bool
		}{
			{"hash", hash, hash, false},
			{"hash restored", hash, hash, true},
			{"sorted restored as hash", sorted, hash, true},
			{"hash restored as sorted", hash, sorted, true},
			{"sorted", sorted, sorted, false},
		} {
			got := feedTwo(t, rand.New(rand.NewPCG(seed, 5)), v.before, v.after, c.sides, v.restore)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, %v keys %v [%d s, %d s], residual %t, %s:\ngot  %q\nwant %q", seed, c.spec.Kind, c.spec.LeftKeys,
					c.spec.Lower/sortSec, c.spec.Upper/sortSec, c.spec.Residual != nil, v.name, got, want)
			}
		}
	}
}

// feedTwo is feedSorted with the operator restored midway built by
// after (before builds the first).
func feedTwo(t *testing.T, rng *rand.Rand, before, after func() operator.Lifecycle, sides [2][]row.Change, restore bool) []string {
	t.Helper()
	first := true
	return feedSorted(t, rng, func() operator.Lifecycle {
		if first {
			first = false
			return before()
		}
		return after()
	}, sides, restore)
}

// The rows of a NULL time go to the wrapped join, which counts them (or
// pads a left one), and its count survives a checkpoint.
func TestBatchIntervalHashJoinCountsNullTimes(t *testing.T) {
	spec := joinop.IntervalJoinSpec{Kind: joinop.LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 4, RightWidth: 4,
		LeftTime: 3, RightTime: 3, Lower: -sortSec, Upper: 0, Sorted: true}
	op := joinop.NewIntervalHashJoin(spec, joinop.NewIntervalJoin(spec))
	var out optest.Out
	at := row.TimestampValue(5 * sortSec)
	if err := op.ProcessInput(1, optest.Batch(optest.Ins(1, "r", 1, nil), optest.Ins(1, "r", 2, at)), &out); err != nil {
		t.Fatal(err)
	}
	if err := op.ProcessInput(0, optest.Batch(optest.Ins(1, "l", 3, nil), optest.Ins(1, "l", 4, at)), &out); err != nil {
		t.Fatal(err)
	}
	if n, why := op.Dropped(); n != 2 || why != "NULL time attribute" {
		t.Fatalf("dropped %d (%s), want 2", n, why)
	}
	snap, err := op.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	op = joinop.NewIntervalHashJoin(spec, joinop.NewIntervalJoin(spec))
	if err := op.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if n, _ := op.Dropped(); n != 2 {
		t.Fatalf("restored: dropped %d, want 2", n)
	}
	if op.StateEntries() != 2 {
		t.Fatalf("restored: %d rows held, want 2", op.StateEntries())
	}
	if err := op.Finish(&out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"+I[1, l, 3, null, null, null, null, null]",
		fmt.Sprintf("+I[1, l, 4, %v, 1, r, 2, %v]", at, at),
	}
	slices.Sort(out.Lines)
	if !slices.Equal(out.Lines, want) {
		t.Fatalf("got %q\nwant %q", out.Lines, want)
	}
	if op.StateEntries() != 0 {
		t.Fatalf("after the end: %d rows held, want 0", op.StateEntries())
	}
}

// Past half of its state budget the hash join hands its rows to the
// sorted join, which spills them: the result is the same.
func TestBatchIntervalHashJoinFallsBackToSorted(t *testing.T) {
	for seed := range uint64(20) {
		c := randomHashCase(seed)
		want := pairsOf(c.spec, c.sides)
		for _, restore := range []bool{false, true} {
			var fell int
			got := feedSorted(t, rand.New(rand.NewPCG(seed, 9)), func() operator.Lifecycle {
				h := joinop.NewIntervalHashJoin(c.spec, innerJoin(t, c.spec, seed%2 == 0))
				h.SetSorted(func(inner operator.TwoInput, budget int64) operator.TwoInput {
					fell++
					return sortedOp(inner, [2]int{3, 3}, c.spec.SortedWatermark, 300).(operator.TwoInput)
				})
				h.SetStateBudget(int64(4000 + 300*(seed%5)))
				return h
			}, c.sides, restore)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, restore %t:\ngot  %q\nwant %q", seed, restore, got, want)
			}
			if fell == 0 {
				t.Fatalf("seed %d: never handed its rows to the sorted join", seed)
			}
		}
	}
}

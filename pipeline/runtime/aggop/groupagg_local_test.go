package aggop

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// partialBatch is the Origin the runtime gives a batch the local phase
// folded (its fusedOrigin's LocalPartial).
type partialBatch struct{ p operator.Partial }

func (o partialBatch) Position(int) string            { return "" }
func (o partialBatch) LocalPartial() operator.Partial { return o.p }

// TestLocalAggOf: only aggregates whose partials merge exactly, over an
// insert-only input folded in passes, get a local phase.
func TestLocalAggOf(t *testing.T) {
	big, str, dbl, dec := optest.TBigInt, optest.TString, optest.TDouble, optest.TDec(10, 2)
	batch, mb := GroupAggOptions{Batch: true, InsertOnly: true, LocalPhase: true}, GroupAggOptions{MiniBatch: true, InsertOnly: true, LocalPhase: true}
	cases := []struct {
		name string
		aggs []AggCall
		opt  GroupAggOptions
		want bool
	}{
		{"count, sum, max of BIGINT, batch", []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 1, ArgType: big}, {Func: Max, Arg: 1, ArgType: big}}, batch, true},
		{"the same, mini-batch", []AggCall{{Func: CountStar, Arg: -1}, {Func: Sum, Arg: 1, ArgType: big}, {Func: Max, Arg: 1, ArgType: big}}, mb, true},
		{"AVG, COUNT(x), DECIMAL SUM, MIN of a string", []AggCall{{Func: Avg, Arg: 1, ArgType: big}, {Func: Count, Arg: 1, ArgType: big}, {Func: Sum, Arg: 2, ArgType: dec}, {Func: Min, Arg: 3, ArgType: str}}, batch, true},
		{"MIN of a DOUBLE", []AggCall{{Func: Min, Arg: 1, ArgType: dbl}}, batch, true},
		{"SUM of a DOUBLE", []AggCall{{Func: Sum, Arg: 1, ArgType: dbl}}, batch, false},
		{"AVG of a DOUBLE", []AggCall{{Func: Avg, Arg: 1, ArgType: dbl}}, mb, false},
		{"COUNT DISTINCT", []AggCall{{Func: CountDistinct, Arg: 1, ArgType: big}}, batch, false},
		{"FILTER", []AggCall{{Func: Sum, Arg: 1, ArgType: big, HasFilter: true, Filter: 2}}, batch, false},
		{"FIRST_VALUE", []AggCall{{Func: FirstValue, Arg: 1, ArgType: big}}, batch, false},
		{"STDDEV", []AggCall{{Func: StddevPop, Arg: 1, ArgType: big}}, batch, false},
		{"not asked for", []AggCall{{Func: CountStar, Arg: -1}}, GroupAggOptions{Batch: true, InsertOnly: true}, false},
		{"streaming without mini-batch", []AggCall{{Func: CountStar, Arg: -1}}, GroupAggOptions{InsertOnly: true, LocalPhase: true}, false},
		{"a retracting input", []AggCall{{Func: CountStar, Arg: -1}}, GroupAggOptions{MiniBatch: true, LocalPhase: true}, false},
	}
	for _, tc := range cases {
		g := optest.Must(NewGroupAgg([]int{0}, tc.aggs, tc.opt))
		if got := g.LocalPhase() != nil; got != tc.want {
			t.Errorf("%s: a local phase %v, want %v", tc.name, got, tc.want)
		}
	}
	g := optest.Must(NewGroupAgg([]int{0}, []AggCall{{Func: CountStar, Arg: -1}}, batch))
	g.UseKeyHash()
	if g.LocalPhase() != nil {
		t.Error("a GroupAgg keyed by the split's hashes has a local phase")
	}
}

// localRows are random inserts [k BIGINT, name STRING, amount BIGINT,
// d DECIMAL(10, 2)] over keys keys, with NULL keys and values and sums
// that wrap.
func localRows(r *rand.Rand, n, keys int) []row.Change {
	bigs := []int64{math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, -3}
	null := func(p float64, v row.Value) row.Value {
		if r.Float64() < p {
			return row.NullValue
		}
		return v
	}
	out := make([]row.Change, n)
	for i := range out {
		amount := int64(r.IntN(2000) - 1000)
		if r.IntN(8) == 0 {
			amount = bigs[r.IntN(len(bigs))]
		}
		out[i] = row.Change{Kind: row.Insert, Row: row.Row{
			null(0.02, row.BigIntValue(int64(r.IntN(keys)))),
			null(0.02, row.StringValue(fmt.Sprintf("n%d", r.IntN(max(keys/7, 2))))),
			null(0.05, row.BigIntValue(amount)),
			null(0.05, optest.Dec(int64(r.IntN(1_000_000)-500_000), 2)),
		}}
	}
	return out
}

var localAggs = []AggCall{
	{Func: CountStar, Arg: -1},
	{Func: Count, Arg: 2, ArgType: optest.TBigInt},
	{Func: Sum, Arg: 2, ArgType: optest.TBigInt},
	{Func: Avg, Arg: 2, ArgType: optest.TBigInt},
	{Func: Max, Arg: 2, ArgType: optest.TBigInt},
	{Func: Min, Arg: 1, ArgType: optest.TString},
	{Func: Sum, Arg: 3, ArgType: optest.TDec(10, 2)},
	{Func: Min, Arg: 3, ArgType: optest.TDec(10, 2)},
	{Func: Avg, Arg: 3, ArgType: optest.TDec(10, 2)},
}

// cutBatches cuts changes into batches of 1 to most changes.
func cutBatches(r *rand.Rand, changes []row.Change, most int) [][]row.Change {
	var out [][]row.Change
	for len(changes) > 0 {
		n := min(1+r.IntN(most), len(changes))
		out = append(out, changes[:n])
		changes = changes[n:]
	}
	return out
}

// foldAll folds copies of batches with la on workers goroutines at once,
// as the decoders do, and returns them in order, each cut to its keys
// with its partial, or as it was.
func foldAll(la operator.LocalFolder, batches [][]row.Change, workers int) []*row.Batch {
	out := make([]*row.Batch, len(batches))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				b := &row.Batch{Changes: slices.Clone(batches[i])}
				if p, _ := la.Fold(b); p != nil {
					b.Origin = partialBatch{p}
				}
				out[i] = b
			}
		}()
	}
	for i := range batches {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// TestLocalPhaseSameAsOnePhase: random inputs (integer, string and
// two-column keys, NULL keys and values, sums that wrap, DECIMALs),
// random batches folded by 1 to 4 goroutines, give with the local phase
// what they give without: in batch mode the same result, with
// mini-batch the same changes per batch, and after every batch the same
// state (snapshot bytes). Some batches are left unfolded (many keys, few
// rows each: the fold backs off), and the two ways mix.
func TestLocalPhaseSameAsOnePhase(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	merged := PartialsMerged()
	for round := range 24 {
		keys := [][]int{{0}, {1}, {0, 1}}[round%3]
		opt := GroupAggOptions{Batch: true, InsertOnly: true, LocalPhase: true}
		if round%2 == 1 {
			opt = GroupAggOptions{MiniBatch: true, InsertOnly: true, LocalPhase: true}
		}
		nkeys := []int{3, 40, 1000, 5000}[r.IntN(4)]
		batches := cutBatches(r, localRows(r, 3000, nkeys), 1+r.IntN(600))
		name := fmt.Sprintf("round %d keys %v %d, batch %v", round, keys, nkeys, opt.Batch)
		one := optest.Must(NewGroupAgg(keys, localAggs, opt))
		two := optest.Must(NewGroupAgg(keys, localAggs, opt))
		la := two.LocalPhase()
		if la == nil {
			t.Fatalf("%s: no local phase", name)
		}
		folded := foldAll(la, batches, 1+r.IntN(4))
		oneOut, twoOut := &optest.Out{}, &optest.Out{}
		for i := range batches {
			if err := one.Process(optest.Batch(slices.Clone(batches[i])...), oneOut); err != nil {
				t.Fatalf("%s: batch %d: %v", name, i, err)
			}
			if err := two.Process(folded[i], twoOut); err != nil {
				t.Fatalf("%s: batch %d, local: %v", name, i, err)
			}
			if got, want := twoOut.Take(), oneOut.Take(); !slices.Equal(got, want) {
				t.Fatalf("%s: batch %d: local phase emitted\n%q\nwithout:\n%q", name, i, got, want)
			}
			if i%7 == 0 || i == len(batches)-1 {
				s1, s2 := optest.Must(one.Snapshot()), optest.Must(two.Snapshot())
				if !bytes.Equal(s1, s2) {
					t.Fatalf("%s: batch %d: the states differ", name, i)
				}
			}
		}
		if err := one.Finish(oneOut); err != nil {
			t.Fatal(err)
		}
		if err := two.Finish(twoOut); err != nil {
			t.Fatal(err)
		}
		if got, want := twoOut.Take(), oneOut.Take(); !slices.Equal(got, want) {
			t.Fatalf("%s: Finish emitted\n%q\nwithout the local phase:\n%q", name, got, want)
		}
	}
	if PartialsMerged() == merged {
		t.Fatal("no partial merged")
	}
}

// TestLocalPhaseAcrossRestore: a GroupAgg restored from a snapshot taken
// between two partials goes on to the result of one that ran through.
func TestLocalPhaseAcrossRestore(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2))
	for _, opt := range []GroupAggOptions{{Batch: true, InsertOnly: true, LocalPhase: true}, {MiniBatch: true, InsertOnly: true, LocalPhase: true}} {
		batches := cutBatches(r, localRows(r, 4000, 300), 400)
		through := optest.Must(NewGroupAgg([]int{0, 1}, localAggs, opt))
		folded := foldAll(through.LocalPhase(), batches, 2)
		out := &optest.Out{}
		for _, b := range folded {
			if err := through.Process(b, out); err != nil {
				t.Fatal(err)
			}
		}
		if err := through.Finish(out); err != nil {
			t.Fatal(err)
		}
		want := out.Take()
		if !opt.Batch {
			want = foldLines(t, want)
		}

		cut := len(batches) / 2
		first := optest.Must(NewGroupAgg([]int{0, 1}, localAggs, opt))
		folded = foldAll(first.LocalPhase(), batches, 3)
		got := &optest.Out{}
		for _, b := range folded[:cut] {
			if err := first.Process(b, got); err != nil {
				t.Fatal(err)
			}
		}
		snap := optest.Must(first.Snapshot())
		second := optest.Must(NewGroupAgg([]int{0, 1}, localAggs, opt))
		if err := second.Restore(snap); err != nil {
			t.Fatal(err)
		}
		for _, b := range folded[cut:] {
			if err := second.Process(b, got); err != nil {
				t.Fatal(err)
			}
		}
		if err := second.Finish(got); err != nil {
			t.Fatal(err)
		}
		lines := got.Take()
		if !opt.Batch {
			lines = foldLines(t, lines)
		}
		if !slices.Equal(lines, want) {
			t.Fatalf("batch %v: restored mid-input\n%q\nran through:\n%q", opt.Batch, lines, want)
		}
	}
}

// foldLines is the table a changelog's lines leave, sorted.
func foldLines(t *testing.T, lines []string) []string {
	t.Helper()
	live := map[string]int{}
	for _, l := range lines {
		op, rest := l[:2], l[2:]
		switch op {
		case "+I", "+U":
			live[rest]++
		case "-U", "-D":
			if live[rest]--; live[rest] == 0 {
				delete(live, rest)
			}
		default:
			t.Fatalf("line %q", l)
		}
	}
	var out []string
	for l, n := range live {
		for range n {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// TestLocalFoldLeavesBadBatches: a batch with a row the GroupAgg's
// checks refuse (an argument of the wrong type) is left as it was, for
// the GroupAgg to fail on in order; so is a retraction.
func TestLocalFoldLeavesBadBatches(t *testing.T) {
	g := optest.Must(NewGroupAgg([]int{0}, localAggs, GroupAggOptions{Batch: true, InsertOnly: true, LocalPhase: true}))
	la := g.LocalPhase()
	good := localRows(rand.New(rand.NewPCG(1, 2)), 10, 3)
	bad := slices.Clone(good)
	bad[5] = row.Change{Kind: row.Insert, Row: row.Row{row.BigIntValue(1), row.StringValue("x"), row.StringValue("12"), row.NullValue}}
	retract := slices.Clone(good)
	retract[3].Kind = row.Delete
	narrow := slices.Clone(good)
	narrow[7].Row = narrow[7].Row[:2]
	for name, changes := range map[string][]row.Change{"bad argument": bad, "retraction": retract, "narrow row": narrow} {
		b := &row.Batch{Changes: slices.Clone(changes)}
		if p, _ := la.Fold(b); p != nil || !slices.EqualFunc(b.Changes, changes, func(a, b row.Change) bool { return a.Kind == b.Kind && len(a.Row) == len(b.Row) }) {
			t.Errorf("%s: folded, or the batch changed", name)
		}
	}
	b := &row.Batch{Changes: slices.Clone(good)}
	p, last := la.Fold(b)
	if p == nil || p.Rows() != len(good) || len(last) != b.Len() {
		t.Fatalf("a good batch: partial %v, %d keys, last %v", p, b.Len(), last)
	}
}

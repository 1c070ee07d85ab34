package windowop

import (
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// ntStep is a change of a (k, s, v) row: an OVER aggregate PARTITION BY
// k ORDER BY s, with the lines it must emit.
type ntStep struct {
	in   row.Change
	want []string
}

// runNonTime feeds steps to the operator, snapshotting and restoring
// into a fresh one after step restoreAfter (-1: never), and checks each
// step's output.
func runNonTime(t *testing.T, spec NonTimeSpec, opt WindowOptions, steps []ntStep, restoreAfter int) {
	t.Helper()
	mk := func() *NonTimeOver { return optest.Must(NewNonTimeOver(spec, opt)) }
	g := mk()
	out := &optest.Out{}
	for i, s := range steps {
		if err := g.Process(optest.Batch(s.in), out); err != nil {
			t.Fatal(err)
		}
		if got := out.Take(); !slices.Equal(got, s.want) {
			t.Fatalf("restore after %d, step %d (%s):\ngot  %q\nwant %q", restoreAfter, i, s.in, got, s.want)
		}
		if i == restoreAfter {
			snap, err := g.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			g = mk()
			if err := g.Restore(snap); err != nil {
				t.Fatal(err)
			}
		}
	}
}

var ntSumCount = []aggop.AggCall{{Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}, {Func: aggop.CountStar, Arg: -1}}

// TestNonTimeRangeChangelog follows NonTimeRangeUnboundedPrecedingFunction:
// a row arriving before others retracts and re-emits them, its peers
// are updated before it, a removed row leaves as -D with its results,
// -U in becomes -D out and +U in stays +U, NULL orders first.
func TestNonTimeRangeChangelog(t *testing.T) {
	steps := []ntStep{
		{optest.Ins("a", 5, 1), []string{"+I[a, 5, 1, 1, 1]"}},
		{optest.Ins("a", 3, 2), []string{"+I[a, 3, 2, 2, 1]", "-U[a, 5, 1, 1, 1]", "+U[a, 5, 1, 3, 2]"}},
		{optest.Ins("a", 5, 3), []string{"-U[a, 5, 1, 3, 2]", "+U[a, 5, 1, 6, 3]", "+I[a, 5, 3, 6, 3]"}},
		{optest.Ins("a", 4, 4), []string{"+I[a, 4, 4, 6, 2]",
			"-U[a, 5, 1, 6, 3]", "+U[a, 5, 1, 10, 4]", "-U[a, 5, 3, 6, 3]", "+U[a, 5, 3, 10, 4]"}},
		{optest.Del("a", 3, 2), []string{"-D[a, 3, 2, 2, 1]", "-U[a, 4, 4, 6, 2]", "+U[a, 4, 4, 4, 1]",
			"-U[a, 5, 1, 10, 4]", "+U[a, 5, 1, 8, 3]", "-U[a, 5, 3, 10, 4]", "+U[a, 5, 3, 8, 3]"}},
		{optest.UB("a", 5, 1), []string{"-D[a, 5, 1, 8, 3]", "-U[a, 5, 3, 8, 3]", "+U[a, 5, 3, 7, 2]"}},
		{optest.UA("a", 5, 1), []string{"-U[a, 5, 3, 7, 2]", "+U[a, 5, 3, 8, 3]", "+U[a, 5, 1, 8, 3]"}},
		{optest.Ins("b", nil, 7), []string{"+I[b, null, 7, 7, 1]"}},
		{optest.Ins("a", nil, 10), []string{"+I[a, null, 10, 10, 1]", "-U[a, 4, 4, 4, 1]", "+U[a, 4, 4, 14, 2]",
			"-U[a, 5, 3, 8, 3]", "+U[a, 5, 3, 18, 4]", "-U[a, 5, 1, 8, 3]", "+U[a, 5, 1, 18, 4]"}},
		{optest.Del("a", 9, 9), nil}, // not held: ignored
	}
	spec := NonTimeSpec{Keys: []int{0}, Order: 1, Aggs: ntSumCount}
	for after := -1; after < len(steps); after++ {
		runNonTime(t, spec, WindowOptions{}, steps, after)
	}
}

// TestNonTimeRowsChangelog: in ROWS each row has its own results, a tie
// goes after its peers, and the walk stops at the first row whose
// results do not change (MAX of a smaller value in the middle).
func TestNonTimeRowsChangelog(t *testing.T) {
	aggs := append(slices.Clone(ntSumCount), aggop.AggCall{Func: aggop.Max, Arg: 2, ArgType: optest.TBigInt})
	steps := []ntStep{
		{optest.Ins("a", 1, 5), []string{"+I[a, 1, 5, 5, 1, 5]"}},
		{optest.Ins("a", 3, 7), []string{"+I[a, 3, 7, 12, 2, 7]"}},
		{optest.Ins("a", 1, 2), []string{"+I[a, 1, 2, 7, 2, 5]", "-U[a, 3, 7, 12, 2, 7]", "+U[a, 3, 7, 14, 3, 7]"}},
		{optest.Del("a", 1, 5), []string{"-D[a, 1, 5, 5, 1, 5]", "-U[a, 1, 2, 7, 2, 5]", "+U[a, 1, 2, 2, 1, 2]",
			"-U[a, 3, 7, 14, 3, 7]", "+U[a, 3, 7, 9, 2, 7]"}},
	}
	spec := NonTimeSpec{Keys: []int{0}, Order: 1, Rows: true, Aggs: aggs}
	for after := -1; after < len(steps); after++ {
		runNonTime(t, spec, WindowOptions{}, steps, after)
	}
	// MAX alone: a smaller row in the middle changes nothing after it.
	maxOnly := NonTimeSpec{Keys: []int{0}, Order: 1, Rows: true, Aggs: aggs[2:]}
	runNonTime(t, maxOnly, WindowOptions{}, []ntStep{
		{optest.Ins("a", 1, 5), []string{"+I[a, 1, 5, 5]"}},
		{optest.Ins("a", 3, 7), []string{"+I[a, 3, 7, 7]"}},
		{optest.Ins("a", 2, 1), []string{"+I[a, 2, 1, 5]"}},
	}, -1)
}

// TestNonTimeBatch: batch mode emits each row once at the end, with
// its final results, a deleted row not at all.
func TestNonTimeBatch(t *testing.T) {
	g := optest.Must(NewNonTimeOver(NonTimeSpec{Keys: []int{0}, Order: 1, Aggs: ntSumCount}, WindowOptions{Batch: true}))
	out := &optest.Out{}
	for _, c := range []row.Change{optest.Ins("a", 5, 1), optest.Ins("a", 3, 2), optest.Ins("b", 1, 4), optest.Ins("a", 5, 3)} {
		if err := g.Process(optest.Batch(c), out); err != nil {
			t.Fatal(err)
		}
	}
	if len(out.Lines) > 0 {
		t.Fatalf("output before the end: %q", out.Lines)
	}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[a, 3, 2, 2, 1]", "+I[a, 5, 1, 6, 3]", "+I[a, 5, 3, 6, 3]", "+I[b, 1, 4, 4, 1]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestNonTimeTTL: a partition not written for the TTL starts again from
// empty state, also across a restore; one written within it does not.
func TestNonTimeTTL(t *testing.T) {
	clock := optest.NewFakeClock()
	spec := NonTimeSpec{Keys: []int{0}, Order: 1, Aggs: ntSumCount}
	mk := func() *NonTimeOver {
		g := optest.Must(NewNonTimeOver(spec, WindowOptions{}))
		g.SetStateTTL(operator.StateTTL{TTL: 10 * time.Second, Now: clock.Now})
		return g
	}
	g := mk()
	out := &optest.Out{}
	feed := func(c row.Change) []string {
		t.Helper()
		if err := g.Process(optest.Batch(c), out); err != nil {
			t.Fatal(err)
		}
		return out.Take()
	}
	feed(optest.Ins("a", 1, 1))
	feed(optest.Ins("b", 1, 1))
	clock.Set(8)
	feed(optest.Ins("b", 2, 1))
	snap, err := g.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	g = mk()
	if err := g.Restore(snap); err != nil {
		t.Fatal(err)
	}
	clock.Set(12)
	if got := feed(optest.Ins("a", 2, 5)); !slices.Equal(got, []string{"+I[a, 2, 5, 5, 1]"}) {
		t.Fatalf("expired partition a: got %q", got)
	}
	if got := feed(optest.Ins("b", 3, 5)); !slices.Equal(got, []string{"+I[b, 3, 5, 7, 3]"}) {
		t.Fatalf("live partition b: got %q", got)
	}
	clock.Set(30)
	g.Sweep()
	if n := g.StateEntries(); n != 0 {
		t.Fatalf("%d rows kept after every partition expired", n)
	}
}

// TestNonTimeRestoreRefusesDamage: a cut or foreign snapshot is an
// error, not a partial state.
func TestNonTimeRestoreRefusesDamage(t *testing.T) {
	spec := NonTimeSpec{Keys: []int{0}, Order: 1, Aggs: ntSumCount}
	g := optest.Must(NewNonTimeOver(spec, WindowOptions{}))
	out := &optest.Out{}
	if err := g.Process(optest.Batch(optest.Ins("a", 1, 1), optest.Ins("a", 2, 2)), out); err != nil {
		t.Fatal(err)
	}
	snap, _ := g.Snapshot()
	for _, bad := range [][]byte{nil, snap[:len(snap)-1], append([]byte{9}, snap[1:]...)} {
		if err := optest.Must(NewNonTimeOver(spec, WindowOptions{})).Restore(bad); err == nil {
			t.Errorf("restore of %d damaged bytes succeeded", len(bad))
		}
	}
}

// TestNonTimeWalkPastSameResult: an AVG that stays the same over a row
// does not end the walk (its count changed): the rows after it still
// change.
func TestNonTimeWalkPastSameResult(t *testing.T) {
	avg := []aggop.AggCall{{Func: aggop.Avg, Arg: 2, ArgType: optest.TBigInt}}
	runNonTime(t, NonTimeSpec{Keys: []int{0}, Order: 1, Aggs: avg}, WindowOptions{}, []ntStep{
		{optest.Ins("a", 1, 1), []string{"+I[a, 1, 1, 1]"}},
		{optest.Ins("a", 3, 3), []string{"+I[a, 3, 3, 2]"}},
		{optest.Ins("a", 10, 11), []string{"+I[a, 10, 11, 5]"}},
		{optest.Ins("a", 2, 2), []string{"+I[a, 2, 2, 1]", "-U[a, 10, 11, 5]", "+U[a, 10, 11, 4]"}},
	}, -1)
}

// TestNonTimeRanks: ROW_NUMBER, RANK and DENSE_RANK in streaming count
// the rows up to the row or its last peer, as Flink's accumulators do;
// in batch they are the position, the rank and the dense rank.
func TestNonTimeRanks(t *testing.T) {
	rn := NonTimeSpec{Keys: []int{0}, Order: 1, Rows: true, Funcs: []FuncKind{RowNumber}}
	runNonTime(t, rn, WindowOptions{}, []ntStep{
		{optest.Ins("a", 5, 1), []string{"+I[a, 5, 1, 1]"}},
		{optest.Ins("a", 5, 2), []string{"+I[a, 5, 2, 2]"}},
		{optest.Ins("a", 1, 3), []string{"+I[a, 1, 3, 1]", "-U[a, 5, 1, 1]", "+U[a, 5, 1, 2]", "-U[a, 5, 2, 2]", "+U[a, 5, 2, 3]"}},
	}, 1)
	rk := NonTimeSpec{Keys: []int{0}, Order: 1, Funcs: []FuncKind{Rank, DenseRank}}
	runNonTime(t, rk, WindowOptions{}, []ntStep{
		{optest.Ins("a", 5, 1), []string{"+I[a, 5, 1, 1, 1]"}},
		{optest.Ins("a", 5, 2), []string{"-U[a, 5, 1, 1, 1]", "+U[a, 5, 1, 2, 2]", "+I[a, 5, 2, 2, 2]"}},
	}, 0)
	g := optest.Must(NewNonTimeOver(NonTimeSpec{Keys: []int{0}, Order: 1, Funcs: []FuncKind{RowNumber, Rank, DenseRank}}, WindowOptions{Batch: true}))
	out := &optest.Out{}
	if err := g.Process(optest.Batch(optest.Ins("a", 5, 1), optest.Ins("a", 1, 2), optest.Ins("a", 5, 3), optest.Ins("a", 7, 4)), out); err != nil {
		t.Fatal(err)
	}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[a, 1, 2, 1, 1, 1]", "+I[a, 5, 1, 2, 2, 2]", "+I[a, 5, 3, 3, 2, 2]", "+I[a, 7, 4, 4, 4, 3]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Fatalf("batch ranks: got %q, want %q", got, want)
	}
	if _, err := NewNonTimeOver(NonTimeSpec{Order: 1, Funcs: []FuncKind{Lag}}, WindowOptions{}); err == nil {
		t.Fatal("LAG over a non-time order was accepted")
	}
}

// BenchmarkNonTimeAppend: rows arriving in order, one partition, a
// running SUM and COUNT: each costs no walk over the rows before it.
func BenchmarkNonTimeAppend(b *testing.B) {
	g := optest.Must(NewNonTimeOver(NonTimeSpec{Order: 1, Aggs: ntSumCount}, WindowOptions{}))
	out := &optest.Out{}
	b.ReportAllocs()
	for i := range b.N {
		if err := g.Process(optest.Batch(optest.Ins("a", i, i)), out); err != nil {
			b.Fatal(err)
		}
		out.Take()
	}
}

// TestNonTimeAppendAfterMiddle: a row arriving last after one arrived in
// the middle sees the rows in their order, not in arrival order.
func TestNonTimeAppendAfterMiddle(t *testing.T) {
	first := []aggop.AggCall{{Func: aggop.FirstValue, Arg: 2, ArgType: optest.TBigInt}}
	runNonTime(t, NonTimeSpec{Keys: []int{0}, Order: 1, Rows: true, Aggs: first}, WindowOptions{}, []ntStep{
		{optest.Ins("a", 5, 1), []string{"+I[a, 5, 1, 1]"}},
		{optest.Ins("a", 1, 2), []string{"+I[a, 1, 2, 2]", "-U[a, 5, 1, 1]", "+U[a, 5, 1, 2]"}},
		{optest.Ins("a", 9, 3), []string{"+I[a, 9, 3, 2]"}},
	}, -1)
}

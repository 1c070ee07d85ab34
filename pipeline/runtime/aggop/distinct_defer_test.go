package aggop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// deferAggs: DISTINCT aggregates over a STRING, a BIGINT and a DOUBLE
// column, with and without FILTER, counting and reading their values
// (MIN, MAX, SUM, AVG, FIRST_VALUE, whose result depends on the order
// the values come in, and a DOUBLE sum, whose rounding does), beside
// plain aggregates, a LISTAGG(DISTINCT) that keeps a map of its own and
// a set that is not deferred.
func deferAggs() []AggCall {
	return []AggCall{
		{Func: CountStar, Arg: -1},
		{Func: Count, Arg: 1, ArgType: optest.TString, Distinct: true},
		{Func: Count, Arg: 1, ArgType: optest.TString, Distinct: true, HasFilter: true, Filter: 4},
		{Func: Max, Arg: 1, ArgType: optest.TString, Distinct: true},
		{Func: Min, Arg: 1, ArgType: optest.TString, Distinct: true, HasFilter: true, Filter: 4},
		{Func: FirstValue, Arg: 1, ArgType: optest.TString, Distinct: true},
		{Func: Sum, Arg: 2, ArgType: optest.TBigInt, Distinct: true},
		{Func: Count, Arg: 2, ArgType: optest.TBigInt, Distinct: true, HasFilter: true, Filter: 4},
		{Func: Avg, Arg: 2, ArgType: optest.TBigInt, Distinct: true},
		{Func: Sum, Arg: 3, ArgType: optest.TDouble, Distinct: true},
		{Func: Sum, Arg: 2, ArgType: optest.TBigInt},
		{Func: Count, Arg: 2, ArgType: optest.TBigInt, HasFilter: true, Filter: 4},
		{Func: ListAgg, Arg: 1, ArgType: optest.TString, Distinct: true, Sep: ";"},
		{Func: Count, Arg: 5, ArgType: optest.TFloat, Distinct: true},
		{Func: Max, Arg: 5, ArgType: optest.TFloat, Distinct: true, HasFilter: true, Filter: 4},
	}
}

// deferRow is [key BIGINT, STRING, BIGINT, DOUBLE, BOOLEAN filter,
// FLOAT] (a FLOAT's DISTINCT set is a map of Values, never deferred):
// strings short (in an entry's word) and long (in a buffer), BIGINTs
// small and past 32 bits, each value NULL now and then.
func deferRow(rnd *rand.Rand, keys int) row.Row {
	maybe := func(v row.Value) row.Value {
		if rnd.IntN(7) == 0 {
			return row.NullValue
		}
		return v
	}
	var s string
	switch rnd.IntN(3) {
	case 0:
		s = strings.Repeat("x", rnd.IntN(8))
	case 1:
		s = string(rune('a' + rnd.IntN(26)))
	default:
		s = "a longer value number " + strings.Repeat("z", rnd.IntN(4)) + string(rune('a'+rnd.IntN(26)))
	}
	n := rnd.Int64N(60) - 30
	if rnd.IntN(10) == 0 {
		n <<= 40
	}
	return row.Row{row.BigIntValue(int64(rnd.IntN(keys))), maybe(row.StringValue(s)), maybe(row.BigIntValue(n)),
		maybe(row.DoubleValue(float64(n) / 3)), maybe(row.BoolValue(rnd.IntN(3) != 0)), maybe(row.FloatValue(float32(n % 17)))}
}

// deferTrio is the same GroupAgg in batch mode three ways: its sets
// deferred, with a log that flushes every few dozen rows; applied at
// once (as before the log); row by row.
func deferTrio(t *testing.T) (deferred, direct, rows *GroupAgg) {
	t.Helper()
	opt := GroupAggOptions{Batch: true, InsertOnly: true}
	deferred = optest.Must(NewGroupAgg([]int{0}, deferAggs(), opt))
	direct = optest.Must(NewGroupAgg([]int{0}, deferAggs(), opt))
	rows = optest.Must(NewGroupAgg([]int{0}, deferAggs(), opt))
	direct.store.undefer()
	rows.RowByRow = true
	if !deferred.store.deferring || !deferred.store.anyDirect() || len(deferred.store.sets) != 4 {
		t.Fatalf("sets not deferred as set up: %+v", deferred.store.sets)
	}
	deferred.store.logMin, deferred.store.logCap = 37, 37
	return deferred, direct, rows
}

func feed(t *testing.T, rnd *rand.Rand, keys, size int, ops ...*GroupAgg) {
	t.Helper()
	b := &row.Batch{}
	for range size {
		b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: deferRow(rnd, keys)})
	}
	for _, g := range ops {
		if err := g.Process(b, &optest.Out{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeferredSetsMatchDirect: the deferred sets give the output and
// the snapshot (its length: a set's values have no order) of the sets
// updated at once and of the row-by-row fold, over batches of many
// sizes, few keys and many, the log flushed many times and not at all.
func TestDeferredSetsMatchDirect(t *testing.T) {
	for _, keys := range []int{1, 40, 3000} {
		for _, logMin := range []int{37, 1 << 20} {
			rnd := rand.New(rand.NewPCG(11, uint64(keys)))
			deferred, direct, rows := deferTrio(t)
			deferred.store.logMin, deferred.store.logCap = logMin, logMin
			for _, size := range []int{1, 7, 300, 1024, 0, 2000, 64} {
				feed(t, rnd, keys, size, deferred, direct, rows)
			}
			if logMin < 100 && deferred.store.setEntries == 0 {
				t.Fatal("the log was never flushed before Finish")
			}
			if logMin > 100 && deferred.store.pending == 0 {
				t.Fatal("nothing left in the log for Finish")
			}
			// Finish first: its results read the log, not a snapshot.
			want := finishLines(t, rows)
			if got := finishLines(t, direct); !slices.Equal(got, want) {
				t.Fatal("sets applied at once: output differs from row by row")
			}
			if got := finishLines(t, deferred); !slices.Equal(got, want) {
				t.Fatalf("deferred sets: output differs from row by row:\n%s", firstDiff(got, want))
			}
			compareGroupAggs(t, deferred, direct)
			compareGroupAggs(t, deferred, rows)
		}
	}
}

// TestDeferredSetsSnapshotRestore: a snapshot taken with updates still
// in the log holds them (whole, and cut in key groups), and restores
// into a store that defers and one that does not: both go on to the
// output of one that never stopped.
func TestDeferredSetsSnapshotRestore(t *testing.T) {
	rnd := rand.New(rand.NewPCG(12, 13))
	deferred, direct, _ := deferTrio(t)
	for _, size := range []int{500, 33, 1024} {
		feed(t, rnd, 300, size, deferred, direct)
	}
	deferred.store.logMin, deferred.store.logCap = 1<<20, 1<<20
	feed(t, rnd, 300, 700, deferred, direct)
	if deferred.store.pending == 0 {
		t.Fatal("no update in the log at the snapshot")
	}
	snap, err := deferred.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var parts [][]byte
	if err := deferred.SnapshotGroups(func(_ int, b []byte) error { parts = append(parts, append([]byte(nil), b...)); return nil }); err != nil {
		t.Fatal(err)
	}
	opt := GroupAggOptions{Batch: true, InsertOnly: true}
	into := func(undefer bool) *GroupAgg {
		g := optest.Must(NewGroupAgg([]int{0}, deferAggs(), opt))
		if undefer {
			g.store.undefer()
		}
		return g
	}
	a, b, c := into(false), into(true), into(false)
	if err := a.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if err := c.RestoreGroups(parts); err != nil {
		t.Fatal(err)
	}
	tail := rand.New(rand.NewPCG(14, 15))
	for _, size := range []int{900, 1, 2048} {
		seed := tail.Uint64()
		for _, g := range []*GroupAgg{deferred, direct, a, b, c} {
			feed(t, rand.New(rand.NewPCG(seed, 1)), 300, size, g)
		}
	}
	want := &optest.Out{}
	if err := direct.Finish(want); err != nil {
		t.Fatal(err)
	}
	for i, g := range []*GroupAgg{deferred, a, b, c} {
		got := &optest.Out{}
		if err := g.Finish(got); err != nil {
			t.Fatal(err)
		}
		// A restore from key groups numbers the groups anew: compare
		// the rows, not their order.
		slices.Sort(got.Lines)
		if i == 0 {
			slices.Sort(want.Lines)
		}
		if len(got.Lines) != len(want.Lines) {
			t.Fatalf("operator %d: %d rows, want %d", i, len(got.Lines), len(want.Lines))
		}
		for j := range got.Lines {
			if got.Lines[j] != want.Lines[j] {
				t.Fatalf("operator %d: row %d is\n%s, want\n%s", i, j, got.Lines[j], want.Lines[j])
			}
		}
	}
}

// TestDeferredSetsRefuseRetraction: a retraction into the batch
// aggregate fails as it did before the log, the inserts before it
// applied.
func TestDeferredSetsRefuseRetraction(t *testing.T) {
	rnd := rand.New(rand.NewPCG(16, 17))
	deferred, _, rows := deferTrio(t)
	b := &row.Batch{}
	for range 200 {
		b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: deferRow(rnd, 20)})
	}
	b.Changes[150].Kind = row.Delete
	e1, e2 := deferred.Process(b, &optest.Out{}), rows.Process(b, &optest.Out{})
	if e1 == nil || e2 == nil || e1.Error() != e2.Error() {
		t.Fatalf("errors: deferred %v, row by row %v", e1, e2)
	}
	compareGroupAggs(t, deferred, rows)
}

func finishLines(t *testing.T, g *GroupAgg) []string {
	t.Helper()
	out := &optest.Out{}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	if len(out.Lines) == 0 {
		t.Fatal("no output")
	}
	return out.Lines
}

// firstDiff names the first row where got and want differ.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d: %s, want %s", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d rows, want %d", len(got), len(want))
}

// TestDeferredSetsMemBytes: the log's memory counts in the store's.
func TestDeferredSetsMemBytes(t *testing.T) {
	deferred, direct, _ := deferTrio(t)
	deferred.store.logMin, deferred.store.logCap = 1<<20, 1<<20
	feed(t, rand.New(rand.NewPCG(18, 19)), 50, 3000, deferred, direct)
	if deferred.store.pending == 0 {
		t.Fatal("nothing in the log")
	}
	if d, o := deferred.store.MemBytes(), direct.store.MemBytes(); d < o+int64(deferred.store.pending)*16 {
		t.Fatalf("MemBytes %d with %d updates logged, %d without a log", d, deferred.store.pending, o)
	}
}

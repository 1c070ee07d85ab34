package windowop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// processRowByRow is Process as it was before batches were folded in
// passes: each change checked, placed and accumulated in turn.
func processRowByRow(g *WindowAgg, in *row.Batch, out operator.Emitter) error {
	return operator.EachChange("window aggregate", in, out, func(i int, c *row.Change) error {
		g.At(i)
		return g.add(c.Kind, c.Row)
	})
}

// batchTestAggs are aggregates of every way a store keeps them, some
// whose result depends on the order of the values (FIRST_VALUE,
// LAST_VALUE, LISTAGG), a DISTINCT, a FILTER. Input: [ts, k BIGINT,
// v BIGINT, name STRING, ok BOOLEAN, d DECIMAL(10, 2)].
var batchTestAggs = []aggop.AggCall{
	{Func: aggop.CountStar, Arg: -1},
	{Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt},
	{Func: aggop.Min, Arg: 2, ArgType: optest.TBigInt},
	{Func: aggop.Max, Arg: 3, ArgType: optest.TString},
	{Func: aggop.FirstValue, Arg: 3, ArgType: optest.TString},
	{Func: aggop.LastValue, Arg: 2, ArgType: optest.TBigInt},
	{Func: aggop.ListAgg, Arg: 3, ArgType: optest.TString, Sep: ","},
	{Func: aggop.Count, Arg: 2, ArgType: optest.TBigInt, Distinct: true},
	{Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt, HasFilter: true, Filter: 4},
	{Func: aggop.Avg, Arg: 5, ArgType: optest.TDec(10, 2)},
}

// batchTestRow is a row of time ts (µs) for the aggregates above; bad
// makes it one the operator refuses (1: a NULL event time, 2: a time of
// another type, 3: an argument of another type, 4: a retraction, 5: a
// row too short), timeLTZ gives its time as a TIMESTAMP_LTZ.
func batchTestRow(rng *rand.Rand, ts int64, keys int, bad int, timeLTZ bool) row.Change {
	k := int64(rng.IntN(keys))
	tv := row.TimestampValue(ts)
	if timeLTZ {
		tv = row.TimestampLTZValue(ts)
	}
	v := row.BigIntValue(int64(rng.IntN(100)) - 20)
	if rng.IntN(9) == 0 {
		v = row.NullValue
	}
	name := row.StringValue(fmt.Sprintf("n%d", rng.IntN(50)))
	if rng.IntN(11) == 0 {
		name = row.NullValue
	}
	r := row.Row{tv, row.BigIntValue(k), v, name, row.BoolValue(rng.IntN(2) == 0), row.DecimalValue(int64(rng.IntN(10000)), 2)}
	kind := row.Insert
	switch bad {
	case 1:
		r[0] = row.NullValue
	case 2:
		if timeLTZ {
			r[0] = row.TimestampValue(ts)
		} else {
			r[0] = row.TimestampLTZValue(ts)
		}
	case 3:
		r[2] = row.StringValue("x")
	case 4:
		kind = row.Delete
	case 5:
		r = r[:2]
	}
	return row.Change{Kind: kind, Row: r}
}

// TestWindowBatchAsRowByRow: Process, which folds a batch in passes,
// emits what the row-by-row way emits, in the same order, drops and
// reports the same late rows, fails on the same change with the same
// error and leaves the same state (the snapshots' bytes), for TUMBLE,
// HOP and CUMULATE, with no key, an integer key or two keys, in
// streaming and batch mode, on a TIMESTAMP_LTZ in a zone, for rows in
// order, out of order and late, in batches of one row to several of
// Process's chunks (foldChunk).
func TestWindowBatchAsRowByRow(t *testing.T) {
	specs := []WindowSpec{
		{Kind: Tumble, Size: 4 * optest.Minute, Offset: optest.Minute},
		{Kind: Hop, Size: 6 * optest.Minute, Slide: 2 * optest.Minute, Offset: optest.Minute},
		{Kind: Hop, Size: 10 * optest.Minute / 2, Slide: optest.Minute / 2},
		{Kind: Cumulate, Size: 8 * optest.Minute, Step: 2 * optest.Minute, Offset: optest.Minute},
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name     string
		keys     []int
		nkeys    int
		jitter   int64 // how far out of order rows come, in µs
		batch    bool
		zone     *time.Location
		badEvery int // about one row in badEvery is refused; 0: none
	}
	variants := []variant{
		{name: "no key, in order", nkeys: 1},
		{name: "key, out of order", keys: []int{1}, nkeys: 7, jitter: 3 * optest.Minute},
		{name: "two keys, late rows", keys: []int{3, 1}, nkeys: 40, jitter: 12 * optest.Minute},
		{name: "key, batch mode", keys: []int{1}, nkeys: 5, jitter: 5 * optest.Minute, batch: true},
		{name: "LTZ in a zone", keys: []int{1}, nkeys: 3, jitter: optest.Minute, zone: berlin},
		{name: "bad rows", keys: []int{1}, nkeys: 4, jitter: 2 * optest.Minute, badEvery: 97},
	}
	for _, spec := range specs {
		for vi, v := range variants {
			t.Run(fmt.Sprintf("%s/%s", spec.Kind, v.name), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(vi), uint64(spec.Size)))
				opt := WindowOptions{Batch: v.batch, Zone: v.zone}
				fast := optest.Must(NewWindowAgg(spec, v.keys, batchTestAggs, opt))
				slow := optest.Must(NewWindowAgg(spec, v.keys, batchTestAggs, opt))
				var fastLate, slowLate []int
				fast.ReportLate(func(i int) { fastLate = append(fastLate, i) })
				slow.ReportLate(func(i int) { slowLate = append(slowLate, i) })
				fastOut, slowOut := &optest.Out{}, &optest.Out{}
				// Around a daylight-saving change in Berlin (2024-03-31 01:00 UTC).
				ts := int64(1711846800_000_000) - 30*optest.Minute
				rows, fails, late := 0, 0, 0
				for round := range 16 {
					n := []int{1, 3, 200, foldChunk, foldChunk + 1, 2*foldChunk + 17}[rng.IntN(6)]
					in := &row.Batch{}
					for range n {
						// Times on a quarter second: rows at a slice's
						// first and last instants.
						const q = 250_000
						ts += int64(rng.IntN(8)) * q
						at := ts - rng.Int64N(v.jitter/q+1)*q
						bad := 0
						if v.badEvery > 0 && rows > 0 && rng.IntN(v.badEvery) == 0 {
							bad = 1 + rng.IntN(5)
						}
						in.Changes = append(in.Changes, batchTestRow(rng, at, v.nkeys, bad, v.zone != nil))
						rows++
					}
					for from := 0; from < len(in.Changes); {
						part := &row.Batch{Changes: in.Changes[from:]}
						fastLate, slowLate = fastLate[:0], slowLate[:0]
						errFast := fast.Process(part, fastOut)
						errSlow := processRowByRow(slow, part, slowOut)
						if fmt.Sprint(errFast) != fmt.Sprint(errSlow) || !slices.Equal(fastLate, slowLate) {
							t.Fatalf("round %d: error %v, late %v; row by row %v, %v", round, errFast, fastLate, errSlow, slowLate)
						}
						late += len(fastLate)
						if errFast == nil {
							break
						}
						fails++
						// The node goes on after the change that failed.
						var at int
						if _, err := fmt.Sscanf(fmt.Sprint(errFast), "window aggregate: change %d:", &at); err != nil {
							t.Fatalf("round %d: error %v names no change", round, errFast)
						}
						from += at + 1
					}
					if round%3 == 2 {
						wm := ts - v.jitter/2 - rng.Int64N(optest.Minute)
						if err := errorsOf(fast.Watermark(wm, fastOut), slow.Watermark(wm, slowOut)); err != nil {
							t.Fatal(err)
						}
					}
					if got, want := fastOut.Take(), slowOut.Take(); !slices.Equal(got, want) {
						t.Fatalf("round %d: emitted\n%q\nrow by row\n%q", round, got, want)
					}
					if round%4 != 3 {
						continue
					}
					a, errA := fast.Snapshot()
					b, errB := slow.Snapshot()
					if errA != nil || errB != nil || !bytes.Equal(a, b) {
						t.Fatalf("round %d: snapshots differ (%v, %v)", round, errA, errB)
					}
				}
				if err := errorsOf(fast.Finish(fastOut), slow.Finish(slowOut)); err != nil {
					t.Fatal(err)
				}
				if got, want := fastOut.Take(), slowOut.Take(); !slices.Equal(got, want) || len(got) == 0 {
					t.Fatalf("finish: emitted %d rows, row by row %d", len(got), len(want))
				}
				if nf, _ := fast.Dropped(); nf != int64(late) {
					t.Fatalf("dropped %d, reported %d", nf, late)
				}
				if (v.jitter > 6*optest.Minute && late == 0) || (v.badEvery > 0) != (fails > 0) {
					t.Fatalf("%d late rows, %d failures: not what the variant makes", late, fails)
				}
			})
		}
	}
}

func errorsOf(a, b error) error {
	if a != nil || b != nil {
		return fmt.Errorf("%v; row by row %v", a, b)
	}
	return nil
}

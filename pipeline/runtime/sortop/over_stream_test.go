package sortop_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// overRows are random rows [key BIGINT, name STRING, amount BIGINT,
// ts TIMESTAMP, d DOUBLE, flag BOOLEAN], every column but ts NULL at
// times (ts too, rarely): times after 1970 (a streaming OVER drops a row
// at or before its partition's last emitted time, 0 before the first),
// mostly rising by up to 2 s, a fifth jumping back up to 10 s, ties.
func overRows(rng *rand.Rand, n, keys int) []row.Change {
	out := make([]row.Change, n)
	t := int64(100+rng.IntN(5)) * sortSec
	maybe := func(v any) any {
		if rng.IntN(8) == 0 {
			return nil
		}
		return v
	}
	for i := range out {
		ts := t
		if rng.IntN(5) == 0 {
			ts -= int64(rng.IntN(10)) * sortSec
		} else {
			t += int64(rng.IntN(5)) * sortSec / 2
		}
		var tv any = row.TimestampValue(ts)
		if rng.IntN(40) == 0 {
			tv = nil
		}
		out[i] = optest.Ins(maybe(rng.IntN(keys)), maybe(fmt.Sprintf("n%d", rng.IntN(6))), maybe(rng.IntN(50)-10),
			tv, maybe(float64(rng.IntN(40))*0.125), maybe(row.BoolValue(rng.IntN(2) == 0)))
	}
	return out
}

// overStreamAggs are the aggregates an OVER takes, over each column
// type, DISTINCT and FILTER ones too.
func overStreamAggs() []aggop.AggCall {
	big, str, dbl := optest.TBigInt, row.Type{ID: row.String}, optest.TDouble
	return []aggop.AggCall{
		{Func: aggop.CountStar, Arg: -1},
		{Func: aggop.Count, Arg: 2, ArgType: big},
		{Func: aggop.CountDistinct, Arg: 1, ArgType: str},
		{Func: aggop.Sum, Arg: 2, ArgType: big},
		{Func: aggop.SumDistinct, Arg: 2, ArgType: big},
		{Func: aggop.Sum, Arg: 4, ArgType: dbl},
		{Func: aggop.Min, Arg: 2, ArgType: big},
		{Func: aggop.Max, Arg: 2, ArgType: big},
		{Func: aggop.Min, Arg: 1, ArgType: str},
		{Func: aggop.Max, Arg: 1, ArgType: str},
		{Func: aggop.Max, Arg: 4, ArgType: dbl},
		{Func: aggop.Min, Arg: 4, ArgType: dbl, Distinct: true},
		{Func: aggop.Avg, Arg: 2, ArgType: big},
		{Func: aggop.Avg, Arg: 4, ArgType: dbl},
		{Func: aggop.AvgDistinct, Arg: 2, ArgType: big},
		{Func: aggop.StddevPop, Arg: 4, ArgType: dbl},
		{Func: aggop.StddevSamp, Arg: 2, ArgType: big},
		{Func: aggop.VarPop, Arg: 2, ArgType: big},
		{Func: aggop.VarSamp, Arg: 4, ArgType: dbl},
		{Func: aggop.FirstValue, Arg: 1, ArgType: str},
		{Func: aggop.LastValue, Arg: 2, ArgType: big},
		{Func: aggop.ListAgg, Arg: 1, ArgType: str, Sep: ","},
		{Func: aggop.Sum, Arg: 2, ArgType: big, HasFilter: true, Filter: 5},
		{Func: aggop.Max, Arg: 2, ArgType: big, HasFilter: true, Filter: 5},
		{Func: aggop.Min, Arg: 1, ArgType: str, HasFilter: true, Filter: 5},
	}
}

// A batch run's OVER over its input sorted by time (sortop.TimeSorted,
// which steps each batch's rows as they come) gives what the streaming
// OVER gives when the watermark comes only at the end (no row late):
// ROWS and RANGE frames, bounded or not, by a BIGINT, a STRING, both or
// no key, every aggregate kind over BIGINT, DOUBLE and STRING arguments
// (DISTINCT and FILTER ones too), LAG and ROW_NUMBER with ROWS frames,
// NULLs in every column, ties in time, rows out of order; the sort in
// memory or spilled, restored midway or not, one worker or two.
func TestBatchOverSortedSameAsStreaming(t *testing.T) {
	frames := []windowop.OverSpec{
		{Rows: true, Preceding: 0}, {Rows: true, Preceding: 1}, {Rows: true, Preceding: 4},
		{Rows: true, Preceding: windowop.Unbounded}, {Preceding: 0}, {Preceding: sortSec},
		{Preceding: 4 * sortSec}, {Preceding: windowop.Unbounded},
	}
	keys := [][]int{{0}, {1}, {0, 1}, nil}
	for seed := range uint64(48) {
		rng := rand.New(rand.NewPCG(seed, 23))
		spec := frames[seed%uint64(len(frames))]
		spec.TimeCol, spec.Aggs, spec.Keys = 3, overStreamAggs(), keys[seed/uint64(len(frames))%4]
		if spec.Rows {
			spec.Funcs = []windowop.RowFunc{{Kind: windowop.Lag, Arg: 2, Offset: 1, Default: -1}, {Kind: windowop.RowNumber}}
		}
		rows := overRows(rng, 50+rng.IntN(250), 1+rng.IntN(5))
		stream := optest.Must(windowop.NewOverAgg(spec, windowop.WindowOptions{}))
		var want optest.Out
		for i := 0; i < len(rows); {
			n := min(1+rng.IntN(9), len(rows)-i)
			if err := stream.Process(optest.Batch(rows[i:i+n]...), &want); err != nil {
				t.Fatal(err)
			}
			i += n
		}
		if err := stream.Watermark(operator.MaxWatermark, &want); err != nil {
			t.Fatal(err)
		}
		// Only the rows without a time are dropped: none is late.
		var nulls int64
		for _, c := range rows {
			if c.Row[3].IsNull() {
				nulls++
			}
		}
		if dropped, _ := stream.Dropped(); dropped != nulls {
			t.Fatalf("seed %d %s: the streaming OVER dropped %d rows, %d without a time", seed, spec, dropped, nulls)
		}
		if len(want.Lines) == 0 {
			t.Fatalf("seed %d: no output", seed)
		}
		for _, v := range sortVariants {
			for _, workers := range []int{1, 2} {
				if workers == 2 && len(spec.Keys) == 0 {
					continue
				}
				got := feedSorted(t, rand.New(rand.NewPCG(seed, 3)), func() operator.Lifecycle {
					op := keyedOr(t, spec.Keys, workers, func() (operator.KeyGrouped, error) {
						return windowop.NewOverAgg(spec, windowop.WindowOptions{Batch: true, Sorted: true})
					})
					return sortedOp(op, [2]int{3}, windowop.OverSortedWatermark, v.spill)
				}, [2][]row.Change{rows}, v.restore)
				w := want.Lines
				if workers == 2 {
					// Workers emit a time's rows by partition.
					got, w = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(w))
				}
				if !slices.Equal(got, w) {
					t.Fatalf("seed %d, %s keys %v, %s, %d workers:\nsorted %q\nstream %q", seed, spec, spec.Keys, v.name, workers, got, w)
				}
			}
		}
	}
}

package aggop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// batchAggs covers every path of foldInserts: the kinds with loops of
// their own (COUNT, integer SUM/AVG, words), the default (DOUBLE sums,
// DECIMAL, moments, a STRING MAX, LISTAGG), DISTINCT and FILTER.
func batchAggs() []AggCall {
	dec := row.Type{ID: row.Decimal, Precision: 10, Scale: 2}
	return []AggCall{
		{Func: CountStar, Arg: -1},
		{Func: Count, Arg: 1, ArgType: optest.TBigInt},
		{Func: Sum, Arg: 1, ArgType: optest.TBigInt},
		{Func: Avg, Arg: 1, ArgType: optest.TBigInt},
		{Func: Max, Arg: 1, ArgType: optest.TBigInt},
		{Func: Min, Arg: 2, ArgType: row.Type{ID: row.Double}},
		{Func: Sum, Arg: 2, ArgType: row.Type{ID: row.Double}},
		{Func: Sum, Arg: 3, ArgType: dec},
		{Func: Max, Arg: 3, ArgType: dec},
		{Func: StddevSamp, Arg: 1, ArgType: optest.TBigInt},
		{Func: Max, Arg: 4, ArgType: optest.TString},
		{Func: ListAgg, Arg: 4, ArgType: optest.TString, Sep: ";"},
		{Func: FirstValue, Arg: 4, ArgType: optest.TString},
		{Func: LastValue, Arg: 1, ArgType: optest.TBigInt},
		{Func: CountDistinct, Arg: 1, ArgType: optest.TBigInt},
		{Func: Sum, Arg: 1, ArgType: optest.TBigInt, HasFilter: true, Filter: 5},
		{Func: Max, Arg: 2, ArgType: row.Type{ID: row.Double}, HasFilter: true, Filter: 5},
	}
}

// batchRow is [key, BIGINT, DOUBLE, DECIMAL, STRING, BOOLEAN filter],
// each value NULL now and then; the key is a BIGINT or, one time in
// eight, NULL.
func batchRow(rnd *rand.Rand, keys int) row.Row {
	maybe := func(v row.Value) row.Value {
		if rnd.IntN(6) == 0 {
			return row.NullValue
		}
		return v
	}
	k := row.BigIntValue(int64(rnd.IntN(keys)))
	if rnd.IntN(8) == 0 {
		k = row.NullValue
	}
	x := rnd.Int64N(200) - 100
	return row.Row{k, maybe(row.BigIntValue(x)), maybe(row.DoubleValue(float64(x) / 8)), maybe(row.DecimalValue(x*7, 2)),
		maybe(row.StringValue(string(rune('a' + x%26 + 25)))), maybe(row.BoolValue(x%3 == 0))}
}

// TestGroupAggBatchPassesMatchRows: the batch-mode passes give the row
// by row fold's output and state, over batches of many sizes, keys new
// and old (and repeated within a batch), with one or two key columns.
func TestGroupAggBatchPassesMatchRows(t *testing.T) {
	for _, keys := range [][]int{{0}, {0, 5}, {}} {
		rnd := rand.New(rand.NewPCG(3, uint64(len(keys))))
		opt := GroupAggOptions{Batch: true, InsertOnly: true}
		fast, slow := optest.Must(NewGroupAgg(keys, batchAggs(), opt)), optest.Must(NewGroupAgg(keys, batchAggs(), opt))
		slow.RowByRow = true
		if !fast.Vectorized() || slow.Vectorized() {
			t.Fatal("paths not as set up")
		}
		for _, size := range []int{1, 7, 300, 1024, 0, 2000, 64} {
			b := &row.Batch{}
			for range size {
				b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: batchRow(rnd, 3000)})
			}
			if err := fast.Process(b, &optest.Out{}); err != nil {
				t.Fatal(err)
			}
			if err := slow.Process(b, &optest.Out{}); err != nil {
				t.Fatal(err)
			}
		}
		if len(keys) == 1 && len(fast.ints.direct) == 0 {
			t.Fatal("the keys, dense, are not in the integer cache's direct array")
		}
		compareGroupAggs(t, fast, slow)
	}
}

func compareGroupAggs(t *testing.T, fast, slow *GroupAgg) {
	t.Helper()
	fs, err := fast.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := slow.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(ss) { // DISTINCT's maps have no order: compare the lengths and the output
		t.Fatalf("snapshots: %d bytes in passes, %d row by row", len(fs), len(ss))
	}
	fo, so := &optest.Out{}, &optest.Out{}
	if err := fast.Finish(fo); err != nil {
		t.Fatal(err)
	}
	if err := slow.Finish(so); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fo.Lines, so.Lines) {
		t.Fatalf("outputs differ:\npasses     %v\nrow by row %v", fo.Lines, so.Lines)
	}
	if len(fo.Lines) == 0 {
		t.Fatal("no output")
	}
}

// TestGroupAggBatchPassesBadChange: a change the checks refuse fails the
// batch with the row path's error, after the changes before it were
// applied, as row by row.
func TestGroupAggBatchPassesBadChange(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  func(row.Row) row.Row
		kind row.Kind
	}{
		{"argument type", func(r row.Row) row.Row { r[1] = row.IntValue(3); return r }, row.Insert},
		{"decimal scale", func(r row.Row) row.Row { r[3] = row.DecimalValue(5, 1); return r }, row.Insert},
		{"filter type", func(r row.Row) row.Row { r[5] = row.BigIntValue(1); return r }, row.Insert},
		{"narrow row", func(r row.Row) row.Row { return r[:3] }, row.Insert},
		{"retraction", func(r row.Row) row.Row { return r }, row.Delete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(5, 6))
			opt := GroupAggOptions{Batch: true, InsertOnly: true}
			fast, slow := optest.Must(NewGroupAgg([]int{0}, batchAggs(), opt)), optest.Must(NewGroupAgg([]int{0}, batchAggs(), opt))
			slow.RowByRow = true
			b := &row.Batch{}
			for range 100 {
				b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: batchRow(rnd, 30)})
			}
			b.Changes[60] = row.Change{Kind: tc.kind, Row: tc.bad(batchRow(rnd, 30))}
			ferr, serr := fast.Process(b, &optest.Out{}), slow.Process(b, &optest.Out{})
			if ferr == nil || serr == nil || ferr.Error() != serr.Error() {
				t.Fatalf("errors differ:\npasses     %v\nrow by row %v", ferr, serr)
			}
			if fast.Groups() != slow.Groups() {
				t.Fatalf("%d groups in passes, %d row by row", fast.Groups(), slow.Groups())
			}
			fs, _ := fast.Snapshot()
			ss, _ := slow.Snapshot()
			if !bytes.Equal(fs[:8], ss[:8]) || len(fs) != len(ss) {
				t.Fatalf("state after the error differs")
			}
			compareGroupAggs(t, fast, slow)
		})
	}
}

// posOut records each emitted change with the input change it names.
type posOut struct {
	lines []string
	cur   int
}

func (o *posOut) At(i int) { o.cur = i }
func (o *posOut) Emit(k row.Kind, r row.Row) {
	o.lines = append(o.lines, fmt.Sprintf("%s @%d", row.Change{Kind: k, Row: r}, o.cur))
}

// TestGroupAggMiniBatchPassesMatchRows: a streaming mini-batch over an
// insert-only input folded in passes emits what the row by row fold
// emits, change for change, with the same positions, at every flush
// (mid-batch size limits, explicit flushes) and after a refused change.
func TestGroupAggMiniBatchPassesMatchRows(t *testing.T) {
	for _, keys := range [][]int{{0}, {0, 5}, {}} {
		rnd := rand.New(rand.NewPCG(7, uint64(len(keys))))
		opt := GroupAggOptions{MiniBatch: true, MiniBatchSize: 900, InsertOnly: true}
		fast, slow := optest.Must(NewGroupAgg(keys, batchAggs(), opt)), optest.Must(NewGroupAgg(keys, batchAggs(), opt))
		slow.RowByRow = true
		if !fast.Vectorized() || slow.Vectorized() {
			t.Fatal("paths not as set up")
		}
		for step, size := range []int{1, 7, 300, 1024, 0, 2000, 64, 500, 100} {
			b := &row.Batch{Origin: row.Sequence{Prefix: "in:", First: int64(step * 10000)}}
			for range size {
				b.Changes = append(b.Changes, row.Change{Kind: row.Insert, Row: batchRow(rnd, 2000)})
			}
			if step == 7 {
				b.Changes[250].Row = b.Changes[250].Row[:3] // refused: too narrow
			}
			fo, so := &posOut{}, &posOut{}
			ferr, serr := fast.Process(b, fo), slow.Process(b, so)
			if (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
				t.Fatalf("step %d: errors differ:\npasses     %v\nrow by row %v", step, ferr, serr)
			}
			if step == 7 && ferr == nil {
				t.Fatal("the narrow row was not refused")
			}
			if step == 3 {
				if err := fast.Flush(fo); err != nil {
					t.Fatal(err)
				}
				if err := slow.Flush(so); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(fo.lines, so.lines) {
				t.Fatalf("step %d: outputs differ:\npasses     %v\nrow by row %v", step, fo.lines, so.lines)
			}
		}
		fo, so := &posOut{}, &posOut{}
		if err := fast.Flush(fo); err != nil {
			t.Fatal(err)
		}
		if err := slow.Flush(so); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(fo.lines, so.lines) || len(fo.lines) == 0 {
			t.Fatalf("final flush: outputs differ or are empty:\npasses     %v\nrow by row %v", fo.lines, so.lines)
		}
		fs, _ := fast.Snapshot()
		ss, _ := slow.Snapshot()
		if len(fs) != len(ss) || fast.Groups() != slow.Groups() {
			t.Fatalf("state differs: %d groups, %d bytes in passes; %d, %d row by row", fast.Groups(), len(fs), slow.Groups(), len(ss))
		}
	}
}

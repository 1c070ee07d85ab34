package aggop

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

func TestGroupAggMiniBatch(t *testing.T) {
	countSumMax := []AggCall{
		{Func: CountStar, Arg: -1},
		{Func: Sum, Arg: 1, ArgType: optest.TBigInt},
		{Func: Max, Arg: 1, ArgType: optest.TBigInt},
	}
	mb := GroupAggOptions{MiniBatch: true}
	runGroupAggCases(t, []groupAggCase{{
		name: "one change per key per batch",
		keys: []int{0}, aggs: countSumMax, opt: mb,
		batches: [][]row.Change{
			{optest.Change(I, "a", 1), optest.Change(I, "b", 10), optest.Change(I, "a", 5)},
			{optest.Change(I, "a", 2), optest.Change(I, "b", 1), optest.Change(I, "a", 3)},
		},
		want: [][]string{
			{"+I[a, 2, 6, 5]", "+I[b, 1, 10, 10]"},
			{"-U[a, 2, 6, 5]", "+U[a, 4, 11, 5]", "-U[b, 1, 10, 10]", "+U[b, 2, 11, 10]"},
		},
	}, {
		name: "updating input: the -U/+U pair of one row folds",
		keys: []int{0}, aggs: countSumMax, opt: mb,
		batches: [][]row.Change{
			{optest.Change(I, "a", 1), optest.Change(I, "a", 7)},
			{optest.Change(UB, "a", 7), optest.Change(UA, "a", 3)},
			{optest.Change(UB, "a", 3), optest.Change(UA, "a", 3)},
			{optest.Change(D, "a", 1), optest.Change(D, "a", 3)},
		},
		want: [][]string{
			{"+I[a, 2, 8, 7]"},
			{"-U[a, 2, 8, 7]", "+U[a, 2, 4, 3]"},
			nil, // the result came back: nothing
			{"-D[a, 2, 4, 3]"},
		},
	}, {
		name: "a key deleted and inserted again within a batch",
		keys: []int{0}, aggs: countSumMax, opt: mb,
		batches: [][]row.Change{
			{optest.Change(I, "a", 1)},
			{optest.Change(D, "a", 1), optest.Change(I, "b", 2), optest.Change(I, "a", 4)},
			{optest.Change(I, "c", 1), optest.Change(D, "c", 1)},
		},
		want: [][]string{
			{"+I[a, 1, 1, 1]"},
			{"-D[a, 1, 1, 1]", "+I[b, 1, 2, 2]", "+I[a, 1, 4, 4]"},
			nil,
		},
	}, {
		name: "retraction of a key without state is dropped",
		keys: []int{0}, aggs: countSumMax, opt: mb,
		batches: [][]row.Change{{optest.Change(D, "ghost", 1), optest.Change(I, "a", 1)}},
		want:    [][]string{{"+I[a, 1, 1, 1]"}},
		dropped: 1,
	}, {
		name: "batch mode ignores it",
		keys: []int{0}, aggs: countSumMax, opt: GroupAggOptions{MiniBatch: true, Batch: true},
		batches: [][]row.Change{{optest.Change(I, "a", 1), optest.Change(I, "a", 2)}},
		want:    [][]string{nil},
		finish:  []string{"+I[a, 2, 3, 2]"},
	}})
}

// TestGroupAggMiniBatchFoldsToTheSameTable feeds random changelogs (with
// retractions, deletes of whole keys, ghosts) cut into random batches to
// GroupAgg with and without mini-batch (flushing after every batch, or
// after 5 or 40 changes): after each flush (a barrier, the end) both
// outputs, folded into tables, must be equal; every -U/-D must retract the
// row the table holds, and mini-batch must emit fewer changes.
func TestGroupAggMiniBatchFoldsToTheSameTable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		aggs       []AggCall
		insertOnly bool
		flat       bool // the store is words only (agg_saved.go)
	}{
		{"retractable MIN/MAX", []AggCall{
			{Func: CountStar, Arg: -1},
			{Func: Sum, Arg: 1, ArgType: optest.TBigInt},
			{Func: Max, Arg: 1, ArgType: optest.TBigInt},
			{Func: Min, Arg: 1, ArgType: optest.TBigInt},
			{Func: Count, Arg: 1, ArgType: optest.TBigInt},
		}, false, false},
		{"sums", []AggCall{
			{Func: CountStar, Arg: -1},
			{Func: Sum, Arg: 1, ArgType: optest.TBigInt},
			{Func: Count, Arg: 1, ArgType: optest.TBigInt},
			{Func: Avg, Arg: 1, ArgType: optest.TBigInt},
		}, false, true},
		{"insert-only words", []AggCall{
			{Func: CountStar, Arg: -1},
			{Func: Sum, Arg: 1, ArgType: optest.TBigInt},
			{Func: Max, Arg: 1, ArgType: optest.TBigInt},
			{Func: Min, Arg: 1, ArgType: optest.TBigInt},
			{Func: LastValue, Arg: 1, ArgType: optest.TBigInt},
		}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if flat := optest.Must(NewGroupAgg([]int{0}, tc.aggs, GroupAggOptions{InsertOnly: tc.insertOnly})).store.flat(); flat != tc.flat {
				t.Fatalf("store flat %v, want %v", flat, tc.flat)
			}
			testMiniBatchFolds(t, tc.aggs, tc.insertOnly)
		})
	}
}

// testMiniBatchFolds feeds random changelogs to a GroupAgg of aggs with
// and without mini-batch and compares the tables their outputs fold to.
// insertOnly: the changelogs hold inserts only.
func testMiniBatchFolds(t *testing.T, aggs []AggCall, insertOnly bool) {
	var plainTotal, miniTotal int
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		plain := optest.Must(NewGroupAgg([]int{0}, aggs, GroupAggOptions{InsertOnly: insertOnly}))
		size := []int{0, 5, 40}[seed%3]
		mini := optest.Must(NewGroupAgg([]int{0}, aggs, GroupAggOptions{InsertOnly: insertOnly, MiniBatch: true, MiniBatchSize: size}))
		pt, mt := foldTable{}, foldTable{}
		var live []row.Row // rows inserted and not yet retracted
		keys := 1 + rng.IntN(8)
		for b := range 20 {
			var batch []row.Change
			for range 1 + rng.IntN(12) {
				switch p := rng.IntN(10); {
				case p < 5 || len(live) == 0 || insertOnly:
					var v row.Value = row.BigIntValue(int64(rng.IntN(20) - 5))
					if rng.IntN(6) == 0 {
						v = row.NullValue
					}
					r := row.Row{row.StringValue(fmt.Sprint("k", rng.IntN(keys))), v}
					live = append(live, r)
					kind := []row.Kind{I, UA}[rng.IntN(2)]
					if insertOnly {
						kind = I
					}
					batch = append(batch, row.Change{Kind: kind, Row: r})
				case p < 9:
					j := rng.IntN(len(live))
					batch = append(batch, row.Change{Kind: []row.Kind{D, UB}[rng.IntN(2)], Row: live[j]})
					live = slices.Delete(live, j, j+1)
				default: // a retraction of a key that never had state
					batch = append(batch, row.Change{Kind: D, Row: row.Row{row.StringValue("ghost"), row.BigIntValue(1)}})
				}
			}
			po, mo := &optest.Out{}, &optest.Out{}
			if err := plain.Process(optest.Batch(batch...), po); err != nil {
				t.Fatalf("seed %d batch %d: plain: %v", seed, b, err)
			}
			if err := mini.Process(optest.Batch(batch...), mo); err != nil {
				t.Fatalf("seed %d batch %d: mini-batch: %v", seed, b, err)
			}
			// A barrier (Flush) or the end (Finish) at random points:
			// then nothing is held back and the tables must agree.
			synced := size == 0
			if b == 19 || rng.IntN(4) == 0 {
				f := mini.Flush
				if b == 19 {
					f = mini.Finish
				}
				if err := f(mo); err != nil {
					t.Fatalf("seed %d batch %d: flush: %v", seed, b, err)
				}
				synced = true
			}
			pc, mc := po.Changes(), mo.Changes()
			plainTotal += len(pc)
			miniTotal += len(mc)
			if err := pt.apply(pc); err != nil {
				t.Fatalf("seed %d batch %d: plain: %v", seed, b, err)
			}
			if err := mt.apply(mc); err != nil {
				t.Fatalf("seed %d batch %d: mini-batch: %v\n%v", seed, b, err, mc)
			}
			if synced && !maps.Equal(pt, mt) {
				t.Fatalf("seed %d batch %d: tables differ\nplain %v\nmini  %v", seed, b, pt, mt)
			}
		}
		pd, _ := plain.Dropped()
		md, _ := mini.Dropped()
		if pd != md || plain.Groups() != mini.Groups() {
			t.Fatalf("seed %d: dropped %d/%d groups %d/%d", seed, pd, md, plain.Groups(), mini.Groups())
		}
	}
	if miniTotal >= plainTotal {
		t.Errorf("mini-batch emitted %d changes over all seeds, plain %d: nothing folded", miniTotal, plainTotal)
	}
	t.Logf("changes: plain %d, mini-batch %d", plainTotal, miniTotal)
}

// foldTable is a changelog folded into a table: key column -> row.
type foldTable map[string]string

func (ft foldTable) apply(cs []row.Change) error {
	for _, c := range cs {
		k, s := c.Row[0].String(), row.Change{Kind: I, Row: c.Row}.String()
		switch c.Kind {
		case I, UA:
			if _, ok := ft[k]; ok {
				return fmt.Errorf("%v: key %s already holds %s", c, k, ft[k])
			}
			ft[k] = s
		case UB, D:
			if ft[k] != s {
				return fmt.Errorf("%v retracts a row the table does not hold (%q)", c, ft[k])
			}
			delete(ft, k)
		}
	}
	return nil
}

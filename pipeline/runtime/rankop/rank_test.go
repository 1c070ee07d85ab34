package rankop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// topNSpec ranks [category, item, sales] by sales DESC per category.
func topNSpec(strategy RankStrategy, outputRank bool, start, end int64) RankSpec {
	return RankSpec{
		Partition: []int{0}, Order: []SortKey{{Col: 2, Desc: true}},
		Start: start, End: end, Kind: RowNumber, Strategy: strategy, OutputRank: outputRank,
	}
}

func TestTopNChangelog(t *testing.T) {
	appendInput := []row.Change{optest.Ins("a", "x", 10), optest.Ins("a", "y", 20), optest.Ins("a", "z", 15), optest.Ins("a", "w", 5), optest.Ins("b", "q", 1)}
	// An updating input (a GROUP BY item's sales): y leaves the top 2
	// (-U y 5), re-enters at the top (+U y 30), then rows are deleted.
	updating := []row.Change{optest.Ins("a", "x", 10), optest.Ins("a", "y", 5), optest.Ins("a", "z", 1), optest.UB("a", "y", 5), optest.UA("a", "y", 30), optest.Del("a", "x", 10), optest.Del("a", "y", 30)}
	tests := []struct {
		name string
		spec RankSpec
		in   []row.Change
		want [][]string
	}{
		{"append, rank number", topNSpec(AppendFast, true, 1, 2), appendInput, [][]string{
			{"+I[a, x, 10, 1]"},
			{"-U[a, x, 10, 1]", "+U[a, y, 20, 1]", "+I[a, x, 10, 2]"},
			{"-U[a, x, 10, 2]", "+U[a, z, 15, 2]"},
			nil,
			{"+I[b, q, 1, 1]"},
		}},
		{"append, no rank number", topNSpec(AppendFast, false, 1, 2), appendInput, [][]string{
			{"+I[a, x, 10]"},
			{"+I[a, y, 20]"},
			{"-D[a, x, 10]", "+I[a, z, 15]"},
			nil,
			{"+I[b, q, 1]"},
		}},
		{"append, top 1, no rank number", topNSpec(AppendFast, false, 1, 1), appendInput, [][]string{
			{"+I[a, x, 10]"},
			{"-U[a, x, 10]", "+U[a, y, 20]"},
			nil,
			nil,
			{"+I[b, q, 1]"},
		}},
		{"append, rank 2 to 3", topNSpec(AppendFast, true, 2, 3), appendInput, [][]string{
			nil,
			{"+I[a, x, 10, 2]"},
			{"-U[a, x, 10, 2]", "+U[a, z, 15, 2]", "+I[a, x, 10, 3]"},
			nil,
			nil,
		}},
		{"append, rank 2 to 3, no rank number", topNSpec(AppendFast, false, 2, 3), appendInput, [][]string{
			nil,
			{"+I[a, x, 10]"},
			{"-U[a, x, 10]", "+U[a, z, 15]", "+I[a, x, 10]"},
			nil,
			nil,
		}},
		{"retract, rank number", topNSpec(Retract, true, 1, 2), updating, [][]string{
			{"+I[a, x, 10, 1]"},
			{"+I[a, y, 5, 2]"},
			nil,
			{"-U[a, y, 5, 2]", "+U[a, z, 1, 2]"},
			{"-U[a, x, 10, 1]", "+U[a, y, 30, 1]", "-U[a, z, 1, 2]", "+U[a, x, 10, 2]"},
			{"-U[a, x, 10, 2]", "+U[a, z, 1, 2]"},
			{"-U[a, y, 30, 1]", "+U[a, z, 1, 1]", "-D[a, z, 1, 2]"},
		}},
		{"retract, no rank number", topNSpec(Retract, false, 1, 2), updating, [][]string{
			{"+I[a, x, 10]"},
			{"+I[a, y, 5]"},
			nil,
			{"-D[a, y, 5]", "+I[a, z, 1]"},
			{"-D[a, z, 1]", "+I[a, y, 30]"},
			{"-D[a, x, 10]", "+I[a, z, 1]"},
			{"-D[a, y, 30]"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := NewTopN(tc.spec)
			var out optest.Out
			for i, c := range tc.in {
				if err := op.Process(optest.Batch(c), &out); err != nil {
					t.Fatalf("change %d: %v", i, err)
				}
				if got := out.Take(); !slices.Equal(got, tc.want[i]) {
					t.Errorf("after %s: got %q, want %q", c, got, tc.want[i])
				}
			}
		})
	}
}

func TestTopNTies(t *testing.T) {
	// Equal sort keys keep arrival order: the later row ranks below, and a
	// tie with the last of a full top is not admitted (Flink's TopNBuffer).
	op := NewTopN(topNSpec(AppendFast, true, 1, 2))
	var out optest.Out
	for _, c := range []row.Change{optest.Ins("a", "x", 10), optest.Ins("a", "y", 10), optest.Ins("a", "z", 10)} {
		if err := op.Process(optest.Batch(c), &out); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"+I[a, x, 10, 1]", "+I[a, y, 10, 2]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if op.StateEntries() != 2 {
		t.Errorf("state entries = %d, want 2 (z never admitted)", op.StateEntries())
	}
}

func TestTopNNulls(t *testing.T) {
	for _, tc := range []struct {
		key  SortKey
		want string
	}{
		{SortKey{Col: 2, NullsFirst: true}, "+I[a, n, null, 1]"},
		{SortKey{Col: 2, Desc: true, NullsFirst: true}, "+I[a, n, null, 1]"},
		{SortKey{Col: 2, Desc: true}, "+I[a, x, 10, 1]"},
	} {
		spec := topNSpec(Retract, true, 1, 1)
		spec.Order = []SortKey{tc.key}
		op := NewTopN(spec)
		var out optest.Out
		if err := op.Process(optest.Batch(optest.Ins("a", "x", 10), optest.Ins("a", "n", nil)), &out); err != nil {
			t.Fatal(err)
		}
		// The rank-1 row after both inputs is the last +U, or the +I.
		lines := out.Take()
		got := lines[len(lines)-1]
		if got[0] == '+' && got[1] == 'U' {
			got = "+I" + got[2:]
		}
		if got != tc.want {
			t.Errorf("%+v: top row %s, want %s (changes %q)", tc.key, got, tc.want, lines)
		}
	}
}

func TestTopNBatchRanks(t *testing.T) {
	in := optest.Batch(optest.Ins("a", "x", 10), optest.Ins("a", "y", 10), optest.Ins("a", "z", 5), optest.Ins("a", "w", 1), optest.Ins("b", "q", 7))
	for _, tc := range []struct {
		kind RankKind
		want []string
	}{
		{RowNumber, []string{"+I[a, x, 10, 1]", "+I[a, y, 10, 2]", "+I[a, z, 5, 3]", "+I[b, q, 7, 1]"}},
		{Rank, []string{"+I[a, x, 10, 1]", "+I[a, y, 10, 1]", "+I[a, z, 5, 3]", "+I[b, q, 7, 1]"}},
		{DenseRank, []string{"+I[a, x, 10, 1]", "+I[a, y, 10, 1]", "+I[a, z, 5, 2]", "+I[a, w, 1, 3]", "+I[b, q, 7, 1]"}},
	} {
		spec := topNSpec(0, true, 1, 3)
		spec.Kind, spec.Batch = tc.kind, true
		op := NewTopN(spec)
		var out optest.Out
		if err := op.Process(in, &out); err != nil {
			t.Fatal(err)
		}
		if got := out.Take(); got != nil {
			t.Errorf("%s: emitted %q before the end", tc.kind, got)
		}
		if err := op.Finish(&out); err != nil {
			t.Fatal(err)
		}
		if got := out.Take(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.kind, got, tc.want)
		}
	}
}

// TestTopNRestore cuts a run at every change: a snapshot restored into a
// new operator must emit what the uninterrupted one does.
func TestTopNRestore(t *testing.T) {
	in := []row.Change{optest.Ins("a", "x", 10), optest.Ins("b", "x", 3), optest.Ins("a", "y", 5), optest.Ins("a", "z", 1), optest.UB("a", "y", 5), optest.UA("a", "y", 30), optest.Del("a", "x", 10), optest.Ins("b", "y", 4), optest.Del("a", "y", 30)}
	for _, strategy := range []RankStrategy{AppendFast, Retract} {
		changes := in
		if strategy == AppendFast {
			changes = nil
			for _, c := range in {
				if c.Kind == row.Insert {
					changes = append(changes, c)
				}
			}
		}
		run := func(op *TopN, cs []row.Change) []string {
			var out optest.Out
			for _, c := range cs {
				if err := op.Process(optest.Batch(c), &out); err != nil {
					t.Fatal(err)
				}
			}
			return out.Take()
		}
		whole := run(NewTopN(topNSpec(strategy, true, 1, 2)), changes)
		for cut := range changes {
			first := NewTopN(topNSpec(strategy, true, 1, 2))
			got := run(first, changes[:cut])
			snap, err := first.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			second := NewTopN(topNSpec(strategy, true, 1, 2))
			if err := second.Restore(snap); err != nil {
				t.Fatalf("%s cut %d: restore: %v", strategy, cut, err)
			}
			if second.StateEntries() != first.StateEntries() {
				t.Errorf("%s cut %d: restored %d entries, had %d", strategy, cut, second.StateEntries(), first.StateEntries())
			}
			got = append(got, run(second, changes[cut:])...)
			if !slices.Equal(got, whole) {
				t.Errorf("%s cut %d:\n got %q\nwant %q", strategy, cut, got, whole)
			}
		}
	}
	if err := NewTopN(topNSpec(Retract, true, 1, 2)).Restore([]byte{TopNStateVersion, 1, 1, 5}); err == nil {
		t.Error("a truncated snapshot restored without error")
	}
}

func TestTopNRefusesRetractionInAppendMode(t *testing.T) {
	op := NewTopN(topNSpec(AppendFast, true, 1, 2))
	if err := op.Process(optest.Batch(optest.Del("a", "x", 1)), &optest.Out{}); err == nil {
		t.Error("a -D into an insert-only Top-N was accepted")
	}
}

// TestTopNFloorChangesNothing runs random insert-only streams (ties,
// NULL sort values, INT and BIGINT columns) through an AppendFast top
// with its floor and through the same top without it (floorCol -1, every
// row compared against the partition's rows) and wants the same changes,
// state and snapshot.
func TestTopNFloorChangesNothing(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, desc := range []bool{false, true} {
		for _, end := range []int64{1, 3} {
			for _, rank := range []bool{false, true} {
				spec := topNSpec(AppendFast, rank, 1, end)
				spec.Order[0].Desc = desc
				fast, slow := NewTopN(spec), NewTopN(spec)
				if fast.floorCol != 2 {
					t.Fatalf("floor column %d, want 2", fast.floorCol)
				}
				slow.floorCol = -1
				var fo, so optest.Out
				for i := range 5000 {
					var v any = rnd.IntN(50)
					switch rnd.IntN(10) {
					case 0:
						v = nil
					case 1:
						v = int32(rnd.IntN(50))
					}
					c := optest.Ins(fmt.Sprint("p", rnd.IntN(20)), fmt.Sprint("r", i), v)
					if err := fast.Process(optest.Batch(c), &fo); err != nil {
						t.Fatal(err)
					}
					if err := slow.Process(optest.Batch(c), &so); err != nil {
						t.Fatal(err)
					}
					if f, s := fo.Take(), so.Take(); !slices.Equal(f, s) {
						t.Fatalf("desc=%v end=%d rank=%v: after %s: with the floor %q, without %q", desc, end, rank, c, f, s)
					}
				}
				fs, _ := fast.Snapshot()
				ss, _ := slow.Snapshot()
				if fast.StateEntries() != slow.StateEntries() || len(fs) != len(ss) {
					t.Errorf("desc=%v end=%d rank=%v: state %d (%d B) with the floor, %d (%d B) without", desc, end, rank, fast.StateEntries(), len(fs), slow.StateEntries(), len(ss))
				}
			}
		}
	}
}

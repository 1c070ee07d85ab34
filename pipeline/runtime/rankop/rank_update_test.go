package rankop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// updateFastSpec ranks [category, item, count] by count DESC per category;
// the upsert key is (category, item), as a GROUP BY category, item gives.
func updateFastSpec(outputRank bool, start, end int64) RankSpec {
	s := topNSpec(UpdateFast, outputRank, start, end)
	s.RowKey = []int{0, 1}
	return s
}

// countUpdate is the -U/+U pair of a COUNT going from old to new.
func countUpdate(cat, item string, old, new int) []row.Change {
	return []row.Change{optest.UB(cat, item, old), optest.UA(cat, item, new)}
}

func TestUpdatableTopNChangelog(t *testing.T) {
	// x, y and z tie at 1 (z is not admitted: the top is full), y moves up
	// past x, z enters and pushes x out, x moves up from below the top and
	// re-enters at rank 1.
	steps := [][]row.Change{
		{optest.Ins("a", "x", 1)}, {optest.Ins("a", "y", 1)}, {optest.Ins("a", "z", 1)},
		countUpdate("a", "y", 1, 2), countUpdate("a", "z", 1, 2), countUpdate("a", "x", 1, 3),
		{optest.Ins("b", "q", 7)},
	}
	tests := []struct {
		name string
		spec RankSpec
		want [][]string
	}{
		{"rank number", updateFastSpec(true, 1, 2), [][]string{
			{"+I[a, x, 1, 1]"},
			{"+I[a, y, 1, 2]"},
			nil,
			{"-U[a, x, 1, 1]", "-U[a, y, 1, 2]", "+U[a, y, 2, 1]", "+U[a, x, 1, 2]"},
			{"-U[a, x, 1, 2]", "+U[a, z, 2, 2]"},
			// x was still kept below the top (the walk stopped in its group).
			{"-U[a, y, 2, 1]", "+U[a, x, 3, 1]", "-U[a, z, 2, 2]", "+U[a, y, 2, 2]"},
			{"+I[b, q, 7, 1]"},
		}},
		{"no rank number", updateFastSpec(false, 1, 2), [][]string{
			{"+I[a, x, 1]"},
			{"+I[a, y, 1]"},
			nil,
			{"-U[a, y, 1]", "+U[a, y, 2]"},
			{"-D[a, x, 1]", "+I[a, z, 2]"},
			{"-D[a, z, 2]", "+I[a, x, 3]"},
			{"+I[b, q, 7]"},
		}},
		{"rank 2 to 3", updateFastSpec(true, 2, 3), [][]string{
			nil,
			{"+I[a, y, 1, 2]"},
			{"+I[a, z, 1, 3]"},
			{"-U[a, y, 1, 2]", "+U[a, x, 1, 2]"},
			{"-U[a, x, 1, 2]", "-U[a, z, 1, 3]", "+U[a, z, 2, 2]", "+U[a, x, 1, 3]"},
			{"-U[a, x, 1, 3]", "-U[a, z, 2, 2]", "+U[a, y, 2, 2]", "+U[a, z, 2, 3]"},
			nil,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := optest.Must(NewUpdatableTopN(tc.spec))
			var out optest.Out
			for i, cs := range steps {
				if err := op.Process(optest.Batch(cs...), &out); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got := out.Take(); !slices.Equal(got, tc.want[i]) {
					t.Errorf("step %d %v: got %q, want %q", i, cs, got, tc.want[i])
				}
			}
		})
	}
}

// TestUpdatableTopNUpdateInPlace: a row whose sort key does not change
// (another column does) is re-emitted at its rank.
func TestUpdatableTopNUpdateInPlace(t *testing.T) {
	spec := updateFastSpec(true, 1, 2)
	spec.Order = []SortKey{{Col: 1}} // ORDER BY item, a group key
	op := optest.Must(NewUpdatableTopN(spec))
	var out optest.Out
	for _, cs := range [][]row.Change{{optest.Ins("a", "x", 1)}, {optest.Ins("a", "y", 1)}, countUpdate("a", "y", 1, 2)} {
		if err := op.Process(optest.Batch(cs...), &out); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"+I[a, x, 1, 1]", "+I[a, y, 1, 2]", "-U[a, y, 1, 2]", "+U[a, y, 2, 2]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestUpdatableTopNRefuses(t *testing.T) {
	op := optest.Must(NewUpdatableTopN(updateFastSpec(true, 1, 2)))
	if err := op.Process(optest.Batch(optest.Del("a", "x", 1)), &optest.Out{}); err == nil {
		t.Error("a -D was accepted")
	}
	op = optest.Must(NewUpdatableTopN(updateFastSpec(true, 1, 2)))
	if err := op.Process(optest.Batch(optest.Ins("a", "x", 5), optest.UA("a", "x", 3)), &optest.Out{}); err == nil {
		t.Error("a sort key moving down was accepted")
	}
}

// TestUpdatableTopNRefusesSpec: a spec the strategy gives wrong results
// for is refused when the operator is built.
func TestUpdatableTopNRefusesSpec(t *testing.T) {
	batch, rank, key := updateFastSpec(true, 1, 2), updateFastSpec(true, 1, 2), updateFastSpec(true, 1, 2)
	batch.Batch = true
	rank.Kind = Rank
	key.RowKey = []int{1}
	for _, tc := range []struct {
		spec RankSpec
		want string
	}{
		{batch, "a batch input"},
		{rank, "RANK, want ROW_NUMBER"},
		{key, "partition column 0 is not in the upsert key [1]"},
	} {
		if _, err := NewUpdatableTopN(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewUpdatableTopN(%+v) = %v, want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

// fold applies a changelog to a multiset of rows.
func fold(state map[string]int, cs []row.Change) {
	for _, c := range cs {
		k := fmt.Sprint(c.Row)
		if c.Kind.IsAdd() {
			state[k]++
		} else if state[k]--; state[k] == 0 {
			delete(state, k)
		}
	}
}

func keysOf(m map[string]int) []string {
	var out []string
	for k, n := range m {
		for range n {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// countChanges is a GROUP BY cat, item COUNT(*)'s changelog over n random
// rows: +I of a new group, -U/+U as its count grows, one batch each.
func countChanges(rng *rand.Rand, n, cats, items int) [][]row.Change {
	counts := map[[2]int]int{}
	var out [][]row.Change
	for range n {
		k := [2]int{rng.IntN(cats), rng.IntN(items)}
		cat, item := fmt.Sprint("c", k[0]), fmt.Sprint("i", k[1])
		c := counts[k]
		counts[k] = c + 1
		if c == 0 {
			out = append(out, []row.Change{optest.Ins(cat, item, 1)})
		} else {
			out = append(out, countUpdate(cat, item, c, c+1))
		}
	}
	return out
}

// TestUpdatableTopNFoldsLikeRetract: over random COUNT changelogs, the
// folded output of UpdateFast equals RetractStrategy's after every input
// change, with and without the rank number and with an offset range.
func TestUpdatableTopNFoldsLikeRetract(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 16))
	for _, r := range []struct {
		outputRank bool
		start, end int64
	}{{true, 1, 3}, {false, 1, 3}, {true, 2, 4}, {false, 1, 1}, {true, 1, 1}} {
		for round := range 20 {
			steps := countChanges(rng, 200, 2, 8)
			fast := optest.Must(NewUpdatableTopN(updateFastSpec(r.outputRank, r.start, r.end)))
			retract := NewTopN(topNSpec(Retract, r.outputRank, r.start, r.end))
			gotState, wantState := map[string]int{}, map[string]int{}
			for i, cs := range steps {
				var a, b optest.Out
				if err := fast.Process(optest.Batch(cs...), &a); err != nil {
					t.Fatal(err)
				}
				if err := retract.Process(optest.Batch(cs...), &b); err != nil {
					t.Fatal(err)
				}
				fold(gotState, a.Changes())
				fold(wantState, b.Changes())
				if got, want := keysOf(gotState), keysOf(wantState); !slices.Equal(got, want) {
					t.Fatalf("%+v round %d step %d %v:\n got %q\nwant %q", r, round, i, cs, got, want)
				}
			}
			if fast.StateEntries() > retract.StateEntries() {
				t.Errorf("%+v: UpdateFast keeps %d rows, Retract %d", r, fast.StateEntries(), retract.StateEntries())
			}
		}
	}
}

// TestUpdatableTopNRestore cuts a run at every change: a snapshot restored
// into a new operator must emit what the uninterrupted one does.
func TestUpdatableTopNRestore(t *testing.T) {
	steps := countChanges(rand.New(rand.NewPCG(1, 2)), 60, 2, 5)
	for _, outputRank := range []bool{true, false} {
		run := func(op *UpdatableTopN, steps [][]row.Change) []string {
			var out optest.Out
			for _, cs := range steps {
				if err := op.Process(optest.Batch(cs...), &out); err != nil {
					t.Fatal(err)
				}
			}
			return out.Take()
		}
		whole := run(optest.Must(NewUpdatableTopN(updateFastSpec(outputRank, 1, 2))), steps)
		for cut := range steps {
			first := optest.Must(NewUpdatableTopN(updateFastSpec(outputRank, 1, 2)))
			got := run(first, steps[:cut])
			snap, err := first.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			second := optest.Must(NewUpdatableTopN(updateFastSpec(outputRank, 1, 2)))
			if err := second.Restore(snap); err != nil {
				t.Fatalf("cut %d: restore: %v", cut, err)
			}
			if second.StateEntries() != first.StateEntries() {
				t.Errorf("cut %d: restored %d entries, had %d", cut, second.StateEntries(), first.StateEntries())
			}
			got = append(got, run(second, steps[cut:])...)
			if !slices.Equal(got, whole) {
				t.Fatalf("rank %v cut %d:\n got %q\nwant %q", outputRank, cut, got, whole)
			}
		}
	}
	if err := optest.Must(NewUpdatableTopN(updateFastSpec(true, 1, 2))).Restore([]byte{updatableTopNStateVersion, 1, 1, 5}); err == nil {
		t.Error("a truncated snapshot restored without error")
	}
}

package joinop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

type sideChange struct {
	side int
	c    row.Change
}

// joinStream makes n changes on random sides over keys 0..3 and NULL; a
// third of them retract a live row of their side.
func joinStream(seed uint64, n int) []sideChange {
	rng := rand.New(rand.NewPCG(seed, 7))
	var live [2][]row.Row
	var out []sideChange
	for i := range n {
		side := rng.IntN(2)
		if len(live[side]) > 0 && rng.IntN(3) == 0 {
			j := rng.IntN(len(live[side]))
			r := live[side][j]
			live[side] = slices.Delete(live[side], j, j+1)
			out = append(out, sideChange{side, row.Change{Kind: row.Delete, Row: r}})
			continue
		}
		k := row.BigIntValue(int64(rng.IntN(4)))
		if rng.IntN(8) == 0 {
			k = row.NullValue
		}
		r := row.Row{k, row.BigIntValue(int64(i % 3))}
		live[side] = append(live[side], r)
		out = append(out, sideChange{side, row.Change{Kind: row.Insert, Row: r}})
	}
	return out
}

// modelJoin computes the join of the final multisets directly; the
// residual is l.v <= r.v.
func modelJoin(kind JoinKind, stream []sideChange) []string {
	var sides [2][]row.Row
	for _, s := range stream {
		if s.c.Kind.IsAdd() {
			sides[s.side] = append(sides[s.side], s.c.Row)
			continue
		}
		i := slices.IndexFunc(sides[s.side], func(r row.Row) bool { return slices.EqualFunc(r, s.c.Row, row.Equal) })
		sides[s.side] = slices.Delete(sides[s.side], i, i+1)
	}
	match := func(l, r row.Row) bool {
		return !l[0].IsNull() && !r[0].IsNull() && l[0].Int64() == r[0].Int64() && l[1].Int64() <= r[1].Int64()
	}
	text := func(r row.Row) string { return row.Change{Kind: row.Insert, Row: r}.String()[2:] }
	null2 := row.Row{row.NullValue, row.NullValue}
	var out []string
	matchedR := make([]bool, len(sides[1]))
	for _, l := range sides[0] {
		n := 0
		for j, r := range sides[1] {
			if match(l, r) {
				n++
				matchedR[j] = true
				if kind != SemiJoin && kind != AntiJoin {
					out = append(out, text(append(slices.Clone(l), r...)))
				}
			}
		}
		switch {
		case kind == SemiJoin && n > 0, kind == AntiJoin && n == 0:
			out = append(out, text(l))
		case n == 0 && (kind == LeftJoin || kind == FullJoin):
			out = append(out, text(append(slices.Clone(l), null2...)))
		}
	}
	if kind == RightJoin || kind == FullJoin {
		for j, r := range sides[1] {
			if !matchedR[j] {
				out = append(out, text(append(slices.Clone(null2), r...)))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestJoinModelAndRestore checks every join kind against the join of the
// final inputs computed directly, and cuts the run at many points: the
// operator is snapshotted and a new one restored from it goes on; the
// output must be the same changes as the uninterrupted run's.
func TestJoinModelAndRestore(t *testing.T) {
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin, SemiJoin, AntiJoin} {
		for seed := range uint64(5) {
			t.Run(fmt.Sprintf("%s/%d", kind, seed), func(t *testing.T) {
				stream := joinStream(seed, 300)
				spec := joinSpec2(kind)
				spec.Residual = func(r row.Row) (bool, error) { return r[1].Int64() <= r[3].Int64(), nil }
				run := func(cutEvery int) []string { return runJoinStream(t, spec, stream, cutEvery) }
				whole := run(0)
				if got, want := optest.FoldChanges(t, whole), modelJoin(kind, stream); !slices.Equal(got, want) {
					t.Fatalf("final table differs from the model:\n got %q\nwant %q", got, want)
				}
				if cut := optest.FoldChanges(t, run(7)); !slices.Equal(cut, optest.FoldChanges(t, whole)) {
					t.Errorf("a run restored every 7 changes ends with another table")
				}
			})
		}
	}
}

// TestJoinAppendOnlySides runs insert-only streams with duplicate rows
// through every join kind with the sides marked append-only (rows stored
// without an identity) and not, and wants the same changes (as a
// multiset), the model's final table, and the same table after restores.
func TestJoinAppendOnlySides(t *testing.T) {
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin, SemiJoin, AntiJoin} {
		for seed := range uint64(3) {
			var stream []sideChange
			for _, s := range joinStream(seed, 400) {
				if s.c.Kind == row.Insert {
					stream = append(stream, s)
				}
			}
			run := func(appendOnly bool, cutEvery int, types []row.TypeID) []string {
				spec := joinSpec2(kind)
				spec.Residual = func(r row.Row) (bool, error) { return r[1].Int64() <= r[3].Int64(), nil }
				spec.LeftAppendOnly, spec.RightAppendOnly = appendOnly, appendOnly
				spec.LeftTypes, spec.RightTypes = types, types
				return runJoinStream(t, spec, stream, cutEvery)
			}
			name := fmt.Sprintf("%s/%d", kind, seed)
			keyed, flat := run(false, 0, nil), run(true, 0, nil)
			// The sides store rows by the columns' types (row.Layout),
			// or by other types than the values' (the tagged fallback):
			// the same changes either way.
			for _, types := range [][]row.TypeID{{row.BigInt, row.BigInt}, {row.String, row.Int}} {
				if seed > 0 {
					break // one seed is enough here: the layout does not change what is joined
				}
				if got := run(true, 0, types); !slices.Equal(got, flat) {
					t.Errorf("%s: sides of types %v emit other changes:\n got %q\nwant %q", name, types, got, flat)
				}
				if got := run(true, 5, types); !slices.Equal(optest.FoldChanges(t, got), optest.FoldChanges(t, flat)) {
					t.Errorf("%s: sides of types %v restored every 5 changes end with another table", name, types)
				}
			}
			if got, want := optest.FoldChanges(t, flat), modelJoin(kind, stream); !slices.Equal(got, want) {
				t.Fatalf("%s: append-only sides end with another table than the model:\n got %q\nwant %q", name, got, want)
			}
			slices.Sort(keyed)
			slices.Sort(flat)
			if !slices.Equal(keyed, flat) {
				t.Errorf("%s: append-only sides emit other changes:\n got %q\nwant %q", name, flat, keyed)
			}
			if cut := optest.FoldChanges(t, run(true, 7, nil)); !slices.Equal(cut, optest.FoldChanges(t, flat)) {
				t.Errorf("%s: append-only sides restored every 7 changes end with another table", name)
			}
		}
	}
}

// runJoinStream feeds stream to a join of spec and returns its changes;
// with cutEvery > 0 the join is snapshotted every cutEvery changes and
// replaced by one restored from the snapshot.
func runJoinStream(t *testing.T, spec JoinSpec, stream []sideChange, cutEvery int) []string {
	t.Helper()
	j := NewJoin(spec)
	var c joinCollector
	for i, s := range stream {
		if cutEvery > 0 && i%cutEvery == 0 {
			state, err := j.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			j = NewJoin(spec)
			if err := j.Restore(state); err != nil {
				t.Fatalf("restore at %d: %v", i, err)
			}
		}
		if err := j.ProcessInput(s.side, &row.Batch{Changes: []row.Change{s.c}}, &c); err != nil {
			t.Fatal(err)
		}
	}
	return c.got
}

package joinop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// outputStream makes n changes on random sides of rows (key, v, s) over
// keys 0..3 and NULL; with retract, a third of them take back a live
// row of their side, as a -D or as a -U followed by its +U.
func outputStream(seed uint64, n int, retract bool) []sideChange {
	rng := rand.New(rand.NewPCG(seed, 34))
	var live [2][]row.Row
	var out []sideChange
	mk := func(i int) row.Row {
		k := row.BigIntValue(int64(rng.IntN(4)))
		if rng.IntN(8) == 0 {
			k = row.NullValue
		}
		return row.Row{k, row.BigIntValue(int64(i % 3)), row.StringValue(fmt.Sprintf("s%d", i%5))}
	}
	for i := range n {
		side := rng.IntN(2)
		if retract && len(live[side]) > 0 && rng.IntN(3) == 0 {
			j := rng.IntN(len(live[side]))
			r := live[side][j]
			if rng.IntN(2) == 0 {
				live[side] = slices.Delete(live[side], j, j+1)
				out = append(out, sideChange{side, row.Change{Kind: row.Delete, Row: r}})
				continue
			}
			after := mk(i)
			after[0] = r[0] // an update of the same key, as an upsert sends it
			live[side][j] = after
			out = append(out, sideChange{side, row.Change{Kind: row.UpdateBefore, Row: r}},
				sideChange{side, row.Change{Kind: row.UpdateAfter, Row: after}})
			continue
		}
		r := mk(i)
		live[side] = append(live[side], r)
		out = append(out, sideChange{side, row.Change{Kind: row.Insert, Row: r}})
	}
	return out
}

// TestJoinOutputStreaming runs random streams, insert-only and with
// retractions (-D, -U/+U) on both sides, through streaming joins of each
// kind that emit some columns only (JoinSpec.Output), with and without a
// residual, and wants exactly the changes of the join that emits whole
// rows, projected afterwards: the same kinds in the same order, each
// retraction with the columns of the row it takes back. Their state is
// the same (a checkpoint of either restores into the other), and runs
// restored every 7 changes end with the same table.
func TestJoinOutputStreaming(t *testing.T) {
	outputs := [][]int{
		{5, 0, 2, 3},       // right's string, left key and string, right key
		{4, 4, 1},          // a column twice
		{0, 1, 2, 3, 4, 5}, // every column, in order
		{3},                // the right side's key alone
	}
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin} {
		for seed := range uint64(8) {
			retract, residual, appendOnly := seed%2 == 0, seed%4 < 2, seed%3 == 1
			if retract {
				appendOnly = false
			}
			output := outputs[seed%uint64(len(outputs))]
			name := fmt.Sprintf("%s/retract=%v/residual=%v/appendOnly=%v/%d", kind, retract, residual, appendOnly, seed)
			t.Run(name, func(t *testing.T) {
				stream := outputStream(seed, 400, retract)
				spec := JoinSpec{Kind: kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
					LeftAppendOnly: appendOnly, RightAppendOnly: appendOnly}
				if appendOnly && seed%2 == 1 {
					types := []row.TypeID{row.BigInt, row.BigInt, row.String}
					spec.LeftTypes, spec.RightTypes = types, types
				}
				if residual {
					spec.Residual = func(r row.Row) (bool, error) { return r[1].Int64() <= r[4].Int64(), nil }
				}
				whole := NewJoin(spec)
				spec.Output = output
				picked := NewJoin(spec)
				want := projectCollector{cols: output}
				var got joinCollector
				for i, s := range stream {
					b := &row.Batch{Changes: []row.Change{s.c}}
					if err := whole.ProcessInput(s.side, b, &want); err != nil {
						t.Fatal(err)
					}
					if err := picked.ProcessInput(s.side, b, &got); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got.got, want.got) {
						t.Fatalf("after change %d (%s on side %d) the changes differ:\n got %q\nwant %q", i, s.c, s.side, got.got, want.got)
					}
				}
				if len(got.got) == 0 {
					t.Fatal("the join emitted nothing: the stream tests nothing")
				}
				// The state is the inputs' rows either way: a checkpoint
				// written without the projection restores with it.
				a, err := whole.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				b, err := picked.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a, b) {
					t.Fatal("a join that emits some columns keeps another state")
				}
				restored := NewJoin(spec)
				if err := restored.Restore(a); err != nil {
					t.Fatal(err)
				}
				more := outputStream(seed+100, 100, retract)
				first := want.got
				got.got, want.got = nil, nil
				for _, s := range more {
					b := &row.Batch{Changes: []row.Change{s.c}}
					if err := whole.ProcessInput(s.side, b, &want); err != nil {
						t.Fatal(err)
					}
					if err := restored.ProcessInput(s.side, b, &got); err != nil {
						t.Fatal(err)
					}
				}
				if !slices.Equal(got.got, want.got) {
					t.Fatalf("restored from the whole rows' checkpoint, the changes differ:\n got %q\nwant %q", got.got, want.got)
				}
				cut := optest.FoldChanges(t, runJoinStream(t, spec, stream, 7))
				if w := optest.FoldChanges(t, first); !slices.Equal(cut, w) {
					t.Errorf("restored every 7 changes, it ends with another table:\n got %q\nwant %q", cut, w)
				}
			})
		}
	}
}

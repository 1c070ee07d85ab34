package joinop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// ijSelfSteps is a self-join's input: batches of rows, each given to
// both inputs, over a few keys (NULL among them, NULL times too), every
// time past the watermark, which rises between batches.
func ijSelfSteps(rng *rand.Rand, n int) (batches [][]row.Row, wms []int64) {
	keys := []any{1, 2, 3, 4, nil}
	wm := int64(0)
	for i := 0; i < n; {
		var b []row.Row
		for range 1 + rng.IntN(6) {
			at := wm + 1 + rng.Int64N(20)
			if rng.IntN(15) == 0 {
				at = -1 // NULL time
			}
			b = append(b, ijRowOf(keys[rng.IntN(len(keys))], at, fmt.Sprint(i)))
			i++
		}
		wm += rng.Int64N(8)
		batches, wms = append(batches, b), append(wms, wm)
	}
	return append(batches, nil), append(wms, operator.MaxWatermark)
}

// TestIntervalJoinSameInputs: a self-join told its inputs are one
// (SetSameInputs) adds each row to both sides as it comes on the left
// and passes over the right input's batches; with every row in time
// it emits the rows the join does that adds a batch on the left, then
// on the right, after each batch and watermark, for every kind, bounds
// of both signs but a lower bound above 0 (there a left row too late
// to be cached meets the rows on the right before it in its batch, which
// the other order missed: both are orders Flink's join may see), and
// typed keys or not.
// Its state is each side's as the other's: restored into a join that is
// not told, both go on emitting the same rows; and restored, it is
// still told.
func TestIntervalJoinSameInputs(t *testing.T) {
	r0 := ijRowOf(1, 0, "a")
	types := []row.TypeID{r0[0].Type(), r0[1].Type(), r0[2].Type()}
	for seed := range uint64(24) {
		rng := rand.New(rand.NewPCG(seed, 11))
		kind := []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin}[seed%4]
		b := [][2]int64{{-10, 5}, {-10, -2}, {0, 0}}[seed/4%3]
		spec := ijSpec(kind)
		spec.Lower, spec.Upper = b[0], b[1]
		if seed/12 == 1 {
			spec.LeftTypes, spec.RightTypes = types, types
		}
		batches, wms := ijSelfSteps(rng, 300)
		ref, same := NewIntervalJoin(spec), NewIntervalJoin(spec)
		same.SetSameInputs()
		if !same.same {
			t.Fatal("SetSameInputs did not take")
		}
		total := 0
		for i := range batches {
			if i == len(batches)/2 {
				snap, err := same.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				same, ref = NewIntervalJoin(spec), NewIntervalJoin(spec)
				same.SetSameInputs()
				for _, j := range []*IntervalJoin{same, ref} {
					if err := j.Restore(snap); err != nil {
						t.Fatal(err)
					}
				}
				if !same.same || ref.same {
					t.Fatalf("seed %d: a restore changed whether the inputs are one", seed)
				}
			}
			var want, got temporalCollector
			batch := &row.Batch{}
			for _, r := range batches[i] {
				batch.Changes = append(batch.Changes, row.Change{Kind: row.Insert, Row: r})
			}
			for input := range 2 {
				if err := ref.ProcessInput(input, batch, &want); err != nil {
					t.Fatal(err)
				}
				if err := same.ProcessInput(input, batch, &got); err != nil {
					t.Fatal(err)
				}
			}
			if err := ref.Watermark(wms[i], &want); err != nil {
				t.Fatal(err)
			}
			if err := same.Watermark(wms[i], &got); err != nil {
				t.Fatal(err)
			}
			slices.Sort(want.got)
			slices.Sort(got.got)
			if !slices.Equal(got.got, want.got) {
				t.Fatalf("seed %d (kind %v, bounds %v) batch %d: got %q, want %q", seed, kind, b, i, got.got, want.got)
			}
			if same.StateEntries() != ref.StateEntries() {
				t.Fatalf("seed %d batch %d: %d rows held, want %d", seed, i, same.StateEntries(), ref.StateEntries())
			}
			total += len(got.got)
		}
		if total == 0 {
			t.Fatalf("seed %d: nothing emitted", seed)
		}
	}
}

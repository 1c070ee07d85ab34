package joinop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// rowsCollector keeps the rows emitted, in order, printed.
type rowsCollector struct{ got []string }

func (c *rowsCollector) Emit(k row.Kind, r row.Row) { c.got = append(c.got, k.String()+fmt.Sprint(r)) }

// ijRandomSteps is a random stream of rows over a few keys (NULL among
// them), times around a rising watermark, late ones among them.
func ijRandomSteps(rng *rand.Rand, n int) []ijStep {
	keys := []any{1, 2, 3, 4, nil}
	var s []ijStep
	wm := int64(0)
	for i := range n {
		if rng.IntN(6) == 0 {
			wm += rng.Int64N(12)
			s = append(s, ijWM(wm))
			continue
		}
		at := wm + rng.Int64N(30) - 8
		if rng.IntN(15) == 0 {
			at = -1 // NULL time
		}
		s = append(s, ijStep{side: rng.IntN(2), key: keys[rng.IntN(len(keys))], at: at, val: fmt.Sprint(i)})
	}
	return append(s, ijWM(operator.MaxWatermark))
}

func runRaw(t *testing.T, j *IntervalJoin, s ijStep) []string {
	t.Helper()
	var c rowsCollector
	if err := applyIJ(j, s, &c); err != nil {
		t.Fatal(err)
	}
	return c.got
}

// TestIntervalJoinOutputAndTypedKeys holds joins that project their
// output (Output, with and without a residual) and take their typed
// integer keys by value to the plain join (no types, no projection),
// projected: the same rows at each step, for every kind, bounds of
// both signs, late rows and NULL keys and times, through a restore from
// a snapshot halfway, whose bytes are the plain join's. The outputs
// pick columns past the time (a cached row's picked columns too long for
// its head), the keys alone (every row's in its head: heads says which
// side's rows must have had one) and one of each.
func TestIntervalJoinOutputAndTypedKeys(t *testing.T) {
	for _, c := range []struct {
		out   []int
		heads [2]bool
	}{
		{[]int{5, 0, 2, 4}, [2]bool{false, false}},
		{[]int{0, 3}, [2]bool{true, true}},
		{[]int{3, 3}, [2]bool{false, true}},
		{[]int{2, 3}, [2]bool{false, true}},
	} {
		t.Run(fmt.Sprint(c.out), func(t *testing.T) { testIJOutput(t, c.out, c.heads) })
	}
}

func testIJOutput(t *testing.T, out []int, wantHeads [2]bool) {
	r0 := ijRowOf(1, 0, "a")
	types := []row.TypeID{r0[0].Type(), r0[1].Type(), r0[2].Type()}
	bounds := [][2]int64{{-10, 5}, {-10, -2}, {3, 12}, {0, 0}}
	var heads [2]int
	for seed := range uint64(24) {
		rng := rand.New(rand.NewPCG(seed, 7))
		kind := []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin}[seed%4]
		b := bounds[seed/4%4]
		residual := seed/16 == 1
		plain := ijSpec(kind)
		plain.Lower, plain.Upper = b[0], b[1]
		if residual {
			// The values' last digits differ: rejects some pairs.
			plain.Residual = func(r row.Row) (bool, error) {
				if r[2].IsNull() || r[5].IsNull() {
					return true, nil
				}
				a, b := r[2].Str(), r[5].Str()
				return a[len(a)-1] != b[len(b)-1], nil
			}
		}
		fancy := plain
		fancy.LeftTypes, fancy.RightTypes, fancy.Output = types, types, out
		steps := ijRandomSteps(rng, 400)
		ref, j := NewIntervalJoin(plain), NewIntervalJoin(fancy)
		total := 0
		for i, s := range steps {
			if i == len(steps)/2 {
				a, err := ref.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				b, err := j.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(a, b) {
					t.Fatalf("seed %d: snapshots differ", seed)
				}
				j = NewIntervalJoin(fancy)
				if err := j.Restore(b); err != nil {
					t.Fatal(err)
				}
			}
			for side := range 2 {
				for _, e := range j.sides[side].ents {
					if e.hasHead {
						heads[side]++
					}
				}
			}
			var c rowsCollector
			for _, full := range runRawRows(t, ref, s) {
				p := make(row.Row, len(out))
				for k, col := range out {
					p[k] = full[col]
				}
				c.Emit(row.Insert, p)
			}
			// One step's rows in any order: a key's cache is Flink's map
			// of times, and a restore lays it out by time.
			got := runRaw(t, j, s)
			slices.Sort(got)
			slices.Sort(c.got)
			if !slices.Equal(got, c.got) {
				t.Fatalf("seed %d (kind %v, bounds %v, residual %v) step %d %+v: got %q, want %q", seed, kind, b, residual, i, s, got, c.got)
			}
			total += len(got)
		}
		if total == 0 {
			t.Fatalf("seed %d: nothing emitted", seed)
		}
		if j.StateEntries() != 0 || ref.StateEntries() != 0 {
			t.Fatalf("seed %d: state left after the last watermark: %d, %d", seed, j.StateEntries(), ref.StateEntries())
		}
	}
	for side := range 2 {
		if (heads[side] > 0) != wantHeads[side] {
			t.Errorf("side %d: %d rows cached with a head, want any: %v", side, heads[side], wantHeads[side])
		}
	}
}

// rowsKeeper keeps the rows emitted, copied.
type rowsKeeper struct{ rows []row.Row }

func (c *rowsKeeper) Emit(_ row.Kind, r row.Row) { c.rows = append(c.rows, slices.Clone(r)) }

func runRawRows(t *testing.T, j *IntervalJoin, s ijStep) []row.Row {
	t.Helper()
	var c rowsKeeper
	if err := applyIJ(j, s, &c); err != nil {
		t.Fatal(err)
	}
	return c.rows
}

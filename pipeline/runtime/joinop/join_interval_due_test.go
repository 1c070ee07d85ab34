package joinop

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestIntervalJoinWatermarkFiresDueAhead: Watermark takes every timer
// due before it fires the first (touchDue reads their keys' rows
// ahead), which holds only if firing one sets none that is due: after
// each watermark no timer at or before it is left, for every kind and
// bounds of both signs, and the timers' keys' rows were read ahead.
func TestIntervalJoinWatermarkFiresDueAhead(t *testing.T) {
	for _, b := range [][2]int64{{-10, 5}, {-10, -2}, {3, 12}, {0, 0}} {
		for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin} {
			spec := ijSpec(kind)
			spec.Lower, spec.Upper = b[0], b[1]
			// No types: the key is not an integer one, add reads nothing
			// ahead (touch), so touched counts touchDue's reads alone.
			j := NewIntervalJoin(spec)
			rng := rand.New(rand.NewPCG(uint64(b[0]+100), uint64(kind)))
			for _, s := range ijRandomSteps(rng, 400) {
				runRaw(t, j, s)
				if s.side >= 0 {
					continue
				}
				for side := range 2 {
					if j.timers[side].Len() > 0 && j.timers[side].Top() <= s.at {
						t.Fatalf("bounds %v kind %v: a timer at %d left after the watermark %d", b, kind, j.timers[side].Top(), s.at)
					}
				}
			}
			if j.touched == 0 {
				t.Errorf("bounds %v kind %v: no cached row read ahead", b, kind)
			}
		}
	}
}

// TestAheadOf: over a batch of any length every item is read ahead once,
// and but the first block's, each at least touchAhead-touchStep items
// before it is used (reading whole blocks at their first item read the
// first items of each block just before their use).
func TestAheadOf(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 31, 32, 33, 100, 1024} {
		readAt := make([]int, n)
		for i := range readAt {
			readAt[i] = -1
		}
		for i := range n {
			a, b, ok := aheadOf(i, n)
			if !ok {
				continue
			}
			for k := a; k < b; k++ {
				if readAt[k] >= 0 {
					t.Fatalf("n %d: item %d read at %d and %d", n, k, readAt[k], i)
				}
				readAt[k] = i
			}
		}
		for k, at := range readAt {
			switch {
			case at < 0:
				t.Fatalf("n %d: item %d never read ahead", n, k)
			case k >= touchAhead && k-at < touchAhead-touchStep:
				t.Fatalf("n %d: item %d read at %d, %d before its use", n, k, at, k-at)
			}
		}
	}
}

// countEmitter counts the rows emitted, keeping none.
type countEmitter struct{ n int }

func (c *countEmitter) Emit(row.Kind, row.Row) { c.n++ }

// TestIntervalJoinHeadMatchAllocates: a match that decodes the cached
// row's emitted columns from its head allocates nothing (a buffer on
// the stack escaped: an allocation a match); the output rows' slabs
// are a few allocations per arrival of 200 matches.
func TestIntervalJoinHeadMatchAllocates(t *testing.T) {
	r0 := ijRowOf(1, 0, "a")
	types := []row.TypeID{r0[0].Type(), r0[1].Type(), r0[2].Type()}
	spec := ijSpec(InnerJoin)
	spec.LeftTypes, spec.RightTypes, spec.Output = types, types, []int{0, 3}
	j := NewIntervalJoin(spec)
	var c countEmitter
	for i := range 200 {
		if err := j.ProcessInput(0, ijBatch(ijRowOf(1, 0, fmt.Sprint(i))), &c); err != nil {
			t.Fatal(err)
		}
	}
	b := ijBatch(ijRowOf(1, 0, "r"))
	allocs := testing.AllocsPerRun(20, func() {
		if err := j.ProcessInput(1, b, &c); err != nil {
			t.Fatal(err)
		}
	})
	if c.n < 20*200 {
		t.Fatalf("%d rows emitted, want at least %d", c.n, 20*200)
	}
	if allocs > 20 {
		t.Fatalf("%.0f allocations an arrival of 200 matches", allocs)
	}
}

package runtime

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// TestSparseCuts: the cuts of a batch from the rows behind the watermark
// of the rows before them (fusedOrigin.sparse, what timedBatch keeps)
// are those of every row's time and watermark before it, whatever the
// watermark before the batch, for rows in order, out of order by less
// than the watermark's delay and by more.
func TestSparseCuts(t *testing.T) {
	// fusedCuts reads only whether the rows carry their time.
	exact := &SourceNode{RowTime: func(row.Row) int64 { return 0 }}
	cuts := 0
	for _, tc := range []struct {
		name          string
		jitter, delay int64
	}{{"in order", 0, 10}, {"out of order within the delay", 8, 10}, {"out of order past the delay", 40, 10}, {"no delay", 5, 0}} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.jitter)))
		for round := range 200 {
			n := 1 + rng.IntN(50)
			var before, times []int64
			var behind []wmBehind
			wm := operator.NoWatermark
			for j := range n {
				rt := int64(j*3) - rng.Int64N(tc.jitter+1)
				before, times = append(before, wm), append(times, rt)
				if rt <= wm {
					behind = append(behind, wmBehind{at: int32(j), wm: wm})
				}
				wm = max(wm, rt-tc.delay)
			}
			for _, wm0 := range []int64{operator.NoWatermark, -5, int64(rng.IntN(3 * n)), int64(4 * n)} {
				wantCuts, wantNext := exact.fusedCuts(&fusedOrigin{before: before, rowTimes: times, wm: wm}, n, wm0)
				got, next := exact.fusedCuts(&fusedOrigin{sparse: true, behind: behind, wm: wm}, n, wm0)
				if fmt.Sprint(got) != fmt.Sprint(wantCuts) || next != wantNext {
					t.Fatalf("%s, round %d, watermark %d before: cuts %v then %d; want %v then %d (times %v)",
						tc.name, round, wm0, got, next, wantCuts, wantNext, times)
				}
				cuts += len(got)
			}
		}
	}
	if cuts == 0 {
		t.Fatal("no batch was cut")
	}
}

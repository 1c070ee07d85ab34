package joinop

import (
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// A watermark just below the largest one, with a lower bound above zero
// (a side's relative size negative): the expiration time must not wrap
// around below the cached rows' times, where the cleanup timers fired
// again and again and Watermark never returned. Every row expires; a
// LEFT join pads its unmatched row.
func TestIntervalJoinWatermarkNearTheLargest(t *testing.T) {
	for _, bounds := range [][2]int64{{5, 10}, {-10, -5}, {-10, 5}} {
		spec := ijSpec(LeftJoin)
		spec.Lower, spec.Upper = bounds[0], bounds[1]
		j := NewIntervalJoin(spec)
		var c temporalCollector
		done := make(chan error, 1)
		go func() {
			if err := j.ProcessInput(0, ijBatch(ijRowOf(1, 100, "a")), &c); err != nil {
				done <- err
				return
			}
			if err := j.ProcessInput(1, ijBatch(ijRowOf(2, 200, "x")), &c); err != nil {
				done <- err
				return
			}
			done <- j.Watermark(operator.MaxWatermark-1, &c)
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("bounds %v: %v", bounds, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("bounds %v: Watermark(MaxWatermark-1) did not return", bounds)
		}
		if want := "+I[1 100 a | null null null]"; len(c.got) != 1 || c.got[0] != want {
			t.Errorf("bounds %v: emitted %q, want [%s]", bounds, c.got, want)
		}
		if n := j.StateEntries(); n != 0 {
			t.Errorf("bounds %v: %d rows cached after the watermark, want none", bounds, n)
		}
	}
}

func ijBatch(r row.Row) *row.Batch {
	return &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}
}

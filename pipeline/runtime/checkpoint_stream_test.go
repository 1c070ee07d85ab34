package runtime

import (
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/internal/testenv"
)

// TestStreamedStateResumes: a GROUP BY's state (a StreamSnapshotter)
// goes into a part of the store, which the checkpoint names instead of
// holding the bytes, and a run restored from it goes on where the first
// stopped; so does a run restored from a checkpoint that holds the same
// state whole, as checkpoints written before parts do.
func TestStreamedStateResumes(t *testing.T) {
	for _, whole := range []bool{false, true} {
		t.Run(fmt.Sprintf("whole=%v", whole), func(t *testing.T) {
			store, _ := checkpoint.Open(t.TempDir(), "t")
			src := &feedSource{ev: &events{}, feed: make(chan int64, 10)}
			for v := range int64(4) {
				src.feed <- v
			}
			g := countGraph(src, &logSink{ev: &events{}, store: store})
			stop := make(chan struct{})
			run := start(g, Options{Stop: stop, Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}})
			testenv.Eventually(t, 10*time.Second, "4 rows read", func() error {
				if n := g.Sources[0].Stats.RowsIn.Load(); n != 4 {
					return fmt.Errorf("%d rows", n)
				}
				return nil
			})
			close(stop)
			run.wait(t)
			cp, err := store.Latest()
			if err != nil {
				t.Fatal(err)
			}
			comp := cp.Find(g.Ops[0].ID)
			if comp == nil || comp.RuntimePart == "" || comp.Runtime != nil {
				t.Fatalf("the aggregate's component %+v: want its state in a part", comp)
			}
			// Keys 0, 1 and 2 of the rows 0..3.
			if comp.Entries != 3 || cp.Find(g.Sinks[0].ID).Entries != -1 {
				t.Errorf("entries: the aggregate's %d, want its 3 groups; the sink's %d, want -1 (not counted)", comp.Entries, cp.Find(g.Sinks[0].ID).Entries)
			}
			if whole {
				r, err := store.OpenPart(comp.RuntimePart)
				if err != nil {
					t.Fatal(err)
				}
				comp.Runtime, err = io.ReadAll(r)
				r.Close()
				if err != nil {
					t.Fatal(err)
				}
				comp.RuntimePart = ""
				cp.ID++
				if _, err := store.Write(cp); err != nil {
					t.Fatal(err)
				}
			}
			sink2 := &logSink{ev: &events{}, store: store}
			src2 := &feedSource{ev: &events{}, feed: make(chan int64, 10), bounded: 6}
			src2.feed <- 4
			src2.feed <- 5
			start(countGraph(src2, sink2), Options{Checkpoint: CheckpointOptions{Interval: time.Hour, Store: store}}).wait(t)
			// Keys 4%3=1 and 5%3=2 had counts 2 (1,4) and 1 (2) -> 2 (2,5).
			want := []string{"-U[1, 1, 1]", "+U[1, 2, 5]", "-U[2, 1, 2]", "+U[2, 2, 7]"}
			if !slices.Equal(sink2.rows, want) {
				t.Errorf("after restore the sink got %q, want %q", sink2.rows, want)
			}
		})
	}
}

package aggop

import (
	"runtime"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
	"github.com/etld/etld/pipeline/runtime/state"
)

// TestOffHeapCleanup: an owner that becomes garbage gives its mappings
// back without a call, as an operator dropped after its run does: a
// streaming GROUP BY's store and index, and with mini-batch its lazy
// keys, integer-key cache and mini-batch arrays.
func TestOffHeapCleanup(t *testing.T) {
	for _, opt := range []GroupAggOptions{{InsertOnly: true}, {InsertOnly: true, MiniBatch: true, MiniBatchSize: 1 << 20}} {
		checkOffHeapCleanup(t, opt)
	}
}

func checkOffHeapCleanup(t *testing.T, opt GroupAggOptions) {
	if !state.MapSupported {
		t.Skip("no mappings on this platform")
	}
	live := optest.SettleOffHeap()
	func() {
		g := optest.Must(NewGroupAgg([]int{0}, []AggCall{{Func: CountStar, Arg: -1}}, opt))
		b := groupBatch(100_000)
		if err := g.Process(b, &optest.Discard{}); err != nil {
			t.Fatal(err)
		}
		if state.OffHeapLive.Load() <= live {
			t.Fatalf("100k groups mapped nothing")
		}
	}()
	// Cleanups run on their own goroutine after a collection: collect
	// and yield until they did, within a bound.
	for i := 0; state.OffHeapLive.Load() > live; i++ {
		if i == 1000 {
			t.Fatalf("%d bytes still mapped after the operator became garbage", state.OffHeapLive.Load()-live)
		}
		runtime.GC()
		runtime.Gosched()
	}
}

// TestRestoreReleases: Restore gives back the memory of the state it
// replaces, so restoring again and again maps no more.
func TestRestoreReleases(t *testing.T) {
	if !state.MapSupported {
		t.Skip("no mappings on this platform")
	}
	aggs := []AggCall{{Func: CountStar, Arg: -1}, {Func: Max, Arg: 0, ArgType: optest.TBigInt}}
	g := optest.Must(NewGroupAgg([]int{0}, aggs, GroupAggOptions{InsertOnly: true}))
	lazy := optest.Must(NewGroupAgg([]int{0}, aggs, GroupAggOptions{InsertOnly: true, MiniBatch: true}))
	d := NewDistinct()
	for _, tc := range []struct {
		name string
		op   interface {
			operator.Operator
			operator.Snapshotter
			StateEntries() int64
		}
		mapped func() int
	}{
		{"group aggregate", g, func() int { return g.store.mem.Mapped() + g.index.Mapped() }},
		{"lazy keys", lazy, func() int { return lazy.store.mem.Mapped() + lazy.index.Mapped() + lazy.mem.Mapped() }},
		{"distinct", d, func() int { return d.seen.Mapped() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.op.Process(groupBatch(100_000), &optest.Discard{}); err != nil {
				t.Fatal(err)
			}
			state, err := tc.op.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			var once int
			for i := range 3 {
				if err := tc.op.Restore(state); err != nil {
					t.Fatal(err)
				}
				m := tc.mapped()
				if i == 0 {
					once = m
				} else if m != once {
					t.Fatalf("restore %d: %d bytes mapped, %d after the first", i, m, once)
				}
			}
			if once == 0 {
				t.Fatal("100k keys mapped nothing")
			}
			again, err := tc.op.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != string(state) {
				t.Fatal("snapshot after restores differs")
			}
			if n := tc.op.StateEntries(); n != 100_000 {
				t.Fatalf("%d entries, want 100000", n)
			}
		})
	}
}

// groupBatch is n inserts of one BIGINT key each.
func groupBatch(n int) *row.Batch {
	b := row.NewBatch(n, 1)
	for i := range n {
		r := b.NewRow()
		r[0] = row.BigIntValue(int64(i))
		b.Append(row.Insert, r)
	}
	return b
}

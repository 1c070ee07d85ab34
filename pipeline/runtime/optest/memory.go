package optest

import (
	"runtime"
	"testing"

	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// CheckStateBytes fills op by fill, measures the memory the fill kept
// (the Go heap, a collection before and after, and what the state
// package mapped outside it) and checks that op.StateBytes, the
// estimate the state budget holds operators to, is within a factor of
// it: at least a third (the budget would let a state three times its
// size pass) and at most twice (it would fail a pipeline that fits).
// fill should keep nothing but the operator's state: emit into a Discard.
func CheckStateBytes(t *testing.T, op operator.StateMemory, fill func()) {
	t.Helper()
	var before, after runtime.MemStats
	mapped := SettleOffHeap()
	runtime.ReadMemStats(&before)
	fill()
	runtime.GC()
	runtime.ReadMemStats(&after)
	mapped = state.OffHeapLive.Load() - mapped
	est := op.StateBytes()
	runtime.KeepAlive(op)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc) + mapped
	t.Logf("%T: %d entries, StateBytes %d, memory delta %d (%.2fx)", op, op.StateEntries(), est, heap, float64(est)/float64(max(heap, 1)))
	if heap <= 0 {
		t.Fatalf("the fill kept no heap (%d bytes): nothing to compare", heap)
	}
	if est*3 < heap || est > heap*2 {
		t.Errorf("%T: StateBytes %d for a state that took %d bytes: want within [1/3, 2]x", op, est, heap)
	}
}

// SettleOffHeap collects garbage until the off-heap memory released by
// cleanups (they run on their own goroutine after a collection) stops
// changing, within a bound, and returns the bytes still mapped: earlier
// tests' garbage released in the middle of a measurement would make it
// too small.
func SettleOffHeap() int64 {
	live := state.OffHeapLive.Load()
	for same, i := 0, 0; same < 3 && i < 200; i++ {
		runtime.GC()
		runtime.Gosched()
		now := state.OffHeapLive.Load()
		if now == live {
			same++
		} else {
			same = 0
		}
		live = now
	}
	return live
}

// Package heapfloor keeps the garbage collector's heap goal from falling
// below a floor while the live heap is small.
//
// Why: a pipeline's live heap is often a few megabytes (its state is off
// the heap or small) while it allocates a gigabyte of short-lived batches
// a second. With GOGC=100 the goal is twice the live heap, so the GC runs
// every few megabytes of allocation: on a 10M-row GROUP BY that was a
// quarter of the wall time (2.5 s against 1.9 s with GOGC=400). Raising
// GOGC for good would multiply the RSS of a pipeline with a large live
// heap (a join's state) as well; the floor raises it only while
// 2 × live is below the floor, so the extra memory is bounded by the
// floor, and a large heap is collected as Go's default does.
//
// After each collection (seen through a cleanup on a sentinel object)
// the floor sets GOGC to what makes the goal about the floor, never less
// than 100. A GOGC set in the environment is the user's choice: Start
// then does nothing.
package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Default is the floor etld's commands use: with it the GC of a small
// heap runs about every 64 MiB allocated instead of every few.
const Default = 64 << 20

// maxPercent bounds GOGC when the live heap is tiny.
const maxPercent = 2000

// Floor is a running floor.
type Floor struct {
	bytes   uint64
	mu      sync.Mutex // orders a cleanup's SetGCPercent with Stop's
	stopped bool
	// onAdjust, if set, is called with each percent set (tests).
	onAdjust func(percent int)
	sample   []metrics.Sample
}

// Start keeps the heap goal at least bytes while GOGC is not set in the
// environment; it returns nil when it does nothing.
func Start(bytes uint64) *Floor {
	if os.Getenv("GOGC") != "" || bytes == 0 {
		return nil
	}
	return start(bytes, nil)
}

func start(bytes uint64, onAdjust func(int)) *Floor {
	f := &Floor{bytes: bytes, onAdjust: onAdjust, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	p, _ := f.adjust()
	f.adjusted(p)
	f.arm()
	return f
}

// Stop ends the adjustments and gives GOGC back its default.
func (f *Floor) Stop() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.stopped {
		f.stopped = true
		debug.SetGCPercent(100)
	}
}

// sentinel is the object whose collection marks a GC cycle: 16 bytes
// with a pointer, so that the tiny allocator does not share its block
// with other objects (a cleanup on a tiny object may never run).
type sentinel struct {
	_ *byte
	_ [8]byte
}

func (f *Floor) arm() {
	runtime.AddCleanup(new(sentinel), func(f *Floor) {
		p, ok := f.adjust()
		if !ok {
			return // stopped: no more sentinels
		}
		f.arm()
		f.adjusted(p) // after arm: a test's next GC then sees the new sentinel
	}, f)
}

func (f *Floor) adjusted(p int) {
	if f.onAdjust != nil {
		f.onAdjust(p)
	}
}

// adjust sets GOGC for the live heap of the last cycle and returns it;
// false once the floor is stopped.
func (f *Floor) adjust() (int, bool) {
	metrics.Read(f.sample)
	live := uint64(0)
	if f.sample[0].Value.Kind() == metrics.KindUint64 {
		live = f.sample[0].Value.Uint64()
	}
	p := percentFor(live, f.bytes)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return p, false
	}
	debug.SetGCPercent(p)
	return p, true
}

// percentFor is the GOGC whose goal, live × (1 + GOGC/100), is about
// floor: 100 at least, maxPercent at most.
func percentFor(live, floor uint64) int {
	if live == 0 {
		return maxPercent
	}
	if 2*live >= floor {
		return 100
	}
	return int(min(uint64(maxPercent), (floor-live)*100/live))
}

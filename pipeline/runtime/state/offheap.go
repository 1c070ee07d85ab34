package state

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// OffHeap holds the large pointer-free arrays of one owner's state (an
// aggregate's accumulators, a key table's index and entries) in memory
// mapped outside the Go heap where the platform allows it (Linux).
//
// Why: the GC counts every heap byte toward its goal, and with GOGC=100
// lets the heap reach twice the live bytes before it collects, so 100 MB
// of accumulators cost up to 200 MB of RSS; an append that outgrows an
// array also keeps the old copy until the next collection. Mapped memory
// is neither scanned nor counted, grows in place (mremap moves pages, it
// does not copy them), and pages never written cost no RSS.
//
// An array starts on the Go heap and moves to a mapping once it passes
// offHeapMin bytes, so small states (most operators, every test) cost no
// system call. Memory is returned by free, by release (all of the
// owner's at once, when it replaces its state), and by a cleanup that the
// GC runs once the owner is unreachable: operators have no Close.
//
// An array's memory is valid until the call that grows or frees it: a
// view kept past that reads unmapped memory and faults, where a heap
// array would have read a stale copy. Owners keep no views across their
// own changes (keyTable's bytes says so).
//
// T must hold no pointers: the GC does not see into mapped memory.
type OffHeap struct {
	maps map[uintptr][]byte // by base address: the mapping
}

// OffHeapLive is the bytes mapped by all owners, for tests that check
// that nothing leaks.
var OffHeapLive atomic.Int64

// offHeapMin is the size from which an array is mapped (64 pages).
const offHeapMin = 256 << 10

// NewOffHeap returns the off-heap memory of owner, released when owner
// becomes unreachable; nil where mappings are not supported (the arrays
// then stay on the Go heap).
func NewOffHeap[T any](owner *T) *OffHeap {
	if !MapSupported {
		return nil
	}
	h := &OffHeap{maps: map[uintptr][]byte{}}
	runtime.AddCleanup(owner, func(h *OffHeap) { h.Release() }, h)
	return h
}

// mapped reports the bytes h has mapped (tests, and /metrics some day).
func (h *OffHeap) Mapped() int {
	if h == nil {
		return 0
	}
	n := 0
	for _, m := range h.maps {
		n += len(m)
	}
	return n
}

// Release unmaps everything h holds; arrays from it must not be used
// after.
func (h *OffHeap) Release() {
	if h == nil {
		return
	}
	for base, m := range h.maps {
		h.unmap(base, m)
	}
}

func baseOf[T any](s []T) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(s))) }

// OffHeapGrow returns s with length n (n >= len(s)): its contents kept,
// the new elements zero. The result may live elsewhere: s must not be
// used after.
func OffHeapGrow[T any](h *OffHeap, s []T, n int) []T {
	if n <= cap(s) {
		t := s[:n]
		clear(t[len(s):])
		return t
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	want := max(n, 2*cap(s)) // doubling: mapped pages cost nothing until written
	if h == nil || want*size < offHeapMin {
		return append(s, make([]T, n-len(s))...) // the heap's own growth
	}
	bytes := roundPage(want * size)
	if m, ok := h.maps[baseOf(s)]; ok {
		if b, err := remapBytes(m, bytes); err == nil {
			delete(h.maps, baseOf(s))
			OffHeapLive.Add(int64(len(b) - len(m)))
			t := viewOf[T](b)
			h.maps[baseOf(t)] = b
			return t[:n]
		}
	}
	b, err := mapBytes(bytes)
	if err != nil {
		t := append(s[:len(s):len(s)], make([]T, n-len(s))...) // no mapping to be had: the heap may still have room
		offHeapFree(h, s)
		return t
	}
	OffHeapLive.Add(int64(len(b)))
	t := viewOf[T](b)
	h.maps[baseOf(t)] = b
	copy(t, s)
	offHeapFree(h, s)
	return t[:n]
}

// OffHeapReserve returns s with room for extra more elements past its
// length, its contents and length kept; the room is not cleared (as
// OffHeapGrow clears it): for a caller that appends, and so writes it.
// Why: fresh mapped pages are zero already, and clearing them is their
// first touch, a page fault each; clearing a tail that the append then
// writes again doubles the writes.
func OffHeapReserve[T any](h *OffHeap, s []T, extra int) []T {
	if len(s)+extra <= cap(s) {
		return s
	}
	return OffHeapGrow(h, s, len(s)+extra)[:len(s)]
}

// OffHeapMake returns a zeroed array of length n.
func OffHeapMake[T any](h *OffHeap, n int) []T { return OffHeapGrow[T](h, nil, n) }

// OffHeapFree returns s's memory when h mapped it (s must not be used
// after); a heap array is left to the GC.
func OffHeapFree[T any](h *OffHeap, s []T) { offHeapFree(h, s) }

// offHeapFree returns s's memory when h mapped it; a heap array is left
// to the GC.
func offHeapFree[T any](h *OffHeap, s []T) {
	if h == nil || cap(s) == 0 {
		return
	}
	if m, ok := h.maps[baseOf(s)]; ok {
		h.unmap(baseOf(s), m)
	}
}

func (h *OffHeap) unmap(base uintptr, m []byte) {
	unmapBytes(m)
	OffHeapLive.Add(-int64(len(m)))
	delete(h.maps, base)
}

// viewOf is b's memory as a []T of as many whole elements as fit.
func viewOf[T any](b []byte) []T {
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
}

func roundPage(n int) int {
	const page = 4096
	return (n + page - 1) &^ (page - 1)
}

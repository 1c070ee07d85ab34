package state

import (
	"runtime"
	"testing"
)

// TestOffHeapGrow grows arrays across the size where they leave the heap
// and through remaps, and checks that contents survive, new elements are
// zero and freeing returns every mapped byte.
func TestOffHeapGrow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []int // successive lengths
	}{
		{"small, heap only", []int{1, 10, 1000}},
		{"one step past the threshold", []int{offHeapMin / 8 * 3}},
		{"element by element", func() []int {
			var s []int
			for n := 1; n < offHeapMin/8*5; n += 97 {
				s = append(s, n)
			}
			return s
		}()},
		{"doubling", []int{1 << 10, 1 << 15, 1 << 16, 1 << 17, 1 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner := &struct{ x int }{}
			h := NewOffHeap(owner)
			live := OffHeapLive.Load()
			var s []int64
			for _, n := range tc.steps {
				old := len(s)
				s = OffHeapGrow(h, s, n)
				if len(s) != n {
					t.Fatalf("len %d, want %d", len(s), n)
				}
				for i := range old {
					if s[i] != int64(i)*7+1 {
						t.Fatalf("grow to %d: element %d = %d, want %d", n, i, s[i], int64(i)*7+1)
					}
				}
				for i := old; i < n; i++ {
					if s[i] != 0 {
						t.Fatalf("grow to %d: new element %d = %d", n, i, s[i])
					}
					s[i] = int64(i)*7 + 1
				}
			}
			big := len(s)*8 >= offHeapMin
			if MapSupported && big != (h.Mapped() > 0) {
				t.Fatalf("%d bytes, %d mapped", len(s)*8, h.Mapped())
			}
			if got := OffHeapLive.Load() - live; got != int64(h.Mapped()) {
				t.Fatalf("live counter moved %d, owner maps %d", got, h.Mapped())
			}
			offHeapFree(h, s)
			if h.Mapped() != 0 || OffHeapLive.Load() != live {
				t.Fatalf("after free: %d mapped, live %d, want %d", h.Mapped(), OffHeapLive.Load(), live)
			}
			runtime.KeepAlive(owner)
		})
	}
}

// OffHeapReserve makes room without changing the length, so that
// appends stay in the array (heap or mapped) and keep its contents.
func TestOffHeapReserve(t *testing.T) {
	owner := &struct{ x int }{}
	h := NewOffHeap(owner)
	var s []byte
	for i := range offHeapMin * 3 {
		s = OffHeapReserve(h, s, 7)
		if len(s) != i || cap(s) < i+7 {
			t.Fatalf("reserve at %d: len %d cap %d", i, len(s), cap(s))
		}
		base := baseOf(s)
		s = append(s, byte(i*13))
		if baseOf(s) != base {
			t.Fatalf("append at %d moved the array: the reserve was not kept", i)
		}
	}
	for i, b := range s {
		if b != byte(i*13) {
			t.Fatalf("byte %d = %d, want %d", i, b, byte(i*13))
		}
	}
	if MapSupported && h.Mapped() == 0 {
		t.Fatal("nothing mapped past the threshold")
	}
	h.Release()
	runtime.KeepAlive(owner)
}

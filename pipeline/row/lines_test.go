package row

import (
	"testing"
	"unsafe"
)

// TestOwnCacheLines: every Batch NewBatch makes and every Positions
// NewPositions makes starts a 128-byte block and fills it, so no two
// share a cache line (lines.go). Unpadded, they are 80- and 96-byte
// objects, of which few start a block.
func TestOwnCacheLines(t *testing.T) {
	for _, tt := range []struct {
		name  string
		size  uintptr
		alloc func() unsafe.Pointer
	}{
		{"batch 1x1", unsafe.Sizeof(paddedBatch{}), func() unsafe.Pointer { return unsafe.Pointer(NewBatch(1, 1)) }},
		{"batch 1024x3", unsafe.Sizeof(paddedBatch{}), func() unsafe.Pointer { return unsafe.Pointer(NewBatch(1024, 3)) }},
		{"batch 0x0", unsafe.Sizeof(paddedBatch{}), func() unsafe.Pointer { return unsafe.Pointer(NewBatch(0, 0)) }},
		{"positions 1024", unsafe.Sizeof(paddedPositions{}), func() unsafe.Pointer { return unsafe.Pointer(NewPositions(1024, ":")) }},
		{"positions 0", unsafe.Sizeof(paddedPositions{}), func() unsafe.Pointer { return unsafe.Pointer(NewPositions(0, "")) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.size != lineBytes {
				t.Fatalf("padded size %d, want %d", tt.size, lineBytes)
			}
			keep := make([]unsafe.Pointer, 0, 64)
			for i := 0; i < cap(keep); i++ {
				p := tt.alloc()
				keep = append(keep, p) // live, so that the next is a neighbour
				if a := uintptr(p) % lineBytes; a != 0 {
					t.Fatalf("allocation %d at %#x: %d bytes past a %d-byte block", i, uintptr(p), a, lineBytes)
				}
			}
		})
	}
}

// TestPaddedBatchWorks: a padded batch is an ordinary one.
func TestPaddedBatchWorks(t *testing.T) {
	b := NewBatch(2, 2)
	r := b.NewRow()
	r[0], r[1] = BigIntValue(1), StringValue("a")
	b.Append(Insert, r)
	if b.Len() != 1 || b.String() != "+I[1, a]\n" {
		t.Fatalf("batch %q", b.String())
	}
	p := NewPositions(2, ":")
	p.MarkAt(1, "f", "", 7, 0)
	if got := p.Records(); got != 1 {
		t.Fatalf("records %d", got)
	}
	if loc, ok := p.Locate(0); !ok || loc.File != "f" || loc.Line != 7 {
		t.Fatalf("locate %+v %v", loc, ok)
	}
}

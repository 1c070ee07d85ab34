package row

import (
	"sync/atomic"
	"unsafe"
)

// SharedText is Text for goroutines that copy strings at the same time:
// an expression compiled once and run by every decoder of a source (a
// fused Calc) or by an operator's node. Each copy takes its bytes from
// the current chunk by an atomic add, so two copies never write the same
// bytes, and a chunk once full is replaced by a new one. A string keeps
// its chunk alive, as a string read from a source's block keeps the
// block (an operator that keeps a value detaches it: Detach). The zero
// SharedText is ready.
type SharedText struct {
	cur atomic.Pointer[sharedChunk]
}

type sharedChunk struct {
	buf  []byte
	used atomic.Int64
}

// String returns a copy of b.
func (t *SharedText) String(b []byte) string {
	n := len(b)
	switch {
	case n == 0:
		return ""
	case n > textChunk/4:
		return string(b)
	}
	for {
		c := t.cur.Load()
		if c != nil {
			if end := int(c.used.Add(int64(n))); end <= len(c.buf) {
				dst := c.buf[end-n : end : end]
				copy(dst, b)
				return unsafe.String(&dst[0], n)
			}
		}
		// Full (or none yet): the first goroutine here puts a new chunk
		// in; the others take their bytes from that one.
		t.cur.CompareAndSwap(c, &sharedChunk{buf: make([]byte, textChunk)})
	}
}

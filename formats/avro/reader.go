package avro

import (
	"fmt"
	"math"
	"unsafe"
)

// reader reads Avro's binary encoding from one record, held as a string so
// that the strings it reads are substrings of the record, not copies.
type reader struct {
	s   string
	pos int
	// scratch is where nested values are built (nested.go), keys the
	// keys of the maps being read; both are reused from datum to datum.
	scratch []byte
	keys    []string
	// arena holds the strings of the values decoded (a record's copy,
	// nested values), many to one allocation: arena[:used] is handed
	// out and never written again, the rest is room for more.
	arena []byte
	used  int
	// borrowed: s is the caller's bytes, valid only during the call (a
	// Kafka message's value), so a string value read from it is copied
	// into the arena (str); the other values that hold strings are built
	// from copies anyway.
	borrowed bool
}

// str is a string value read from r.s, copied when r.s is borrowed.
func (r *reader) str(s string) string {
	if !r.borrowed || s == "" {
		return s
	}
	return r.keep(unsafe.Slice(unsafe.StringData(s), len(s)), nil)
}

// arenaChunk is the size of an arena's allocations: a value holds its
// chunk in memory for as long as it lives, as a value of a record read
// from a file block holds the block.
const arenaChunk = 32 << 10

// keep returns a string of the bytes of a then b, from r's arena.
func (r *reader) keep(a, b []byte) string {
	n := len(a) + len(b)
	if n == 0 {
		return ""
	}
	if len(r.arena)-r.used < n {
		r.arena, r.used = make([]byte, max(arenaChunk, n)), 0
	}
	at := r.used
	copy(r.arena[at:], a)
	copy(r.arena[at+len(a):], b)
	r.used += n
	return unsafe.String(&r.arena[at], n)
}

// reset makes r read s from pos, keeping its buffers.
func (r *reader) reset(s string, pos int) {
	r.s, r.pos, r.borrowed = s, pos, false
	r.scratch, r.keys = r.scratch[:0], r.keys[:0]
}

// resetBytes makes r read rec, which the caller may change once the call
// returns: the strings decoded are copies (str).
func (r *reader) resetBytes(rec []byte, pos int) {
	s := ""
	if len(rec) > 0 {
		s = unsafe.String(&rec[0], len(rec))
	}
	r.reset(s, pos)
	r.borrowed = true
}

// errAt is a decode error at a byte offset of the record.
type errAt struct {
	off int
	msg string
}

func (e *errAt) Error() string { return fmt.Sprintf("at byte %d: %s", e.off, e.msg) }

func (r *reader) fail(format string, args ...any) error {
	return &errAt{off: r.pos, msg: fmt.Sprintf(format, args...)}
}

// long reads a zigzag varint of at most 10 bytes.
func (r *reader) long() (int64, error) {
	var u uint64
	for shift := uint(0); shift < 70; shift += 7 {
		if r.pos >= len(r.s) {
			return 0, r.fail("the record ends inside a number")
		}
		b := r.s[r.pos]
		r.pos++
		u |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return int64(u>>1) ^ -int64(u&1), nil
		}
	}
	return 0, r.fail("a number longer than 10 bytes")
}

// int reads a zigzag varint that must fit 32 bits.
func (r *reader) int() (int32, error) {
	start := r.pos
	n, err := r.long()
	if err != nil {
		return 0, err
	}
	if n != int64(int32(n)) {
		r.pos = start
		return 0, r.fail("%d does not fit an Avro int", n)
	}
	return int32(n), nil
}

func (r *reader) bool() (bool, error) {
	if r.pos >= len(r.s) {
		return false, r.fail("the record ends inside a boolean")
	}
	b := r.s[r.pos]
	if b > 1 {
		return false, r.fail("boolean byte %d is neither 0 nor 1", b)
	}
	r.pos++
	return b == 1, nil
}

func (r *reader) float() (float32, error) {
	if len(r.s)-r.pos < 4 {
		return 0, r.fail("the record ends inside a float")
	}
	s := r.s[r.pos : r.pos+4]
	v := uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
	r.pos += 4
	return math.Float32frombits(v), nil
}

func (r *reader) double() (float64, error) {
	if len(r.s)-r.pos < 8 {
		return 0, r.fail("the record ends inside a double")
	}
	s := r.s[r.pos : r.pos+8]
	v := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	r.pos += 8
	return math.Float64frombits(v), nil
}

// bytes reads a length-prefixed byte string, as a substring of the record.
func (r *reader) bytes() (string, error) {
	start := r.pos
	n, err := r.long()
	if err != nil {
		return "", err
	}
	if left := len(r.s) - r.pos; n < 0 || n > int64(left) {
		r.pos = start
		return "", r.fail("a length of %d where %d bytes are left", n, left)
	}
	s := r.s[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s, nil
}

// fixed reads n bytes.
func (r *reader) fixed(n int) (string, error) {
	if len(r.s)-r.pos < n {
		return "", r.fail("the record ends inside a fixed of %d bytes", n)
	}
	s := r.s[r.pos : r.pos+n]
	r.pos += n
	return s, nil
}

// blockCount reads the count of an array's or map's block; a negative
// count is followed by the block's size in bytes, which is skipped.
func (r *reader) blockCount() (int, error) {
	start := r.pos
	n, err := r.long()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		if _, err := r.long(); err != nil {
			return 0, err
		}
		n = -n
	}
	// Every item takes at least one byte except a null's, so a count
	// beyond the bytes left (with room for nulls) is corrupt data, not a
	// reason to allocate.
	if left := len(r.s) - r.pos; n < 0 || n > int64(left)+1<<16 {
		r.pos = start
		return 0, r.fail("a block of %d items where %d bytes are left", n, left)
	}
	return int(n), nil
}

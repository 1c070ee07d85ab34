package csv

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Eight bytes at a time (SWAR: SIMD within a register): the one-pass
// decode reads a long number's digits a word at a time, with no branch
// per digit. (Finding a field's end a word at a time, five byte
// comparisons a word, cost more than the byte loop on the matrix's
// fields of 1 to 12 bytes: not done.)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// word is the eight bytes of s from i on, the first in the low byte;
// i+8 <= len(s).
func word(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:i+8]), 8))
}

// nonDigits has the high bit set in the first byte of w that is not an
// ASCII digit (and maybe in bytes after it), given x = w - '0' * lsb.
func nonDigits(x uint64) uint64 {
	return ((x + 0x76*lsb) | x) & msb
}

// eightDigits is the number of the n digits (1 to 8) in the low bytes of
// x = w - '0' * lsb, the first the most significant.
func eightDigits(x uint64, n int) uint64 {
	x <<= 8 * uint(8-n) // leading zeros in the bytes the digits left
	x = x*10 + x>>8
	return ((x&0x000000FF000000FF)*(100+1000000<<32) + (x>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
}

// firstByte is the index of the first byte whose high bit is set in m,
// or 8 when none is.
func firstByte(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

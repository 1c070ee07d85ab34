// Package swar reads text eight bytes at a time (SIMD within a register):
// the one-pass CSV and JSON decoders read a number's digits and skip a
// string's plain bytes a word at a time, with no branch per byte.
package swar

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

const (
	// LSB has the low bit of every byte set: c * LSB is c in every byte.
	LSB = 0x0101010101010101
	// MSB has the high bit of every byte set.
	MSB = 0x8080808080808080
)

// Word is the eight bytes of s from i on, the first in the low byte;
// i+8 <= len(s).
func Word(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:i+8]), 8))
}

// NonDigits has the high bit set in the first byte of w that is not an
// ASCII digit (and maybe in bytes after it), given x = w - '0' * LSB.
func NonDigits(x uint64) uint64 {
	return ((x + 0x76*LSB) | x) & MSB
}

// EightDigits is the number of the n digits (1 to 8) in the low bytes of
// x = w - '0' * LSB, the first the most significant.
func EightDigits(x uint64, n int) uint64 {
	x <<= 8 * uint(8-n) // leading zeros in the bytes the digits left
	x = x*10 + x>>8
	return ((x&0x000000FF000000FF)*(100+1000000<<32) + (x>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
}

// FirstByte is the index of the first byte whose high bit is set in m,
// or 8 when none is.
func FirstByte(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// low7 has the low seven bits of every byte set.
const low7 = 0x7F7F7F7F7F7F7F7F

// Bytes has the high bit set in exactly the bytes of w that are c, and
// in no other: unlike the borrow trick of NonDigits, no byte after a
// match is marked, so that the matches can be counted.
func Bytes(w uint64, c byte) uint64 {
	x := w ^ (uint64(c) * LSB)
	// A byte's high bit is set in x&low7+low7 when its low seven bits
	// are not all zero, and in x when its own is: neither, it was c.
	return ^((x&low7 + low7) | x | low7)
}

// Mask8 packs the high bits of m's bytes into eight bits, byte i's into
// bit i: a mask of Bytes, or of any test that flags bytes exactly.
func Mask8(m uint64) uint32 {
	// Byte i's high bit, moved to bit 8i, lands on bit 56+i of the
	// product; the other products fall below bit 56 or above 63, each
	// on its own bit (no carries).
	return uint32((m >> 7 & LSB) * 0x0102040810204080 >> 56)
}

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

//go:build wasip1

// upper is UPPER's work as a function, for measuring what a WebAssembly
// call costs against the built-in: upper(s STRING) STRING, ASCII
// letters upper-cased in place, other bytes as they are (the built-in
// also upper-cases other letters; the benchmark's data is ASCII).
package main

import (
	"encoding/binary"

	"github.com/etld/etld/sdk/go/udf"
)

func main() {}

var buf []byte

//go:wasmexport upper
func upper(ptr, size uint32) uint64 {
	return udf.Scalar(ptr, size, func(in *udf.Batch, out *udf.Values) error {
		s := in.Arg(0)
		for i := range in.Rows {
			buf = append(buf[:0], s.Bytes(i)...)
			upperASCII(buf)
			out.Bytes(buf)
		}
		return nil
	})
}

// upperASCII upper-cases the ASCII letters of b in place, eight bytes at
// a time: a byte is a lower-case letter when its low seven bits plus 0x1F
// carry into bit 7 (>= 'a') and plus 0x05 do not (<= 'z'), and its own
// bit 7 is clear; bit 5 (0x20) of those is cleared.
func upperASCII(b []byte) {
	j := 0
	for ; j+8 <= len(b); j += 8 {
		w := binary.LittleEndian.Uint64(b[j:])
		low := w & 0x7F7F7F7F7F7F7F7F
		letters := (low + 0x1F1F1F1F1F1F1F1F) &^ (low + 0x0505050505050505) &^ w & 0x8080808080808080
		binary.LittleEndian.PutUint64(b[j:], w^(letters>>2))
	}
	for ; j < len(b); j++ {
		if c := b[j]; 'a' <= c && c <= 'z' {
			b[j] = c - 32
		}
	}
}

//go:build wasip1

// upper is UPPER's work as a function, for measuring what a WebAssembly
// call costs against the built-in: upper(s STRING) STRING, ASCII
// letters upper-cased in place, other bytes as they are (the built-in
// also upper-cases other letters; the benchmark's data is ASCII).
package main

import "github.com/etld/etld/sdk/go/udf"

func main() {}

var buf []byte

//go:wasmexport upper
func upper(ptr, size uint32) uint64 {
	return udf.Scalar(ptr, size, func(in *udf.Batch, out *udf.Values) error {
		s := in.Arg(0)
		for i := range in.Rows {
			buf = append(buf[:0], s.Bytes(i)...)
			for j, c := range buf {
				if 'a' <= c && c <= 'z' {
					buf[j] = c - 32
				}
			}
			out.Bytes(buf)
		}
		return nil
	})
}

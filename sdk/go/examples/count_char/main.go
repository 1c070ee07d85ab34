//go:build wasip1

// count_char counts the occurrences of a character in a string, the
// function Nexmark's query 14 calls: count_char(s STRING, c STRING)
// BIGINT.
package main

import (
	"strings"

	"github.com/etld/etld/sdk/go/udf"
)

func main() {}

//go:wasmexport count_char
func countChar(ptr, size uint32) uint64 {
	return udf.Scalar(ptr, size, func(in *udf.Batch, out *udf.Values) error {
		s, c := in.Arg(0), in.Arg(1)
		for i := range in.Rows {
			out.Int64(int64(strings.Count(s.String(i), c.String(i))))
		}
		return nil
	})
}

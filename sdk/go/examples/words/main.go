//go:build wasip1

// words is a table function: words(s STRING, sep STRING) gives a row
// (word STRING, pos INT) for each non-empty piece of s between seps,
// read with CROSS JOIN LATERAL TABLE(words(s, ' ')) AS t(word, pos).
package main

import (
	"strings"

	"github.com/etld/etld/sdk/go/udf"
)

func main() {}

//go:wasmexport words
func words(ptr, size uint32) uint64 {
	return udf.Table(ptr, size, func(in *udf.Batch, out *udf.Rows) error {
		s, sep := in.Arg(0), in.Arg(1)
		for i := range in.Rows {
			pos := int32(0)
			for _, w := range strings.Split(s.String(i), sep.String(i)) {
				if w != "" {
					pos++
					out.Emit(i, w, pos)
				}
			}
		}
		return nil
	})
}

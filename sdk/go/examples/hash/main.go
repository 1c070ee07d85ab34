//go:build wasip1

// hash is a hash Flink lacks: fnv1a64(s STRING) BIGINT, the 64-bit
// FNV-1a hash of a string's UTF-8 bytes (as a signed integer), also
// fnv1a64_bytes(b BYTES) BIGINT.
package main

import (
	"hash/fnv"

	"github.com/etld/etld/sdk/go/udf"
)

func main() {}

func fnv1a(b []byte) int64 {
	h := fnv.New64a()
	h.Write(b)
	return int64(h.Sum64())
}

//go:wasmexport fnv1a64
func fnv1a64(ptr, size uint32) uint64 {
	return udf.Scalar(ptr, size, func(in *udf.Batch, out *udf.Values) error {
		s := in.Arg(0)
		for i := range in.Rows {
			out.Int64(fnv1a(s.Bytes(i)))
		}
		return nil
	})
}

//go:wasmexport fnv1a64_bytes
func fnv1a64Bytes(ptr, size uint32) uint64 { return fnv1a64(ptr, size) }

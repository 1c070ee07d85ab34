//go:build wasip1

// sandbox is a module of misbehaving (and one well-behaved) functions for
// the tests of etld's sandbox: each declaration names its export.
package main

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/etld/etld/sdk/go/udf"
)

func main() {}

// echo returns its argument, of whatever type it is declared.
//
//go:wasmexport echo
func echo(ptr, size uint32) uint64 {
	return udf.Scalar(ptr, size, udf.RowScalar(func(args []any) (any, error) { return args[0], nil }))
}

// loop never returns for an argument "loop", and echoes any other.
//
//go:wasmexport loop
func loop(ptr, size uint32) uint64 {
	return udf.Scalar(ptr, size, udf.RowScalar(func(args []any) (any, error) {
		for args[0] == "loop" {
		}
		return args[0], nil
	}))
}

// trap panics for an argument "trap".
//
//go:wasmexport trap
func trap(ptr, size uint32) uint64 {
	return udf.Scalar(ptr, size, udf.RowScalar(func(args []any) (any, error) {
		if args[0] == "trap" {
			panic("trapped")
		}
		return args[0], nil
	}))
}

var hoard [][]byte

// hog allocates memory without end for an argument "hog".
//
//go:wasmexport hog
func hog(ptr, size uint32) uint64 {
	return udf.Scalar(ptr, size, udf.RowScalar(func(args []any) (any, error) {
		for args[0] == "hog" {
			hoard = append(hoard, make([]byte, 1<<20))
		}
		return args[0], nil
	}))
}

// fails reports an error for an argument starting with "bad".
//
//go:wasmexport fails
func fails(ptr, size uint32) uint64 {
	return udf.Scalar(ptr, size, udf.RowScalar(func(args []any) (any, error) {
		if s, _ := args[0].(string); strings.HasPrefix(s, "bad") {
			return nil, errors.New("refused " + s)
		}
		return args[0], nil
	}))
}

// wrong returns a DOUBLE column whatever its declared result.
//
//go:wasmexport wrong
func wrong(ptr, size uint32) uint64 {
	return udf.Raw(ptr, size, func(in []byte) []byte {
		b, err := udf.ReadBatch(in)
		if err != nil {
			panic(err)
		}
		out := binary.LittleEndian.AppendUint32(nil, uint32(b.Rows))
		out = binary.LittleEndian.AppendUint32(out, 0)
		out = append(out, byte(udf.Double))
		out = append(out, make([]byte, b.Rows)...)
		for range b.Rows {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(1.5))
		}
		return out
	})
}

// clock returns the module's wall clock in nanoseconds.
//
//go:wasmexport clock
func clock(ptr, size uint32) uint64 {
	return udf.Scalar(ptr, size, udf.RowScalar(func(args []any) (any, error) { return time.Now().UnixNano(), nil }))
}

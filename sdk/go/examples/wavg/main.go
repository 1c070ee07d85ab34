//go:build wasip1

// wavg is an aggregate function, the weighted average of a value:
// wavg(v DOUBLE, w DOUBLE) DOUBLE, NULL for a group of no weight. Its
// accumulator is 16 bytes, the sums of v*w and of w, so that it can
// retract a row (an updating input) and merge two (window slices). It
// changes its accumulator in place and allocates nothing per row.
package main

import (
	"encoding/binary"
	"math"

	"github.com/etld/etld/sdk/go/udf"
)

func main() {}

func get(acc []byte) (vw, w float64) {
	if len(acc) == 16 {
		vw = math.Float64frombits(binary.LittleEndian.Uint64(acc))
		w = math.Float64frombits(binary.LittleEndian.Uint64(acc[8:]))
	}
	return vw, w
}

// put stores the sums in acc, growing it to 16 bytes the first time.
func put(acc []byte, vw, w float64) []byte {
	if len(acc) != 16 {
		acc = make([]byte, 16)
	}
	binary.LittleEndian.PutUint64(acc, math.Float64bits(vw))
	binary.LittleEndian.PutUint64(acc[8:], math.Float64bits(w))
	return acc
}

func step(sign float64) func(acc []byte, row udf.Args) ([]byte, error) {
	return func(acc []byte, row udf.Args) ([]byte, error) {
		v, w := row.Float64(0), row.Float64(1)
		svw, sw := get(acc)
		return put(acc, svw+sign*v*w, sw+sign*w), nil
	}
}

var wavg = udf.Agg{
	Accumulate: step(1),
	Retract:    step(-1),
	Merge: func(acc, other []byte) ([]byte, error) {
		a, aw := get(acc)
		b, bw := get(other)
		return put(acc, a+b, aw+bw), nil
	},
	Result: func(acc []byte, out *udf.Builder) error {
		vw, w := get(acc)
		if w == 0 {
			out.AppendNull()
		} else {
			out.Float64(vw / w)
		}
		return nil
	},
}

//go:wasmexport wavg
func wavgExport(ptr, size uint32) uint64 { return udf.Aggregate(ptr, size, wavg) }

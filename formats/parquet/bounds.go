package parquet

import (
	"bytes"
	"encoding/binary"
	"math"
)

// Statistics of the pages written by column.encode: the least and
// greatest value, in the order the Parquet specification gives each
// logical type (signed for the integers, the DECIMALs, DATE, TIME and
// TIMESTAMP; unsigned bytes for STRING and BYTES; two's complement for a
// DECIMAL's fixed bytes, so signed), PLAIN encoded (a string without its
// length). NaNs are left out of a float's bounds, as parquet-mr leaves
// them out; a zero bound is -0 for the least and +0 for the greatest,
// since readers may not tell them apart.

// bounds are the least and greatest of values [v0, v1); ok is false when
// there are none (all NULL, or all NaN).
func (c *column) bounds(v0, v1 int) (lo, hi []byte, ok bool) {
	if v0 == v1 {
		return nil, nil, false
	}
	switch c.phys {
	case physBoolean:
		seen := [2]bool{}
		for _, x := range c.bools[v0:v1] {
			if x {
				seen[1] = true
			} else {
				seen[0] = true
			}
		}
		lo, hi = []byte{1}, []byte{0}
		if seen[0] {
			lo = []byte{0}
		}
		if seen[1] {
			hi = []byte{1}
		}
		return lo, hi, true
	case physInt32:
		a, b := minMax(c.i32[v0:v1])
		return leBytes(nil, a), leBytes(nil, b), true
	case physInt64:
		a, b := minMax(c.i64[v0:v1])
		return leBytes(nil, a), leBytes(nil, b), true
	case physFloat:
		a, b, ok := minMaxFloat(c.f32[v0:v1])
		if !ok {
			return nil, nil, false
		}
		return leBytes(nil, a), leBytes(nil, b), true
	case physDouble:
		a, b, ok := minMaxFloat(c.f64[v0:v1])
		if !ok {
			return nil, nil, false
		}
		return leBytes(nil, a), leBytes(nil, b), true
	case physBytes:
		vals := c.strs[v0:v1]
		a, b := vals[0], vals[0]
		for _, s := range vals[1:] {
			if s < a {
				a = s
			} else if s > b {
				b = s
			}
		}
		return []byte(a), []byte(b), true
	}
	w := c.width
	a, b := c.fixed[v0*w:(v0+1)*w], c.fixed[v0*w:(v0+1)*w]
	for k := v0 + 1; k < v1; k++ {
		x := c.fixed[k*w : (k+1)*w]
		if cmpSigned(x, a) < 0 {
			a = x
		} else if cmpSigned(x, b) > 0 {
			b = x
		}
	}
	return bytes.Clone(a), bytes.Clone(b), true
}

func minMax[T int32 | int64](v []T) (T, T) {
	a, b := v[0], v[0]
	for _, x := range v[1:] {
		a, b = min(a, x), max(b, x)
	}
	return a, b
}

// minMaxFloat leaves NaNs out: ok is false when every value is one.
func minMaxFloat[T float32 | float64](v []T) (a, b T, ok bool) {
	for _, x := range v {
		if x != x {
			continue
		}
		if !ok {
			a, b, ok = x, x, true
			continue
		}
		if x < a {
			a = x
		} else if x > b {
			b = x
		}
	}
	if ok && a == 0 {
		a = T(math.Copysign(0, -1))
	}
	if ok && b == 0 {
		b = 0
	}
	return a, b, ok
}

// cmp compares two bounds of the column's type.
func (c *column) cmp(x, y []byte) int {
	switch c.phys {
	case physBoolean:
		return int(x[0]) - int(y[0])
	case physInt32:
		return cmpOrdered(int32(binary.LittleEndian.Uint32(x)), int32(binary.LittleEndian.Uint32(y)))
	case physInt64:
		return cmpOrdered(int64(binary.LittleEndian.Uint64(x)), int64(binary.LittleEndian.Uint64(y)))
	case physFloat:
		return cmpOrdered(math.Float32frombits(binary.LittleEndian.Uint32(x)), math.Float32frombits(binary.LittleEndian.Uint32(y)))
	case physDouble:
		return cmpOrdered(math.Float64frombits(binary.LittleEndian.Uint64(x)), math.Float64frombits(binary.LittleEndian.Uint64(y)))
	case physBytes:
		return bytes.Compare(x, y)
	}
	return cmpSigned(x, y)
}

func cmpOrdered[T int32 | int64 | float32 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpSigned compares big-endian two's complement numbers of one width.
func cmpSigned(x, y []byte) int {
	if x[0]^0x80 != y[0]^0x80 {
		return int(x[0]^0x80) - int(y[0]^0x80)
	}
	return bytes.Compare(x[1:], y[1:])
}

// truncateMin cuts a string's least bound to indexBytes: a prefix is
// no greater.
func truncateMin(b []byte) []byte {
	if len(b) <= indexBytes {
		return b
	}
	return b[:indexBytes]
}

// truncateMax cuts a string's greatest bound to indexBytes, its last
// byte that can be incremented incremented so that it stays no less; a
// bound of 0xff bytes is left whole.
func truncateMax(b []byte) []byte {
	if len(b) <= indexBytes {
		return b
	}
	t := bytes.Clone(b[:indexBytes])
	for i := len(t) - 1; i >= 0; i-- {
		if t[i] != 0xff {
			t[i]++
			return t[:i+1]
		}
	}
	return b
}

package row

import (
	"cmp"
	"math/bits"
	"strconv"
)

// wideKeyBit marks a wide DECIMAL in AppendKey's and the codec's scale
// byte (scales are at most 38, so the bit is free).
const wideKeyBit = 0x80

// mulPow10 is x × 10^k for |x| < 2^63 and k <= 18: at most 123 bits.
func mulPow10(x int64, k int) Int128 {
	neg := x < 0
	m := uint64(x)
	if neg {
		m = -m
	}
	hi, lo := bits.Mul64(m, pow10x128[k][1])
	r := Int128{Hi: int64(hi), Lo: lo}
	if neg {
		r = r.Neg()
	}
	return r
}

// CompareDecimals compares two DECIMAL values exactly, whatever their
// scales and widths, without allocating: signs first, then magnitudes at
// the larger scale in 128 bits (a magnitude that overflows 128 bits when
// scaled is the larger one, since the other fits).
func CompareDecimals(a, b Value) int {
	sa, sb := int(a.scale), int(b.scale)
	if sa == sb {
		return a.Decimal128().Cmp(b.Decimal128())
	}
	if a.s == "" && b.s == "" && sa-sb <= 18 && sb-sa <= 18 {
		if sa < sb {
			return mulPow10(int64(a.n), sb-sa).Cmp(Int128Of(int64(b.n)))
		}
		return Int128Of(int64(a.n)).Cmp(mulPow10(int64(b.n), sa-sb))
	}
	x, y := a.Decimal128(), b.Decimal128()
	if sx, sy := x.Sign(), y.Sign(); sx != sy || sx == 0 {
		return cmp.Compare(sx, sy)
	}
	xh, xl := x.magnitude()
	yh, yl := y.magnitude()
	var c int
	if sa < sb {
		h, l, ok := scaleMagnitude(xh, xl, sb-sa)
		c = 1
		if ok {
			c = cmpMag(h, l, yh, yl)
		}
	} else {
		h, l, ok := scaleMagnitude(yh, yl, sa-sb)
		c = -1
		if ok {
			c = cmpMag(xh, xl, h, l)
		}
	}
	if x.Sign() < 0 {
		return -c
	}
	return c
}

func cmpMag(ah, al, bh, bl uint64) int {
	if ah != bh {
		if ah < bh {
			return -1
		}
		return 1
	}
	switch {
	case al < bl:
		return -1
	case al > bl:
		return 1
	}
	return 0
}

// scaleMagnitude is hi:lo × 10^k; ok is false when it passes 128 bits.
func scaleMagnitude(hi, lo uint64, k int) (uint64, uint64, bool) {
	for k > 0 {
		step := min(k, 19)
		m := pow10x128[step][1]
		h1, l1 := bits.Mul64(lo, m)
		h2, l2 := bits.Mul64(hi, m)
		var c uint64
		hi, c = bits.Add64(h1, l2, 0)
		lo = l1
		if h2 != 0 || c != 0 {
			return 0, 0, false
		}
		k -= step
	}
	return hi, lo, true
}

// wideFloat is a wide DECIMAL as the nearest float64, as Java's
// BigDecimal.doubleValue rounds it.
func wideFloat(v Value) float64 {
	var buf [48]byte
	f, _ := strconv.ParseFloat(string(AppendDecimal(buf[:0], v, true)), 64)
	return f
}

package row

import (
	"math/big"
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
// scales: without allocating when both fit an int64 and the scales are
// at most 18 apart, through math/big otherwise.
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
	x, y := a.Decimal128().Big(new(big.Int)), b.Decimal128().Big(new(big.Int))
	if sa < sb {
		x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sb-sa)), nil))
	} else {
		y.Mul(y, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sa-sb)), nil))
	}
	return x.Cmp(y)
}

// wideFloat is a wide DECIMAL as the nearest float64, as Java's
// BigDecimal.doubleValue rounds it.
func wideFloat(v Value) float64 {
	var buf [48]byte
	f, _ := strconv.ParseFloat(string(AppendDecimal(buf[:0], v, true)), 64)
	return f
}

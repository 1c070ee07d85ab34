package expr

import (
	"cmp"
	"math/bits"

	"github.com/etld/etld/pipeline/row"
)

// The 128-bit DECIMAL path: + - * of values past int64 whose exact result
// still fits 128 bits, computed on unsigned magnitudes without
// allocating (99999999.99², a sum of DECIMAL(38) values). What does not
// fit here goes on to the math/big path.

// u128 is an unsigned 128-bit magnitude.
type u128 struct{ hi, lo uint64 }

// pow10u holds 10^0 .. 10^19, all of which fit a uint64.
var pow10u = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

func magnitude(x row.Int128) (u128, bool) {
	if x.Hi < 0 {
		x = x.Neg()
		return u128{uint64(x.Hi), x.Lo}, true
	}
	return u128{uint64(x.Hi), x.Lo}, false
}

// signedOf applies a sign to m; ok is false past 2^127 - 1.
func signedOf(m u128, neg bool) (row.Int128, bool) {
	if m.hi > 1<<63-1 {
		return row.Int128{}, false
	}
	x := row.Int128{Hi: int64(m.hi), Lo: m.lo}
	if neg {
		x = x.Neg()
	}
	return x, true
}

func mulU64(m u128, k uint64) (u128, bool) {
	h1, l1 := bits.Mul64(m.lo, k)
	h2, l2 := bits.Mul64(m.hi, k)
	hi, carry := bits.Add64(h1, l2, 0)
	return u128{hi, l1}, h2 == 0 && carry == 0
}

// scaleUp multiplies m by 10^k.
func scaleUp(m u128, k int) (u128, bool) {
	ok := true
	for k > 0 && ok {
		step := min(k, 19)
		m, ok = mulU64(m, pow10u[step])
		k -= step
	}
	return m, ok
}

// divRoundU divides m by d rounding half up.
func divRoundU(m u128, d uint64) u128 {
	qh, r := m.hi/d, m.hi%d
	ql, r := bits.Div64(r, m.lo, d)
	if r >= d-r {
		var c uint64
		ql, c = bits.Add64(ql, 1, 0)
		qh += c
	}
	return u128{qh, ql}
}

func cmpU128(a, b u128) int {
	switch {
	case a.hi != b.hi:
		return cmp.Compare(a.hi, b.hi)
	}
	return cmp.Compare(a.lo, b.lo)
}

// arith128 is + - * of a and b at scale s and precision p when the exact
// result fits 128 bits (and a rounding divides by at most 10^19); ok is
// false when the math/big path must decide. An overflow of p is NULL.
func arith128(op byte, a, b row.Value, s, p int) (row.Value, bool) {
	sa, sb := a.Scale(), b.Scale()
	xm, xn := magnitude(a.Decimal128())
	ym, yn := magnitude(b.Decimal128())
	var zm u128
	var zn bool
	var zs int
	switch op {
	case '*':
		if xm.hi != 0 || ym.hi != 0 {
			return row.NullValue, false
		}
		h, l := bits.Mul64(xm.lo, ym.lo)
		zm, zn, zs = u128{h, l}, xn != yn, sa+sb
	case '+', '-':
		if op == '-' {
			yn = !yn
		}
		zs = max(sa, sb)
		var ok1, ok2 bool
		xm, ok1 = scaleUp(xm, zs-sa)
		ym, ok2 = scaleUp(ym, zs-sb)
		if !ok1 || !ok2 {
			return row.NullValue, false
		}
		switch {
		case xn == yn:
			var c uint64
			zm.lo, c = bits.Add64(xm.lo, ym.lo, 0)
			zm.hi, c = bits.Add64(xm.hi, ym.hi, c)
			if c != 0 {
				return row.NullValue, false
			}
			zn = xn
		case cmpU128(xm, ym) >= 0:
			zm, zn = subU128(xm, ym), xn
		default:
			zm, zn = subU128(ym, xm), yn
		}
	default:
		return row.NullValue, false
	}
	switch {
	case zs > s:
		if zs-s >= len(pow10u) {
			return row.NullValue, false
		}
		zm = divRoundU(zm, pow10u[zs-s])
	case zs < s:
		var ok bool
		if zm, ok = scaleUp(zm, s-zs); !ok {
			return row.NullValue, false
		}
	}
	z, ok := signedOf(zm, zn)
	if !ok {
		return row.NullValue, false
	}
	if !z.DigitsFit(p) {
		return row.NullValue, true // Flink's fromBigDecimal: NULL
	}
	return row.Decimal128Value(z, s), true
}

func subU128(a, b u128) u128 {
	lo, borrow := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, borrow)
	return u128{hi, lo}
}

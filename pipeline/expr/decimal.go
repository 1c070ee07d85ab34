package expr

import (
	"cmp"
	"errors"
	"math"
	"math/bits"
	"strconv"
)

// The int64 DECIMAL path: an unscaled value that fits an int64 and a
// scale. Intermediate products and quotients go through 128 bits so that
// nothing overflows before the final rounding to the result scale; what
// does not fit an int64 returns errDecimalOverflow and decArith retries
// it on the exact path (decimal_wide.go), which alone says NULL.
//
// Division rounds once, half up, at the result scale; Flink rounds to 38
// significant digits first. The two agree here: they differ only when the
// quotient's digits past the result scale are a run of 9s at least 19
// long, and a quotient with at most 19 digits over a divisor below 10^19
// cannot come that close to a half without being it.

var pow10 = [...]int64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
}

var (
	errDecimalOverflow = errors.New("DECIMAL overflow: the result does not fit its type")
	errDivByZero       = errors.New("division by zero")
)

func abs64(a int64) uint64 {
	if a < 0 {
		return uint64(-a)
	}
	return uint64(a)
}

// fits reports whether u has at most p digits.
func fits(u int64, p int) bool {
	if p >= len(pow10) {
		return true
	}
	return abs64(u) < uint64(pow10[p])
}

// signed applies a sign to a magnitude, refusing what int64 cannot hold.
func signed(u uint64, neg bool) (int64, bool) {
	if u > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// divRound128 divides the 128-bit hi:lo by d, rounding half up (away from
// zero on the magnitude). ok is false when the quotient needs more than 64
// bits.
func divRound128(hi, lo, d uint64) (uint64, bool) {
	if hi >= d {
		return 0, false
	}
	q, r := bits.Div64(hi, lo, d)
	if r >= d-r { // r*2 >= d without overflow
		q++
		if q == 0 {
			return 0, false
		}
	}
	return q, true
}

// rescale converts unscaled u from scale `from` to scale `to`, rounding
// half up when digits are dropped.
func rescale(u int64, from, to int) (int64, bool) {
	switch {
	case to == from:
		return u, true
	case to > from:
		k := to - from
		if k >= len(pow10) {
			return 0, u == 0
		}
		hi, lo := bits.Mul64(abs64(u), uint64(pow10[k]))
		if hi != 0 {
			return 0, false
		}
		return signed(lo, u < 0)
	}
	k := from - to
	if k >= len(pow10) {
		return 0, true // |u| < 10^19 < 10^k / 2
	}
	q, ok := divRound128(0, abs64(u), uint64(pow10[k]))
	if !ok {
		return 0, false
	}
	return signed(q, u < 0)
}

// decAdd adds at the larger operand scale, exactly, then rounds to s (an
// adjusted result type may have fewer fraction digits than an operand).
func decAdd(a int64, sa int, b int64, sb int, s, p int) (int64, error) {
	t := max(sa, sb)
	x, y := a, b
	if sa != t || sb != t {
		var ok1, ok2 bool
		x, ok1 = rescale(a, sa, t)
		y, ok2 = rescale(b, sb, t)
		if !ok1 || !ok2 {
			return 0, errDecimalOverflow
		}
	}
	z := x + y
	if (x >= 0) == (y >= 0) && (z >= 0) != (x >= 0) {
		return 0, errDecimalOverflow
	}
	if t != s {
		var ok bool
		if z, ok = rescale(z, t, s); !ok {
			return 0, errDecimalOverflow
		}
	}
	if !fits(z, p) {
		return 0, errDecimalOverflow
	}
	return z, nil
}

func decMul(a int64, sa int, b int64, sb int, s, p int) (int64, error) {
	hi, lo := bits.Mul64(abs64(a), abs64(b))
	neg := (a < 0) != (b < 0)
	k := sa + sb - s
	var q uint64
	switch {
	case k == 0:
		if hi != 0 {
			return 0, errDecimalOverflow
		}
		q = lo
	case k > 0 && k < len(pow10):
		var ok bool
		if q, ok = divRound128(hi, lo, uint64(pow10[k])); !ok {
			return 0, errDecimalOverflow
		}
	case k >= len(pow10) && k <= 2*(len(pow10)-1):
		// Divide by 10^(k-18) truncating, then by 10^18 rounding: the
		// first remainder never changes a half-up decision, because the
		// second divisor is a multiple of 10.
		d1 := uint64(pow10[k-(len(pow10)-1)])
		qh, r := hi/d1, hi%d1
		ql, _ := bits.Div64(r, lo, d1)
		var ok bool
		if q, ok = divRound128(qh, ql, uint64(pow10[len(pow10)-1])); !ok {
			return 0, errDecimalOverflow
		}
	default:
		// The result scale never exceeds sa+sb in Flink's rules; rescale
		// the other way for completeness.
		if hi != 0 {
			return 0, errDecimalOverflow
		}
		v, ok := signed(lo, neg)
		if !ok {
			return 0, errDecimalOverflow
		}
		r, ok := rescale(v, sa+sb, s)
		if !ok || !fits(r, p) {
			return 0, errDecimalOverflow
		}
		return r, nil
	}
	z, ok := signed(q, neg)
	if !ok || !fits(z, p) {
		return 0, errDecimalOverflow
	}
	return z, nil
}

// decDiv computes (a / 10^sa) / (b / 10^sb) at scale s, rounding half up
// as Flink's DecimalDataUtils.divide does.
func decDiv(a int64, sa int, b int64, sb int, s, p int) (int64, error) {
	if b == 0 {
		return 0, errDivByZero
	}
	neg := (a < 0) != (b < 0)
	// a * 10^(s - sa + sb) / b
	k := s - sa + sb
	num, den := abs64(a), abs64(b)
	var q uint64
	if k >= 0 {
		if k >= len(pow10) {
			if a == 0 {
				return 0, nil
			}
			return 0, errDecimalOverflow
		}
		hi, lo := bits.Mul64(num, uint64(pow10[k]))
		var ok bool
		if q, ok = divRound128(hi, lo, den); !ok {
			return 0, errDecimalOverflow
		}
	} else {
		if -k >= len(pow10) {
			return 0, nil
		}
		hi, d := bits.Mul64(den, uint64(pow10[-k]))
		if hi != 0 || d >= 1e19 {
			// Past 10^19 Flink's rounding to 38 significant digits before
			// the rounding to s could differ from one rounding: the exact
			// path decides.
			return 0, errDecimalOverflow
		}
		var ok bool
		if q, ok = divRound128(0, num, d); !ok {
			return 0, errDecimalOverflow
		}
	}
	z, ok := signed(q, neg)
	if !ok || !fits(z, p) {
		return 0, errDecimalOverflow
	}
	return z, nil
}

// decMod is Java's BigDecimal.remainder (the sign of the dividend), at
// the larger operand scale, then rounded to s.
func decMod(a int64, sa int, b int64, sb int, s, p int) (int64, error) {
	t := max(sa, sb)
	x, ok1 := rescale(a, sa, t)
	y, ok2 := rescale(b, sb, t)
	if !ok1 || !ok2 {
		return 0, errDecimalOverflow
	}
	if y == 0 {
		return 0, errDivByZero
	}
	z := int64(0)
	if y != -1 {
		z = x % y
	}
	z, ok := rescale(z, t, s)
	if !ok || !fits(z, p) {
		return 0, errDecimalOverflow
	}
	return z, nil
}

// decCmp compares two decimals exactly.
func decCmp(a int64, sa int, b int64, sb int) int {
	if sa == sb {
		return cmp.Compare(a, b)
	}
	if (a < 0) != (b < 0) {
		if a < 0 {
			return -1
		}
		return 1
	}
	// Same sign: compare magnitudes at the larger scale in 128 bits.
	ua, ub := abs64(a), abs64(b)
	var ahi, alo, bhi, blo uint64
	if sa < sb {
		ahi, alo = bits.Mul64(ua, uint64(pow10[min(sb-sa, 18)]))
		blo = ub
	} else {
		bhi, blo = bits.Mul64(ub, uint64(pow10[min(sa-sb, 18)]))
		alo = ua
	}
	c := 0
	switch {
	case ahi != bhi:
		c = cmp.Compare(ahi, bhi)
	default:
		c = cmp.Compare(alo, blo)
	}
	if a < 0 {
		return -c
	}
	return c
}

// decToFloat converts a decimal to float64.
func decToFloat(u int64, s int) float64 {
	if s < len(pow10) && abs64(u) < 1<<53 {
		return float64(u) / float64(pow10[s])
	}
	return float64(u) / math.Pow10(s)
}

// decFromFloat converts f to a decimal of scale s and precision p, going
// through f's shortest decimal text as Java's BigDecimal.valueOf(double)
// does, rounding half up. The digits live in a stack buffer: no
// allocation.
func decFromFloat(f float64, s, p int) (int64, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("cannot convert " + strconv.FormatFloat(f, 'g', -1, 64) + " to DECIMAL")
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	// b is [-]d[.ddd]e±xx
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var mant uint64
	nd := 0
	i := 0
	for ; i < len(b) && b[i] != 'e'; i++ {
		if b[i] == '.' {
			continue
		}
		mant = mant*10 + uint64(b[i]-'0')
		nd++
	}
	exp, expNeg := 0, false
	for _, c := range b[i+1:] {
		switch c {
		case '-':
			expNeg = true
		case '+':
		default:
			exp = exp*10 + int(c-'0')
		}
	}
	if expNeg {
		exp = -exp
	}
	// value = mant * 10^(exp - (nd-1))
	e := exp - (nd - 1) + s // scale the value by 10^s
	var u uint64
	switch {
	case e >= 0:
		if e >= len(pow10) {
			if mant == 0 {
				return 0, nil
			}
			return 0, errDecimalOverflow
		}
		hi, lo := bits.Mul64(mant, uint64(pow10[e]))
		if hi != 0 {
			return 0, errDecimalOverflow
		}
		u = lo
	case -e >= len(pow10):
		u = 0
	default:
		var ok bool
		if u, ok = divRound128(0, mant, uint64(pow10[-e])); !ok {
			return 0, errDecimalOverflow
		}
	}
	z, ok := signed(u, neg)
	if !ok || !fits(z, p) {
		return 0, errDecimalOverflow
	}
	return z, nil
}

package expr

import (
	"errors"
	"math/big"
	"strconv"

	"github.com/etld/etld/pipeline/row"
)

// The wide DECIMAL path. Values that fit an int64 compute in int64
// and 128-bit intermediates (decimal.go) and never allocate; a value past
// int64, or a result the int64 path cannot hold, computes here exactly in
// math/big, as Flink's DecimalDataUtils falls back from its compact long
// to BigDecimal. Results follow DecimalData.fromBigDecimal: rounded half
// up to the result scale, NULL when more digits than the precision remain.

var bigTen = big.NewInt(10)

func bigPow10(k int) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(k)), nil) }

// bigOf is the unscaled value of a DECIMAL, INT or BIGINT value.
func bigOf(v row.Value) *big.Int { return v.Decimal128().Big(new(big.Int)) }

// roundBig divides a non-negative x by 10^k rounding half up (k > 0) or
// multiplies it by 10^-k (k <= 0), in place.
func roundBig(x *big.Int, k int) *big.Int {
	switch {
	case k < 0:
		return x.Mul(x, bigPow10(-k))
	case k == 0:
		return x
	}
	d := bigPow10(k)
	r := new(big.Int)
	x.QuoRem(x, d, r)
	if r.Lsh(r, 1).Cmp(d) >= 0 {
		x.Add(x, big.NewInt(1))
	}
	return x
}

// roundHalfUp divides x by 10^k (k > 0) rounding half away from zero, as
// Java's RoundingMode.HALF_UP; k <= 0 multiplies. x is changed.
func roundHalfUp(x *big.Int, k int) *big.Int {
	if k <= 0 {
		return roundBig(x, k)
	}
	neg := x.Sign() < 0
	x.Abs(x)
	roundBig(x, k)
	if neg {
		x.Neg(x)
	}
	return x
}

// bigResult is fromBigDecimal(x × 10^-s, p, s) for an x already at scale
// s: the DECIMAL value, or NULL when it has more than p digits.
func bigResult(x *big.Int, s, p int) row.Value {
	u, ok := row.Int128FromBig(x)
	if !ok || !u.DigitsFit(p) {
		return row.NullValue
	}
	return row.Decimal128Value(u, s)
}

// decArith applies + - * / % to two DECIMAL (or integer) values giving
// DECIMAL(p, s): the int64 path when it can, the exact one otherwise. An
// overflow is NULL, as in Flink; a zero divisor an error (Flink's
// BigDecimal throws).
func decArith(op byte, a, b row.Value, s, p int) (row.Value, error) {
	if !a.WideDecimal() && !b.WideDecimal() {
		u, err := decOp(op, a.Int64(), a.Scale(), b.Int64(), b.Scale(), s, p)
		switch {
		case err == nil:
			return row.DecimalValue(u, s), nil
		case !errors.Is(err, errDecimalOverflow):
			return row.NullValue, err
		}
	}
	if v, ok := arith128(op, a, b, s, p); ok {
		return v, nil
	}
	return wideArith(op, a, b, s, p)
}

func wideArith(op byte, a, b row.Value, s, p int) (row.Value, error) {
	x, y := bigOf(a), bigOf(b)
	sa, sb := a.Scale(), b.Scale()
	var z *big.Int
	zs := 0 // z's scale before rounding to s
	switch op {
	case '+', '-', '%':
		zs = max(sa, sb)
		roundBig(x, sa-zs) // exact: zs >= sa, sb
		roundBig(y, sb-zs)
		switch op {
		case '+':
			z = x.Add(x, y)
		case '-':
			z = x.Sub(x, y)
		default:
			if y.Sign() == 0 {
				return row.NullValue, errDivByZero
			}
			z = x.Rem(x, y) // truncated: the sign of the dividend, as BigDecimal.remainder
		}
	case '*':
		z, zs = x.Mul(x, y), sa+sb
	case '/':
		if y.Sign() == 0 {
			return row.NullValue, errDivByZero
		}
		z, zs = divide38(x, sa, y, sb, s)
	}
	return bigResult(roundHalfUp(z, zs-s), s, p), nil
}

// divide38 is BigDecimal.divide(divisor, new MathContext(38, HALF_UP)),
// which Flink's DecimalDataUtils.divide calls before rounding to the
// result scale: the quotient rounded to 38 significant digits. It returns
// the unscaled quotient and its scale (at least s, so the caller's
// rounding to s applies the second rounding exactly as Flink's setScale).
func divide38(x *big.Int, sa int, y *big.Int, sb int, s int) (*big.Int, int) {
	if x.Sign() == 0 {
		return x, s
	}
	neg := (x.Sign() < 0) != (y.Sign() < 0)
	x.Abs(x)
	y.Abs(y)
	// |x/y| >= 10^(e-1) with e the digit-count difference; a scale t with
	// e-1+t >= 39 gives a truncated quotient of at least 39 digits, so the
	// 38-digit rounding below always drops at least one digit.
	e := (len(x.String()) - sa) - (len(y.String()) - sb)
	t := max(s, 40-e)
	// q = floor(x × 10^(t - sa + sb) / y) is the quotient at scale t.
	k := t - sa + sb
	if k >= 0 {
		x.Mul(x, bigPow10(k))
	} else {
		y.Mul(y, bigPow10(-k))
	}
	q := x.Quo(x, y)
	if drop := len(q.String()) - 38; drop > 0 {
		// The remainder of the division is below one unit at scale t, so it
		// never moves the dropped digits across the half: HALF_UP on q
		// alone is HALF_UP on the exact quotient.
		roundBig(q, drop)
		t -= drop
	}
	if neg {
		q.Neg(q)
	}
	return q, t
}

// wideToLong is Java's BigDecimal.longValue after setScale(0, DOWN), which
// Flink's DecimalDataUtils.castToIntegral returns: truncation toward
// zero, then the low 64 bits.
func wideToLong(v row.Value) int64 {
	x := bigOf(v)
	x.Quo(x, bigPow10(v.Scale()))
	u, _ := row.Int128FromBig(x) // |x| < 10^38 fits
	return int64(u.Lo)
}

// wideFromFloat is fromBigDecimal(BigDecimal.valueOf(f), p, s) where the
// int64 path cannot hold it: f's shortest text, rounded half up to s.
func wideFromFloat(f float64, s, p int) row.Value {
	v, err := row.ParseText(strconv.FormatFloat(f, 'e', -1, 64), row.Type{ID: row.Decimal, Precision: p, Scale: s})
	if err != nil {
		return row.NullValue // does not fit: NULL, as in Flink
	}
	return v
}

// wideRound is ROUND (or TRUNCATE) of v to d places, Flink's
// DecimalDataUtils.sround: the value at d places, half up, given at scale
// s (0 when d < 0), NULL when it exceeds p digits.
func wideRound(v row.Value, d, s, p int, trunc bool) row.Value {
	x := bigOf(v)
	k := v.Scale() - d // > 0
	if trunc {
		x.Quo(x, bigPow10(k))
	} else {
		roundHalfUp(x, k)
	}
	if d < 0 {
		x.Mul(x, bigPow10(-d))
	}
	return bigResult(x, s, p)
}

// wideFloorCeil is FLOOR or CEIL of v at scale 0.
func wideFloorCeil(v row.Value, floor bool) row.Value {
	x := bigOf(v)
	q, m := new(big.Int).DivMod(x, bigPow10(v.Scale()), new(big.Int)) // Euclidean: m >= 0
	if !floor && m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return bigResult(q, 0, maxPrec)
}

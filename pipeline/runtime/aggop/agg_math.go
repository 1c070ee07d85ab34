package aggop

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/etld/etld/pipeline/row"
)

// moments computes STDDEV_POP/SAMP and VAR_POP/SAMP from the sum, the sum
// of squares and the count, as (Σx² - (Σx)²/n) / n (or n-1), the square
// root for STDDEV; an INT or BIGINT argument gets the result truncated to
// its type, as Flink 2.3 gives it. NULL for no values, and for the sample
// variants of a single value.
func moments(a *aggSlot, m []int64) row.Value {
	n := m[2]
	f := a.call.Func
	samp := f == StddevSamp || f == VarSamp
	root := f == StddevPop || f == StddevSamp
	den := n
	if samp {
		den = n - 1
	}
	if n <= 0 || den <= 0 {
		return row.NullValue
	}
	if a.kind == accMomF64 {
		sum, sq := math.Float64frombits(uint64(m[0])), math.Float64frombits(uint64(m[1]))
		v := (sq - sum*sum/float64(n)) / float64(den)
		if root {
			v = math.Sqrt(v)
		}
		if a.call.ArgType.ID == row.Float {
			return row.FloatValue(float32(v))
		}
		return row.DoubleValue(v)
	}
	// An INT or BIGINT argument: Flink 2.3 computes the variance of the
	// sums as a fraction and truncates only the result to the argument's
	// type (VAR_SAMP of 4 and 1 is trunc(4.5) = 4; conformance's
	// fn-agg-var* cases), and a square root is truncated the same way.
	sum, sq := float64(m[0]), float64(m[1])
	v := (sq - sum*sum/float64(n)) / float64(den)
	if root {
		v = math.Sqrt(v)
	}
	if a.call.ArgType.ID == row.Int {
		// Java's (int) of a double saturates.
		return row.IntValue(int32(a.call.ArgType.WrapInt(max(min(row.JavaLong(v), math.MaxInt32), math.MinInt32))))
	}
	return row.BigIntValue(row.JavaLong(v))
}

// add128 adds v to the 128-bit integer (lo, hi).
func add128(lo, hi, v int64) (int64, int64) {
	return add128x(lo, hi, v, v>>63)
}

func add128x(lo, hi, lo2, hi2 int64) (int64, int64) {
	l, carry := bits.Add64(uint64(lo), uint64(lo2), 0)
	h, _ := bits.Add64(uint64(hi), uint64(hi2), carry)
	return int64(l), int64(h)
}

// fit128 returns (lo, hi) as an int64 when it fits.
func fit128(lo, hi int64) (int64, bool) { return lo, hi == lo>>63 }

func big128(lo, hi int64) *big.Int {
	b := new(big.Int).SetInt64(hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(uint64(lo)))
}

var pow10 = [...]int64{1, 10, 100, 1000, 10_000, 100_000, 1_000_000}

// avgDecimal divides the sum (lo, hi) of n values of scale s by n, at
// scale max(6, s), as Flink's DECIMAL AVG does (sum / count with
// DecimalDataUtils.divide: 38 significant digits, then HALF_UP to the
// scale); NULL when the result does not fit DECIMAL(38).
func avgDecimal(lo, hi, n int64, s int) row.Value {
	rs := avgDecimalScale(s)
	k := rs - s // 0..6
	if n <= 0 {
		return row.NullValue
	}
	if v, ok := fit128(lo, hi); ok && v > math.MinInt64/pow10[k] && v < math.MaxInt64/pow10[k] {
		// One rounding equals Flink's two here: the quotient has at most
		// 19 digits and the divisor is below 10^19 (see expr's decimal.go).
		y := v * pow10[k]
		q, r := y/n, y%n
		if r < 0 {
			r = -r
		}
		if uint64(r)*2 >= uint64(n) {
			if y < 0 {
				q--
			} else {
				q++
			}
		}
		return row.DecimalValue(q, rs)
	}
	// The exact path: the quotient at a scale t giving at least 40
	// digits, rounded half up to 38 significant digits, then to rs.
	y := big128(lo, hi)
	neg := y.Sign() < 0
	y.Abs(y)
	t := rs + 40
	y.Mul(y, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t-s)), nil))
	q := y.Quo(y, big.NewInt(n))
	roundDrop := func(drop int) {
		if drop <= 0 {
			return
		}
		d := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(drop)), nil)
		r := new(big.Int)
		q.QuoRem(q, d, r)
		if r.Lsh(r, 1).Cmp(d) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		t -= drop
	}
	roundDrop(len(q.String()) - 38)
	roundDrop(t - rs)
	for ; t < rs; t++ {
		q.Mul(q, big.NewInt(10))
	}
	if neg {
		q.Neg(q)
	}
	x, ok := row.Int128FromBig(q)
	if !ok || !x.DigitsFit(row.MaxDecimalPrecision) {
		return row.NullValue
	}
	return row.Decimal128Value(x, rs)
}

package runtime

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/etld/etld/pipeline/row"
)

// moments computes STDDEV_POP/SAMP and VAR_POP/SAMP from the sum, the sum
// of squares and the count, the way Flink computes them: Calcite rewrites
// the call to (Σx² - (Σx)²/n) / n (or n-1) in the argument's type, so an
// INT or BIGINT argument gives integer arithmetic (wrapping, truncating)
// and the square root is truncated back to the argument type. NULL for no
// values, and for the sample variants of a single value.
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
	sum, sq := m[0], m[1]
	sumSq := sum * sum
	isInt := a.call.ArgType.ID == row.Int
	if isInt {
		sum, sq = int64(int32(sum)), int64(int32(sq))
		sumSq = int64(int32(sum) * int32(sum))
	}
	v := (sq - sumSq/n) / den
	if root {
		v = row.JavaLong(math.Sqrt(float64(v)))
	}
	if isInt {
		return row.IntValue(javaInt(v, root))
	}
	return row.BigIntValue(v)
}

// javaInt narrows v to INT: a square root (from a double) saturates as
// Java's (int) cast of a double; an integer variance wraps as (int) of a
// long.
func javaInt(v int64, saturate bool) int32 {
	if saturate {
		return int32(max(min(v, math.MaxInt32), math.MinInt32))
	}
	return int32(v)
}

// maxDecimal18 is 10^18: DECIMAL(18, s) holds unscaled values below it.
const maxDecimal18 = 1_000_000_000_000_000_000

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
// scale max(6, s), rounding half away from zero (Flink's HALF_UP); NULL
// when the result does not fit DECIMAL(18).
func avgDecimal(lo, hi, n int64, s int) row.Value {
	rs := avgDecimalScale(s)
	k := rs - s // 0..6
	if v, ok := fit128(lo, hi); ok && v > math.MinInt64/pow10[k] && v < math.MaxInt64/pow10[k] && n > 0 {
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
		if q > -maxDecimal18 && q < maxDecimal18 {
			return row.DecimalValue(q, rs)
		}
		return row.NullValue
	}
	y := big128(lo, hi)
	y.Mul(y, big.NewInt(pow10[k]))
	bn := big.NewInt(n)
	q, r := new(big.Int).QuoRem(y, bn, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(new(big.Int).Abs(bn)) >= 0 {
		if y.Sign()*bn.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	if !q.IsInt64() || q.Int64() <= -maxDecimal18 || q.Int64() >= maxDecimal18 {
		return row.NullValue
	}
	return row.DecimalValue(q.Int64(), rs)
}

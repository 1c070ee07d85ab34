package expr

import (
	"cmp"
	"math"
	"math/big"
	"strconv"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

func init() {
	register(map[string]*funcDef{
		"ABS":      {min: 1, max: 1, build: buildAbs},
		"SIGN":     {min: 1, max: 1, build: buildSign},
		"ROUND":    {min: 1, max: 2, build: buildRound(false)},
		"TRUNCATE": {min: 1, max: 2, build: buildRound(true)},
		"FLOOR":    {min: 1, max: 1, toUnit: true, build: buildFloorCeil(true)},
		"CEIL":     {min: 1, max: 1, toUnit: true, build: buildFloorCeil(false)},
		"CEILING":  {min: 1, max: 1, toUnit: true, build: buildFloorCeil(false)},
		"MOD": {min: 2, max: 2, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) {
			return c.arith(e, e.At, sql.OpMod, a[0], a[1])
		}},
		"POWER":   {min: 2, max: 2, build: double2(math.Pow)},
		"POW":     {min: 2, max: 2, build: double2(math.Pow)},
		"ATAN2":   {min: 2, max: 2, build: double2(math.Atan2)},
		"SQRT":    {min: 1, max: 1, build: double1(math.Sqrt)},
		"LN":      {min: 1, max: 1, build: double1(math.Log)},
		"LOG10":   {min: 1, max: 1, build: double1(math.Log10)},
		"LOG2":    {min: 1, max: 1, build: double1(math.Log2)},
		"LOG":     {min: 1, max: 2, build: buildLog},
		"EXP":     {min: 1, max: 1, build: double1(math.Exp)},
		"SIN":     {min: 1, max: 1, build: double1(math.Sin)},
		"COS":     {min: 1, max: 1, build: double1(math.Cos)},
		"TAN":     {min: 1, max: 1, build: double1(math.Tan)},
		"COT":     {min: 1, max: 1, build: double1(func(x float64) float64 { return 1 / math.Tan(x) })},
		"ASIN":    {min: 1, max: 1, build: double1(math.Asin)},
		"ACOS":    {min: 1, max: 1, build: double1(math.Acos)},
		"ATAN":    {min: 1, max: 1, build: double1(math.Atan)},
		"SINH":    {min: 1, max: 1, build: double1(math.Sinh)},
		"COSH":    {min: 1, max: 1, build: double1(math.Cosh)},
		"TANH":    {min: 1, max: 1, build: double1(math.Tanh)},
		"DEGREES": {min: 1, max: 1, build: double1(func(x float64) float64 { return x * 180 / math.Pi })},
		"RADIANS": {min: 1, max: 1, build: double1(func(x float64) float64 { return x * math.Pi / 180 })},
		"PI":      {min: 0, max: 0, build: constDouble(math.Pi)},
		"E":       {min: 0, max: 0, build: constDouble(math.E)},
	})
}

func doubleType(args ...*node) row.Type {
	return row.Type{ID: row.Double, NotNull: allNotNull(args...)}
}

// double1 and double2 are functions computed in DOUBLE, as Java's Math:
// out-of-domain arguments give NaN (LN(-1)), not errors.
func double1(f func(float64) float64) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		if err := check(e, args, "a number", isNumber); err != nil {
			return nil, err
		}
		return c.fn1(e, doubleType(args...), args[0], func(v row.Value) (row.Value, error) {
			return row.DoubleValue(f(toFloat(v))), nil
		})
	}
}

func double2(f func(x, y float64) float64) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		if err := check(e, args, "a number", isNumber); err != nil {
			return nil, err
		}
		return c.fn2(e, doubleType(args...), args[0], args[1], func(a, b row.Value) (row.Value, error) {
			return row.DoubleValue(f(toFloat(a), toFloat(b))), nil
		})
	}
}

func constDouble(x float64) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		return constNode(e, row.Type{ID: row.Double, NotNull: true}, row.DoubleValue(x)), nil
	}
}

// buildLog is LOG(x), the natural logarithm, or LOG(base, x).
func buildLog(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if len(args) == 1 {
		return double1(math.Log)(c, e, args)
	}
	return double2(func(b, x float64) float64 { return math.Log(x) / math.Log(b) })(c, e, args)
}

func buildAbs(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a number", isNumber); err != nil {
		return nil, err
	}
	x := args[0]
	t := x.t
	if t.ID == row.Null {
		return nullNode(e, row.Type{ID: row.Int}, x), nil
	}
	var f func(v row.Value) (row.Value, error)
	switch t.ID {
	case row.Int:
		// Java's Math.abs and the cast back: the most negative value of
		// the type stays negative (ABS of TINYINT -128 is -128).
		f = func(v row.Value) (row.Value, error) { return intResult(t, max(v.Int64(), -v.Int64())), nil }
	case row.BigInt:
		f = func(v row.Value) (row.Value, error) {
			i := v.Int64()
			if i < 0 {
				i = -i
			}
			return row.BigIntValue(i), nil
		}
	case row.Float:
		f = func(v row.Value) (row.Value, error) { return row.FloatValue(float32(math.Abs(v.Float64()))), nil }
	case row.Double:
		f = func(v row.Value) (row.Value, error) { return row.DoubleValue(math.Abs(v.Float64())), nil }
	case row.Decimal:
		f = func(v row.Value) (row.Value, error) {
			if u := v.Decimal128(); u.Sign() < 0 {
				return row.Decimal128Value(u.Neg(), v.Scale()), nil
			}
			return v, nil
		}
	}
	return c.fn1(e, t, x, f)
}

func buildSign(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a number", isNumber); err != nil {
		return nil, err
	}
	x := args[0]
	t := x.t
	if t.ID == row.Null {
		return nullNode(e, row.Type{ID: row.Int}, x), nil
	}
	return c.fn1(e, t, x, func(v row.Value) (row.Value, error) {
		switch t.ID {
		case row.Float, row.Double:
			f := v.Float64()
			s := 0.0
			switch {
			case f > 0:
				s = 1
			case f < 0:
				s = -1
			case f != f:
				s = f
			}
			if t.ID == row.Float {
				return row.FloatValue(float32(s)), nil
			}
			return row.DoubleValue(s), nil
		case row.Decimal:
			sign := v.Decimal128().Sign()
			if v.Scale() < len(pow10) {
				return row.DecimalValue(int64(sign)*pow10[v.Scale()], v.Scale()), nil
			}
			return bigResult(roundBig(big.NewInt(int64(sign)), -v.Scale()), v.Scale(), maxPrec), nil
		}
		return intResult(t, int64(cmp.Compare(v.Int64(), 0))), nil
	})
}

// roundUnscaled divides u by 10^k rounding half up (or toward zero when
// trunc) and returns the quotient.
func roundUnscaled(u int64, k int, trunc bool) int64 {
	if k <= 0 {
		return u
	}
	if k >= len(pow10) {
		// |u| < 9.3e18: only k = 19 can still round up, to ±1.
		if !trunc && k == len(pow10) && abs64(u) >= 5e18 {
			return int64(cmp.Compare(u, 0))
		}
		return 0
	}
	q, r := u/pow10[k], u%pow10[k]
	if !trunc && abs64(r)*2 >= uint64(pow10[k]) {
		if u < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}

// roundInt rounds an integer to 10^-d (d < 0); d >= 0 leaves it alone.
func roundInt(i int64, d int64, trunc bool) (int64, bool) {
	if d >= 0 {
		return i, true
	}
	k := int(min(-d, 19))
	q := roundUnscaled(i, k, trunc)
	if k >= len(pow10) {
		return 0, true
	}
	r := q * pow10[k]
	if q != 0 && r/pow10[k] != q {
		return 0, false
	}
	return r, true
}

// roundFloat rounds x to d decimal places as Flink does: through the
// shortest decimal text of x (BigDecimal.valueOf), half up. ROUND(2.675, 2)
// is 2.68 although the binary 2.675 is a little less.
func roundFloat(x float64, d int64, trunc bool) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], x, 'e', -1, 64)
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var digits [20]byte
	nd := 0
	i := 0
	for ; b[i] != 'e'; i++ {
		if b[i] != '.' {
			digits[nd] = b[i]
			nd++
		}
	}
	exp := 0
	expNeg := false
	for _, ch := range b[i+1:] {
		switch ch {
		case '-':
			expNeg = true
		case '+':
		default:
			exp = exp*10 + int(ch-'0')
		}
	}
	if expNeg {
		exp = -exp
	}
	// x = 0.d1d2...dn × 10^(exp+1); keep k digits.
	k := int64(exp+1) + d
	if k >= int64(nd) {
		return x
	}
	var m uint64
	if k > 0 {
		for _, ch := range digits[:k] {
			m = m*10 + uint64(ch-'0')
		}
	}
	if !trunc && k >= 0 && digits[k] >= '5' {
		m++
	}
	var r float64
	switch {
	case m == 0:
		return 0
	case m < 1<<53 && d > 0 && d <= 22:
		r = float64(m) / math.Pow10(int(d))
	case m < 1<<53 && d <= 0 && d >= -22:
		r = float64(m) * math.Pow10(int(-d))
	default:
		s := strconv.FormatUint(m, 10) + "e" + strconv.FormatInt(-d, 10)
		r, _ = strconv.ParseFloat(s, 64)
	}
	if neg {
		r = -r
	}
	return r
}

// buildRound is ROUND(x [, d]) (half up) and TRUNCATE(x [, d]) (toward
// zero), with Flink's result types: integers and floating point keep
// their type, DECIMAL(p, s) becomes DECIMAL(p - s + d + 1, d) for d < s.
func buildRound(trunc bool) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		if err := check(e, args, "a number", isNumber, 0); err != nil {
			return nil, err
		}
		if err := check(e, args, "an integer", isInteger, 1); err != nil {
			return nil, err
		}
		x := args[0]
		dn := constNode(e, row.Type{ID: row.Int, NotNull: true}, row.IntValue(0))
		if len(args) == 2 {
			dn = args[1]
		}
		t := x.t
		t.NotNull = allNotNull(x, dn)
		if t.ID == row.Null {
			return nullNode(e, row.Type{ID: row.Int}, args...), nil
		}
		switch t.ID {
		case row.Int, row.BigInt:
			return c.fn2(e, t, x, dn, func(v, d row.Value) (row.Value, error) {
				r, ok := roundInt(v.Int64(), d.Int64(), trunc)
				if !ok {
					return row.NullValue, errOverflow
				}
				return intResult(t, r), nil
			})
		case row.Float, row.Double:
			return c.fn2(e, t, x, dn, func(v, d row.Value) (row.Value, error) {
				r := roundFloat(v.Float64(), d.Int64(), trunc)
				if t.ID == row.Float {
					return row.FloatValue(float32(r)), nil
				}
				return row.DoubleValue(r), nil
			})
		}
		d := 0
		if len(args) == 2 {
			// The result type depends on d, so it must be known now.
			dv, err := constArg(e, args, 1, "the number of decimal places of a DECIMAL")
			if err != nil {
				return nil, err
			}
			if dv.IsNull() {
				return constNode(e, t, row.NullValue), nil
			}
			d = int(max(min(dv.Int64(), maxPrec), -maxPrec))
		}
		rt := roundDecimalType(t.Precision, t.Scale, d)
		rt.NotNull = t.NotNull
		p, s := rt.Precision, rt.Scale
		return c.fn1(e, rt, x, func(v row.Value) (row.Value, error) {
			u, vs := v.Unscaled(), v.Scale()
			if d >= vs {
				return v, nil
			}
			if v.WideDecimal() || vs-d >= len(pow10) {
				return wideRound(v, d, s, p, trunc), nil
			}
			// q counts units of 10^-d.
			q := roundUnscaled(u, vs-d, trunc)
			if d < 0 {
				k := -d
				if k >= len(pow10) {
					return row.DecimalValue(0, 0), nil
				}
				r := q * pow10[k]
				if q != 0 && r/pow10[k] != q {
					return wideRound(v, d, s, p, trunc), nil
				}
				q = r
			}
			if !fits(q, p) {
				return row.NullValue, nil // Flink's fromBigDecimal: NULL
			}
			return row.DecimalValue(q, s), nil
		})
	}
}

// buildFloorCeil is FLOOR(x) or CEIL(x): integers unchanged, floating
// point stays floating point, DECIMAL(p, s) gives DECIMAL(p, 0). With a
// unit (FLOOR(t TO DAY)) it rounds a time (funcs_floorceil.go).
func buildFloorCeil(floor bool) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		if e.Unit != "" {
			return c.buildFloorCeilTo(e, args[0], floor)
		}
		if err := check(e, args, "a number", isNumber); err != nil {
			return nil, err
		}
		x := args[0]
		t := x.t
		switch t.ID {
		case row.Null:
			return nullNode(e, row.Type{ID: row.Int}, x), nil
		case row.Int, row.BigInt:
			return x, nil
		case row.Float, row.Double:
			g := math.Ceil
			if floor {
				g = math.Floor
			}
			return c.fn1(e, t, x, func(v row.Value) (row.Value, error) {
				if t.ID == row.Float {
					return row.FloatValue(float32(g(v.Float64()))), nil
				}
				return row.DoubleValue(g(v.Float64())), nil
			})
		}
		// Calcite's ARG0_OR_EXACT_NO_SCALE, which Flink keeps: the
		// precision stays, the scale goes (FLOOR of DECIMAL(10, 2) is
		// DECIMAL(10, 0); the value always fits).
		rt := decimalType(t.Precision, 0)
		rt.NotNull = t.NotNull
		return c.fn1(e, rt, x, func(v row.Value) (row.Value, error) {
			u, s := v.Unscaled(), v.Scale()
			if s == 0 {
				return v, nil
			}
			if v.WideDecimal() {
				return wideFloorCeil(v, floor), nil
			}
			if s >= len(pow10) {
				return row.DecimalValue(0, 0), nil
			}
			q := u / pow10[s]
			rem := u % pow10[s]
			if floor && rem < 0 {
				q--
			} else if !floor && rem > 0 {
				q++
			}
			return row.DecimalValue(q, 0), nil
		})
	}
}

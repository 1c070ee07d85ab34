package expr

import (
	"errors"
	"fmt"
	"math"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

var errOverflow = errors.New("the result is out of range")

// bin evaluates both operands, propagates NULL and applies f.
func bin(le, re evalFn, f func(a, b row.Value) (row.Value, error)) evalFn {
	return func(r row.Row) (row.Value, error) {
		a, err := le(r)
		if err != nil || a.IsNull() {
			return row.NullValue, err
		}
		b, err := re(r)
		if err != nil || b.IsNull() {
			return row.NullValue, err
		}
		return f(a, b)
	}
}

func opByte(op sql.BinaryOp) byte {
	switch op {
	case sql.OpAdd:
		return '+'
	case sql.OpSub:
		return '-'
	case sql.OpMul:
		return '*'
	case sql.OpDiv:
		return '/'
	case sql.OpMod:
		return '%'
	}
	return 0
}

func negate(x *node) (evalFn, error) {
	ev := x.eval
	var f func(v row.Value) row.Value
	switch x.t.ID {
	case row.Null:
		return nullEval(x), nil
	case row.Int:
		// -(-128) is -128 again in TINYINT, as Java's (byte) cast gives.
		t := x.t
		f = func(v row.Value) row.Value { return row.IntValue(int32(t.WrapInt(-v.Int64()))) }
	case row.BigInt:
		f = func(v row.Value) row.Value { return row.BigIntValue(-v.Int64()) }
	case typeInterval, typeIntervalYM:
		f = func(v row.Value) row.Value { return row.BigIntValue(-v.Int64()) }
	case row.Float:
		f = func(v row.Value) row.Value { return row.FloatValue(-float32(v.Float64())) }
	case row.Double:
		f = func(v row.Value) row.Value { return row.DoubleValue(-v.Float64()) }
	case row.Decimal:
		f = func(v row.Value) row.Value { return row.Decimal128Value(v.Decimal128().Neg(), v.Scale()) }
	default:
		return nil, fmt.Errorf("unary - needs a number, not %s", typeName(x.t))
	}
	return func(r row.Row) (row.Value, error) {
		v, err := ev(r)
		if err != nil || v.IsNull() {
			return v, err
		}
		return f(v), nil
	}, nil
}

// arith compiles + - * / % between numbers, and timestamp arithmetic with
// intervals.
func (c *compiler) arith(e sql.Expr, opAt sql.Pos, bop sql.BinaryOp, l, r *node) (*node, error) {
	op := opByte(bop)
	lt, rt := l.t, r.t
	if lt.ID.Temporal() || rt.ID.Temporal() || isInterval(lt.ID) || isInterval(rt.ID) {
		return c.timeArith(e, opAt, bop, l, r)
	}
	switch {
	case lt.ID == row.Null && rt.ID == row.Null:
		return nullNode(e, row.Type{ID: row.Int}, l, r), nil
	case lt.ID == row.Null:
		lt = rt
	case rt.ID == row.Null:
		rt = lt
	}
	if !lt.ID.Numeric() || !rt.ID.Numeric() {
		msg := fmt.Sprintf("cannot apply %s to %s and %s", bop, typeName(l.t), typeName(r.t))
		if op == '+' && (lt.ID == row.String || rt.ID == row.String) {
			msg += "; to join strings use || or CONCAT, to add numbers CAST the string"
		}
		return nil, errAt(opAt, "%s", msg)
	}
	t := arithType(op, lt, rt)
	if isApprox(t.ID) {
		// Convert constants to floating point once, not per row.
		l, r = floatConst(l), floatConst(r)
	}
	text := exprString(e)
	fail := func(err error) (row.Value, error) { return row.NullValue, evalErr(text, err) }
	var f func(a, b row.Value) (row.Value, error)
	switch t.ID {
	case row.Int, row.BigInt:
		// TINYINT, SMALLINT and INT results wrap to 8, 16 and 32 bits as
		// Java's arithmetic and narrowing casts do in Flink's code.
		wrap := t.ID == row.Int
		mk := func(x int64) row.Value {
			if wrap {
				return row.IntValue(int32(t.WrapInt(x)))
			}
			return row.BigIntValue(x)
		}
		switch op {
		case '+':
			f = func(a, b row.Value) (row.Value, error) { return mk(a.Int64() + b.Int64()), nil }
		case '-':
			f = func(a, b row.Value) (row.Value, error) { return mk(a.Int64() - b.Int64()), nil }
		case '*':
			f = func(a, b row.Value) (row.Value, error) { return mk(a.Int64() * b.Int64()), nil }
		case '/':
			f = func(a, b row.Value) (row.Value, error) {
				if b.Int64() == 0 {
					return fail(errDivByZero)
				}
				return mk(a.Int64() / b.Int64()), nil
			}
		case '%':
			f = func(a, b row.Value) (row.Value, error) {
				if b.Int64() == 0 {
					return fail(errDivByZero)
				}
				return mk(a.Int64() % b.Int64()), nil
			}
		}
	case row.Float:
		f = floatArith(op, func(x float64) row.Value { return row.FloatValue(float32(x)) }, true)
	case row.Double:
		f = floatArith(op, row.DoubleValue, false)
	case row.Decimal:
		p, s := t.Precision, t.Scale
		f = func(a, b row.Value) (row.Value, error) {
			v, err := decArith(op, a, b, s, p)
			if err != nil {
				return fail(err)
			}
			return v, nil
		}
		if op == '*' {
			if g := decConstMul(t, l, r, fail); g != nil {
				return c.finish(e, t, g, l, r)
			}
		}
		if r.konst && !r.val.IsNull() {
			// A constant operand is read once.
			le, k := l.eval, r.val
			g := func(rw row.Row) (row.Value, error) {
				v, err := le(rw)
				if err != nil || v.IsNull() {
					return row.NullValue, err
				}
				out, err := decArith(op, v, k, s, p)
				if err != nil {
					return fail(err)
				}
				return out, nil
			}
			return c.finish(e, t, g, l, r)
		}
	}
	if f == nil {
		return nil, errAt(opAt, "cannot apply %s to %s and %s", bop, typeName(l.t), typeName(r.t))
	}
	if g := fastArith(op, t, l, r); g != nil {
		return c.finish(e, t, g, l, r)
	}
	return c.finish(e, t, bin(l.eval, r.eval, f), l, r)
}

func floatConst(n *node) *node {
	if !n.konst || n.val.IsNull() || isApprox(n.t.ID) {
		return n
	}
	return constNode(n.e, row.Type{ID: row.Double, NotNull: true}, row.DoubleValue(toFloat(n.val)))
}

// floatArith is IEEE arithmetic as Java does it: x/0 is ±Infinity or NaN,
// % is fmod. FLOAT computes in float32.
func floatArith(op byte, mk func(float64) row.Value, f32 bool) func(a, b row.Value) (row.Value, error) {
	rd := func(v row.Value) float64 { return toFloat(v) }
	if f32 {
		rd = func(v row.Value) float64 { return float64(float32(toFloat(v))) }
	}
	var g func(x, y float64) float64
	switch op {
	case '+':
		g = func(x, y float64) float64 { return x + y }
	case '-':
		g = func(x, y float64) float64 { return x - y }
	case '*':
		g = func(x, y float64) float64 { return x * y }
	case '/':
		g = func(x, y float64) float64 { return x / y }
	case '%':
		g = math.Mod
	}
	if f32 {
		return func(a, b row.Value) (row.Value, error) {
			return mk(float64(float32(g(rd(a), rd(b))))), nil
		}
	}
	return func(a, b row.Value) (row.Value, error) { return mk(g(toFloat(a), toFloat(b))), nil }
}

// timeArith compiles timestamp ± interval, DATE ± interval, interval ±
// interval and interval × / integer.
func (c *compiler) timeArith(e sql.Expr, opAt sql.Pos, bop sql.BinaryOp, l, r *node) (*node, error) {
	op := opByte(bop)
	lt, rt := l.t.ID, r.t.ID
	text := exprString(e)
	notNull := l.t.NotNull && r.t.NotNull
	bad := func() (*node, error) {
		msg := fmt.Sprintf("cannot apply %s to %s and %s", bop, typeName(l.t), typeName(r.t))
		if lt.Temporal() && rt.Temporal() && op == '-' {
			msg += "; EXTRACT(EPOCH FROM a) - EXTRACT(EPOCH FROM b) gives the seconds between two times"
		}
		return nil, errAt(opAt, "%s", msg)
	}
	switch {
	case (lt == row.Time && rt == typeInterval && (op == '+' || op == '-')) || (lt == typeInterval && rt == row.Time && op == '+'):
		return c.addTimeOfDay(e, op, l, r, notNull)
	case (lt.Temporal() && rt == typeIntervalYM && (op == '+' || op == '-')) || (lt == typeIntervalYM && rt.Temporal() && op == '+'):
		return c.addYearMonth(e, op, l, r, notNull)
	case lt == typeIntervalYM && rt == typeIntervalYM && (op == '+' || op == '-'):
		f := func(a, b row.Value) (row.Value, error) {
			if op == '-' {
				return row.BigIntValue(a.Int64() - b.Int64()), nil
			}
			return row.BigIntValue(a.Int64() + b.Int64()), nil
		}
		return c.finish(e, row.Type{ID: typeIntervalYM, NotNull: notNull}, bin(l.eval, r.eval, f), l, r)
	case (lt.Temporal() && rt == typeInterval && (op == '+' || op == '-')) || (lt == typeInterval && rt.Temporal() && op == '+'):
		return c.addDayTime(e, text, op, l, r, notNull)
	case lt == typeInterval && rt == typeInterval && (op == '+' || op == '-'):
		sign := int64(1)
		if op == '-' {
			sign = -1
		}
		f := func(a, b row.Value) (row.Value, error) {
			us, err := addMicros(text, a.Int64(), sign*b.Int64())
			return row.BigIntValue(us), err
		}
		return c.finish(e, row.Type{ID: typeInterval, NotNull: notNull}, bin(l.eval, r.eval, f), l, r)
	case (lt == typeInterval && r.t.ID.Integral() && (op == '*' || op == '/')) || (l.t.ID.Integral() && rt == typeInterval && op == '*'):
		iv, n := l, r
		if rt == typeInterval {
			iv, n = r, l
		}
		f := func(a, b row.Value) (row.Value, error) {
			x, k := a.Int64(), b.Int64()
			if op == '/' {
				if k == 0 {
					return row.NullValue, evalErr(text, errDivByZero)
				}
				return row.BigIntValue(x / k), nil
			}
			p := x * k
			if k != 0 && (p/k != x || (x == math.MinInt64 && k == -1)) {
				return row.NullValue, evalErr(text, errOverflow)
			}
			return row.BigIntValue(p), nil
		}
		return c.finish(e, row.Type{ID: typeInterval, NotNull: notNull}, bin(iv.eval, n.eval, f), l, r)
	}
	return bad()
}

// addTimeOfDay compiles TIME ± day-time interval: a TIME moved by a
// day-time interval wraps around midnight, as Flink's int milliseconds of
// the day do.
func (c *compiler) addTimeOfDay(e sql.Expr, op byte, l, r *node, notNull bool) (*node, error) {
	lt := l.t.ID
	sign := int64(1)
	if op == '-' {
		sign = -1
	}
	t := l.t
	f := func(tm, iv row.Value) (row.Value, error) {
		return row.TimeOfTimestamp(tm.Micros() + sign*(iv.Int64()%row.MicrosPerDay)), nil
	}
	if lt == typeInterval {
		t = r.t
		g := f
		f = func(iv, tm row.Value) (row.Value, error) { return g(tm, iv) }
	}
	t.NotNull = notNull
	return c.finish(e, t, bin(l.eval, r.eval, f), l, r)
}

// addDayTime compiles a TIMESTAMP or DATE ± day-time interval.
func (c *compiler) addDayTime(e sql.Expr, text func() string, op byte, l, r *node, notNull bool) (*node, error) {
	lt := l.t.ID
	ts, iv := l, r
	if lt == typeInterval {
		ts, iv = r, l
	}
	sign := int64(1)
	if op == '-' {
		sign = -1
	}
	t := ts.t
	t.NotNull = notNull
	id := t.ID
	var f func(a, b row.Value) (row.Value, error)
	if id == row.Date {
		f = func(a, b row.Value) (row.Value, error) {
			// The date's midnight moved by the interval, floored to a day.
			d := floorDiv(int64(a.Days())*microsPerDay+sign*b.Int64(), microsPerDay)
			if d > math.MaxInt32 || d < math.MinInt32 {
				return row.NullValue, evalErr(text, errOverflow)
			}
			return row.DateValue(int32(d)), nil
		}
	} else {
		f = func(a, b row.Value) (row.Value, error) {
			us, err := addMicros(text, a.Micros(), sign*b.Int64())
			if err != nil {
				return row.NullValue, err
			}
			return tsValue(id, us), nil
		}
	}
	n, err := c.finish(e, t, bin(ts.eval, iv.eval, f), l, r)
	if err == nil && id != row.Date && !n.konst && ts.col >= 0 && iv.konst && !iv.val.IsNull() {
		n.shift = &shiftOf{col: ts.col, micros: sign * iv.val.Int64()}
	}
	return n, err
}

// addMicros adds two microsecond counts, an error on overflow.
func addMicros(text func() string, a, b int64) (int64, error) {
	s := a + b
	if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
		return 0, evalErr(text, errOverflow)
	}
	return s, nil
}

// decOp applies a DECIMAL operator to unscaled values with their scales,
// giving scale s and at most p digits.
func decOp(op byte, a int64, sa int, b int64, sb int, s, p int) (int64, error) {
	switch op {
	case '+':
		return decAdd(a, sa, b, sb, s, p)
	case '-':
		if b == math.MinInt64 {
			return 0, errDecimalOverflow
		}
		return decAdd(a, sa, -b, sb, s, p)
	case '*':
		return decMul(a, sa, b, sb, s, p)
	case '/':
		return decDiv(a, sa, b, sb, s, p)
	}
	return decMod(a, sa, b, sb, s, p)
}

// i64op applies op; callers rule out a zero divisor.
func i64op(op byte, a, b int64) int64 {
	switch op {
	case '+':
		return a + b
	case '-':
		return a - b
	case '*':
		return a * b
	case '/':
		return a / b
	}
	return a % b
}

func f64op(op byte, a, b float64) float64 {
	switch op {
	case '+':
		return a + b
	case '-':
		return a - b
	case '*':
		return a * b
	}
	return a / b
}

func f64(v row.Value) float64 { return math.Float64frombits(uint64(v.Int64())) }

// fastArith specialises the hottest arithmetic, integer + - * and DOUBLE
// + - * /, for operands that are columns or constants, so that a row
// costs one closure call and no per-operator dispatch. It returns nil for
// everything else.
func fastArith(op byte, t row.Type, l, r *node) evalFn {
	if l.konst || (r.konst && r.val.IsNull()) {
		return nil
	}
	// Integer division is fast only by a constant that is not zero: any
	// other divisor may fail, which the general path reports.
	safeDiv := (op != '/' && op != '%') || (r.konst && r.val.Int64() != 0)
	switch {
	case t.IntBits() >= 32 && safeDiv && l.t.ID.Integral() && r.t.ID.Integral():
		return intArith(op, t.ID == row.Int, l, r)
	case t.ID == row.Double && op != '%' && l.t.ID == row.Double && r.t.ID == row.Double:
		return doubleArith(op, l, r)
	}
	return nil
}

// intArith is fastArith's integer l op r, its result an INT (wrapping)
// when wrap, else a BIGINT.
func intArith(op byte, wrap bool, l, r *node) evalFn {
	mk := func(z int64) row.Value {
		if wrap {
			return row.IntValue(int32(z))
		}
		return row.BigIntValue(z)
	}
	switch {
	case l.col >= 0 && r.konst:
		i, k := l.col, r.val.Int64()
		return func(rw row.Row) (row.Value, error) {
			v := rw[i]
			if v.IsNull() {
				return v, nil
			}
			return mk(i64op(op, v.Int64(), k)), nil
		}
	case l.col >= 0 && r.col >= 0:
		i, j := l.col, r.col
		return func(rw row.Row) (row.Value, error) {
			a, b := rw[i], rw[j]
			if a.IsNull() || b.IsNull() {
				return row.NullValue, nil
			}
			return mk(i64op(op, a.Int64(), b.Int64())), nil
		}
	case r.konst:
		le, k := l.eval, r.val.Int64()
		return func(rw row.Row) (row.Value, error) {
			v, err := le(rw)
			if err != nil || v.IsNull() {
				return v, err
			}
			return mk(i64op(op, v.Int64(), k)), nil
		}
	default:
		le, re := l.eval, r.eval
		return func(rw row.Row) (row.Value, error) {
			a, err := le(rw)
			if err != nil || a.IsNull() {
				return row.NullValue, err
			}
			b, err := re(rw)
			if err != nil || b.IsNull() {
				return row.NullValue, err
			}
			return mk(i64op(op, a.Int64(), b.Int64())), nil
		}
	}
}

// doubleArith is fastArith's DOUBLE l op r.
func doubleArith(op byte, l, r *node) evalFn {
	switch {
	case l.col >= 0 && r.konst:
		i, k := l.col, f64(r.val)
		return func(rw row.Row) (row.Value, error) {
			v := rw[i]
			if v.IsNull() {
				return v, nil
			}
			return row.DoubleValue(f64op(op, f64(v), k)), nil
		}
	case l.col >= 0 && r.col >= 0:
		i, j := l.col, r.col
		return func(rw row.Row) (row.Value, error) {
			a, b := rw[i], rw[j]
			if a.IsNull() || b.IsNull() {
				return row.NullValue, nil
			}
			return row.DoubleValue(f64op(op, f64(a), f64(b))), nil
		}
	case r.konst:
		le, k := l.eval, f64(r.val)
		return func(rw row.Row) (row.Value, error) {
			v, err := le(rw)
			if err != nil || v.IsNull() {
				return v, err
			}
			return row.DoubleValue(f64op(op, f64(v), k)), nil
		}
	default:
		le, re := l.eval, r.eval
		return func(rw row.Row) (row.Value, error) {
			a, err := le(rw)
			if err != nil || a.IsNull() {
				return row.NullValue, err
			}
			b, err := re(rw)
			if err != nil || b.IsNull() {
				return row.NullValue, err
			}
			return row.DoubleValue(f64op(op, f64(a), f64(b))), nil
		}
	}
}

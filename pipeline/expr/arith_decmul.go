package expr

import (
	"math/bits"

	"github.com/etld/etld/pipeline/row"
)

// decConstMul is x * k, a DECIMAL result of x times a constant k that
// fits an int64 (0.908 * price), either operand the constant: the
// product of the two int64s when it is exact at the result's scale and
// fits its precision, which is decArith's int64 path without its
// dispatch on the operator and the scales; decArith for the rest (wide
// values, rounding, overflow), so that every result is decArith's. nil
// when the operands are not so.
func decConstMul(t row.Type, l, r *node, fail func(error) (row.Value, error)) evalFn {
	if l.konst && !r.konst {
		l, r = r, l // DECIMAL multiplication commutes, rounding and all
	}
	if l.konst || !r.konst || r.val.IsNull() || r.val.WideDecimal() {
		return nil
	}
	m := &decMulBy{k: r.val, ak: abs64(r.val.Int64()), kneg: r.val.Int64() < 0, sk: r.val.Scale(), s: t.Scale, p: t.Precision, fail: fail}
	if i := l.col; i >= 0 {
		return func(rw row.Row) (row.Value, error) {
			v := rw[i]
			if v.IsNull() {
				return row.NullValue, nil
			}
			return m.mul(v)
		}
	}
	le := l.eval
	return func(rw row.Row) (row.Value, error) {
		v, err := le(rw)
		if err != nil || v.IsNull() {
			return row.NullValue, err
		}
		return m.mul(v)
	}
}

// decMulBy multiplies by the constant k (decConstMul): ak its magnitude,
// sk its scale, s and p the result's scale and precision.
type decMulBy struct {
	k    row.Value
	ak   uint64
	kneg bool
	sk   int
	s, p int
	fail func(error) (row.Value, error)
}

func (m *decMulBy) mul(v row.Value) (row.Value, error) {
	if !v.WideDecimal() && v.Scale()+m.sk == m.s {
		x := v.Int64()
		hi, lo := bits.Mul64(abs64(x), m.ak)
		if hi == 0 {
			if z, ok := signed(lo, (x < 0) != m.kneg); ok && fits(z, m.p) {
				return row.DecimalValue(z, m.s), nil
			}
		}
	}
	out, err := decArith('*', v, m.k, m.s, m.p)
	if err != nil {
		return m.fail(err)
	}
	return out, nil
}

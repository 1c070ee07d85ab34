package expr

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestDecConstMul: a DECIMAL product with a constant, either side of *,
// takes decConstMul's way and gives what the general product gives (the
// same constant behind a CASE, which is not one): exact products, ones
// rounded to the result's scale, past an int64, past the precision
// (NULL), of wide values, of NULL.
func TestDecConstMul(t *testing.T) {
	consts := []string{"0.908", "-0.908", "123456789.123", "0.5", "7", "0", "99999999999999999.9", "0.000000000000000001", "-1"}
	operands := []string{"b", "d", "n", "(CAST(b AS DECIMAL(38, 0)) * 100000000000)", "CAST(d AS DECIMAL(38, 20))"}
	rnd := rand.New(rand.NewPCG(1, 2))
	bs := []int64{0, 1, -1, 1101322, -1101322, math.MaxInt64, math.MinInt64, 1 << 62, -(1 << 62), 10000000000}
	for range 200 {
		bs = append(bs, rnd.Int64()>>rnd.IntN(64))
	}
	rows := make([]row.Row, 0, len(bs)+1)
	for i, b := range bs {
		r := append(row.Row(nil), testRow...)
		r[3] = row.BigIntValue(b)
		r[4] = row.DecimalValue(b%10_000_000_000, 2)
		r[2] = row.IntValue(int32(b))
		r[6] = row.BoolValue(i%2 == 0)
		rows = append(rows, r)
	}
	null := append(row.Row(nil), testRow...)
	null[3], null[4] = row.NullValue, row.NullValue
	rows = append(rows, null)
	tried := 0
	for _, k := range consts {
		for _, x := range operands {
			oracle := mustCompile(t, "CASE WHEN ok THEN "+k+" ELSE "+k+" END * "+x)
			if oracle.Type.ID != row.Decimal {
				continue // integers: not a DECIMAL product
			}
			tried++
			for _, text := range []string{k + " * " + x, x + " * " + k} {
				c := mustCompile(t, text)
				if c.Type != oracle.Type {
					t.Fatalf("%s: %s, the general product %s", text, c.Type, oracle.Type)
				}
				for _, r := range rows {
					got, gerr := c.Eval(r)
					want, werr := oracle.Eval(r)
					if (gerr != nil) != (werr != nil) || got.IsNull() != want.IsNull() || got.String() != want.String() || got.Scale() != want.Scale() {
						t.Fatalf("%s over b=%v d=%v n=%v: %v (%v), want %v (%v)", text, r[3], r[4], r[2], got, gerr, want, werr)
					}
				}
			}
		}
	}
	if tried < 35 {
		t.Fatalf("%d DECIMAL products", tried)
	}
}

// TestDecConstMulTaken: decConstMul takes a product with a constant that
// fits an int64 on either side, and leaves the others to the general way.
func TestDecConstMulTaken(t *testing.T) {
	for _, tt := range []struct {
		l, r  *node
		taken bool
	}{
		{l: &node{konst: true, val: row.DecimalValue(908, 3), col: -1}, r: &node{col: 3}, taken: true},
		{l: &node{col: 3}, r: &node{konst: true, val: row.DecimalValue(908, 3), col: -1}, taken: true},
		{l: &node{col: 3}, r: &node{col: 4}},
		{l: &node{konst: true, val: row.NullValue, col: -1}, r: &node{col: 3}},
		{l: &node{konst: true, val: row.Decimal128Value(row.Int128{Hi: 1}, 0), col: -1}, r: &node{col: 3}},
	} {
		g := decConstMul(row.Type{ID: row.Decimal, Precision: 23, Scale: 3}, tt.l, tt.r, nil)
		if (g != nil) != tt.taken {
			t.Errorf("%+v * %+v: taken %v, want %v", tt.l, tt.r, g != nil, tt.taken)
		}
	}
}

func mustCompile(t *testing.T, text string) *Compiled {
	t.Helper()
	c, err := compileText(t, text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return c
}

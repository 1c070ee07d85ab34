package expr

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// TestDecimalConstCompare: an expression compared with a constant where
// a DECIMAL takes part (Nexmark q14's 0.908 * price > 1000000) gets its
// own closure, the constant rescaled once (decConstCompare), and gives
// what comparing the two values as ordDec does gives, for every operator:
// values and constants of every scale, narrower and finer than each
// other, wide ones, integers on either side, extremes, and NULL.
func TestDecimalConstCompare(t *testing.T) {
	if exprConstCompare(domDec, sql.OpGt, nil, row.BigIntValue(1)) == nil {
		t.Fatal("no closure of its own for a DECIMAL against a constant")
	}
	wide := func(s string, scale int) row.Value {
		v, err := row.ParseText(s, row.Type{ID: row.Decimal, Precision: 38, Scale: scale})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	consts := []row.Value{
		row.BigIntValue(1000000), row.IntValue(0), row.BigIntValue(-7), row.BigIntValue(math.MaxInt64), row.BigIntValue(math.MinInt64 + 1),
		row.DecimalValue(1000000000, 3), row.DecimalValue(-12345, 2), row.DecimalValue(5, 18), row.DecimalValue(math.MaxInt64, 0),
		wide("123456789012345678901234", 2), wide("-99999999999999999999", 0),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var vals []row.Value
	for s := 0; s <= 18; s++ {
		for _, u := range []int64{0, 1, -1, 999999999, 1000000000, 1000000000000, -1000000000, math.MaxInt64, math.MinInt64 + 1} {
			vals = append(vals, row.DecimalValue(u, s))
		}
		for range 50 {
			vals = append(vals, row.DecimalValue(rng.Int64N(1<<uint(rng.IntN(62)+1))-rng.Int64N(1<<40), s))
		}
	}
	vals = append(vals, row.BigIntValue(1000000), row.BigIntValue(-7), row.IntValue(3), wide("123456789012345678901234", 2), wide("-1000000000000000000000", 4))
	ops := []sql.BinaryOp{sql.OpEq, sql.OpNe, sql.OpLt, sql.OpLe, sql.OpGt, sql.OpGe}
	for _, k := range consts {
		for _, op := range ops {
			want := truth(op)
			var v row.Value
			f := decConstCompare(want, func(row.Row) (row.Value, error) { return v, nil }, k)
			for _, v = range vals {
				got, err := f(nil)
				if err != nil {
					t.Fatal(err)
				}
				if exp := want[ordDec(v, k)]; got.Bool() != exp {
					t.Fatalf("%s %v %s: %v, want %v", v, op, k, got.Bool(), exp)
				}
			}
			v = row.NullValue
			if got, _ := f(nil); !got.IsNull() {
				t.Fatalf("NULL %v %s: %v, want NULL", op, k, got)
			}
		}
	}
	// In SQL: both sides' types, the comparison the planner picks.
	for _, tc := range []struct{ expr, want string }{
		{"d > 12.499", "BOOLEAN true"},
		{"d * 2 > 24", "BOOLEAN true"},
		{"d * 2 < 25.0001", "BOOLEAN true"},
		{"d * 2 = 25", "BOOLEAN true"},
		{"d * 2 <> 25.000", "BOOLEAN false"},
		{"d + 0.001 >= 12.501", "BOOLEAN true"},
		{"d + 0.001 > 12.501", "BOOLEAN false"},
	} {
		c, err := compileText(t, tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := show(c, mustEval(t, c)); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, got, tc.want)
		}
	}
}

package expr

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// dec38Table holds DECIMALs past 18 digits. The expected results are
// Flink's: types by LogicalTypeMerging, values by DecimalDataUtils
// (BigDecimal arithmetic, divide at 38 significant digits, HALF_UP to
// the result scale, NULL when the precision overflows), worked out with
// Java's BigDecimal rules.
var dec38Table = Table{Name: "t", Schema: row.NewSchema(
	row.Field{Name: "big", Type: mustType("DECIMAL(10, 2)")},
	row.Field{Name: "q", Type: mustType("DECIMAL(10, 2)")},
	row.Field{Name: "f", Type: mustType("DECIMAL(20, 12)")},
	row.Field{Name: "w", Type: mustType("DECIMAL(38, 0)")},
	row.Field{Name: "w2", Type: mustType("DECIMAL(38, 10)")},
	row.Field{Name: "z", Type: mustType("DECIMAL(10, 2)")},
	row.Field{Name: "bi", Type: mustType("BIGINT")},
	row.Field{Name: "dbl", Type: mustType("DOUBLE")},
	row.Field{Name: "nn", Type: mustType("DECIMAL(10, 2) NOT NULL")},
)}

// dec38Row is decimalRow read with dec38Table's types.
func dec38Row(t *testing.T) row.Row {
	texts := strings.Split(decimalRow, ",")
	r := make(row.Row, len(texts))
	for i, text := range texts {
		v, err := row.ParseText(text, dec38Table.Schema.Fields[i].Type)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		r[i] = v
	}
	return r
}

// decimalCases are expressions over dec38Table with the value and the
// TYPEOF that Flink 2.3 gave for them (recorded by TestDecimalFlink, which
// re-runs them on Flink when ETLD_TEST_FLINK is set).
var decimalCases = []struct{ expr, value, typ string }{
	// Products and quotients past DECIMAL(18).
	{"big * big", "9999999998000000.0001", "DECIMAL(21, 4)"},
	{"q / 3", "3.4166666666667", "DECIMAL(21, 13)"},
	{"z / 3", "0E-13", "DECIMAL(21, 13)"},
	{"nn * nn", "9999999998000000.0001", "DECIMAL(21, 4) NOT NULL"},
	// Wide results, adjusted types (LogicalTypeMerging.adjustPrecisionScale).
	{"f * f", "152415768327999.543353759025153483936", "DECIMAL(38, 21)"},
	{"w - 1", "99999999999999999999999999999999999998", "DECIMAL(38, 0)"},
	{"w2 / 3", "411522630041152263004115226.0041152263", "DECIMAL(38, 10)"},
	{"1 / w2", "0E-18", "DECIMAL(38, 18)"},
	{"CAST(1 AS DECIMAL(1, 0)) / w2", "1E-27", "DECIMAL(38, 27)"},
	{"bi + 0.5", "9223372036854775807.5", "DECIMAL(21, 1)"},
	{"CAST(bi AS DECIMAL(19, 0)) * 10", "92233720368547758070", "DECIMAL(30, 0)"},
	{"-w", "-99999999999999999999999999999999999999", "DECIMAL(38, 0)"},
	{"ABS(-w)", "99999999999999999999999999999999999999", "DECIMAL(38, 0)"},
	{"q / bi", "1.1113E-18", "DECIMAL(30, 22)"},
	{"bi / q", "899841174327295200.68292682927", "DECIMAL(32, 11)"},
	{"w2 + w2", "2469135780246913578024691356.024691358", "DECIMAL(38, 9)"},
	{"w2 - f", "1234567890123456788999999999.888888890", "DECIMAL(38, 9)"},
	{"f + q", "12345688.373456789012", "DECIMAL(21, 12)"},
	{"q * 3", "30.75", "DECIMAL(21, 2)"},
	// Overflow past 38 digits is NULL (DecimalData.fromBigDecimal).
	{"w + 1", "null", "DECIMAL(38, 0)"},
	{"w / 7", "null", "DECIMAL(38, 6)"},
	{"w2 * w2", "null", "DECIMAL(38, 6)"},
	{"w * 0.5", "null", "DECIMAL(38, 1)"},
	// MOD: the larger scale; two scale-0 operands give the divisor's type,
	// and with an integer divisor Java long arithmetic on the low 64 bits.
	{"q % 3", "1.25", "DECIMAL(10, 2)"},
	{"w2 % q", "1.5123456789", "DECIMAL(18, 10)"},
	{"q % CAST(3 AS BIGINT)", "1.25", "DECIMAL(10, 2)"},
	{"CAST(-10.5 AS DECIMAL(3, 1)) % 3", "-1.5", "DECIMAL(3, 1) NOT NULL"},
	{"w % 7", "0", "INT"},
	{"CAST(q AS DECIMAL(10, 0)) % 3", "1", "INT"},
	{"bi % CAST(7 AS DECIMAL(5, 0))", "0", "DECIMAL(5, 0)"},
	{"w % CAST(7 AS DECIMAL(3, 0))", "1", "DECIMAL(3, 0)"},
	// Functions.
	{"ROUND(w2, 2)", "1234567890123456789012345678.01", "DECIMAL(31, 2)"},
	{"ROUND(q, -1)", "10", "DECIMAL(9, 0)"},
	{"FLOOR(w2)", "1234567890123456789012345678", "DECIMAL(38, 0)"},
	{"CEIL(-w2)", "-1234567890123456789012345678", "DECIMAL(38, 0)"},
	{"FLOOR(q)", "10", "DECIMAL(10, 0)"},
	{"CEIL(q)", "11", "DECIMAL(10, 0)"},
	{"FLOOR(f)", "12345678", "DECIMAL(20, 0)"},
	{"SIGN(w2)", "1.0000000000", "DECIMAL(38, 10)"},
	// CAST.
	{"CAST(w AS BIGINT)", "687399551400673279", "BIGINT"}, // BigDecimal.longValue: the low 64 bits
	{"CAST(w2 AS DOUBLE)", "1.2345678901234569E27", "DOUBLE"},
	{"CAST(w2 AS STRING)", "1234567890123456789012345678.0123456789", "STRING"},
	{"CAST(dbl AS DECIMAL(38, 0))", "null", "DECIMAL(38, 0)"},
	{"CAST(w2 AS DECIMAL(30, 1))", "1234567890123456789012345678.0", "DECIMAL(30, 1)"},
	{"CAST(w2 AS DECIMAL(27, 0))", "null", "DECIMAL(27, 0)"},
	{"CAST(big AS DECIMAL(38, 20))", "99999999.99000000000000000000", "DECIMAL(38, 20)"},
	{"CAST(q AS DECIMAL(38, 37)) / 7", "null", "DECIMAL(38, 37)"},
	{"CAST(q AS DECIMAL(5, 0))", "10", "DECIMAL(5, 0)"},
	{"CAST('1E+3' AS DECIMAL(10, 2))", "1000.00", "DECIMAL(10, 2) NOT NULL"},
	// Comparisons across scales and widths.
	{"w2 < w", "true", "BOOLEAN"},
	{"w2 < CAST(w2 AS DECIMAL(38, 9))", "true", "BOOLEAN"}, // ...6789 rounds up to ...679
	{"big * big > bi", "false", "BOOLEAN"},
	{"CASE WHEN q > 0 THEN w ELSE q END", "99999999999999999999999999999999999999", "DECIMAL(38, 0)"},
}

// decimalRow is dec38Row's values as a CSV line, for Flink.
const decimalRow = "99999999.99,10.25,12345678.123456789012,99999999999999999999999999999999999999," +
	"1234567890123456789012345678.0123456789,0.00,9223372036854775807,1.0E300,99999999.99"

func TestDecimal38(t *testing.T) {
	r := dec38Row(t)
	for _, tc := range decimalCases {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := sql.ParseExpr(tc.expr)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			c, err := Compile(e, dec38Table)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			v, err := c.Eval(r)
			if err != nil {
				t.Fatalf("eval: %v", err)
			}
			if got, want := c.Type.String()+" "+v.String(), tc.typ+" "+tc.value; got != want {
				t.Errorf("got %q, Flink gives %q", got, want)
			}
		})
	}
}

// DECIMAL arithmetic whose values fit an int64 stays allocation-free,
// whatever the declared precision, and so do + - * past int64 while the
// result fits 128 bits and its high word is small (99999999.99²).
func TestDecimalNoAllocation(t *testing.T) {
	r := dec38Row(t)
	for _, text := range []string{"q * q + q / 3", "nn - q", "CAST(q AS DECIMAL(30, 4)) * 3", "q > 3.5", "big * big", "nn * nn - nn", "f * 100 + f", "f > q"} {
		e, err := sql.ParseExpr(text)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Compile(e, dec38Table)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = c.Eval(r) }); n != 0 {
			t.Errorf("%s allocates %.0f times per row", text, n)
		}
	}
}

// The 128-bit path agrees with the exact math/big one wherever it
// answers, for random operands of every width and scale.
func TestArith128MatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 38))
	operand := func() row.Value {
		digits := 1 + rng.IntN(38)
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteByte('-')
		}
		for i := 0; i < digits; i++ {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		scale := rng.IntN(digits + 1)
		u, err := row.ParseDecimal128(b.String(), 38, 0)
		if err != nil {
			t.Fatal(err)
		}
		return row.Decimal128Value(u, scale)
	}
	answered := 0
	for i := 0; i < 20000; i++ {
		a, b := operand(), operand()
		op := "+-*"[rng.IntN(3)]
		s, p := rng.IntN(39), 1+rng.IntN(38)
		s = min(s, p)
		got, ok := arith128(op, a, b, s, p)
		if !ok {
			continue
		}
		answered++
		want, err := wideArith(op, a, b, s, p)
		if err != nil || !row.Equal(got, want) {
			t.Fatalf("%v %c %v at DECIMAL(%d, %d): 128-bit %v, exact %v (%v)", a, op, b, p, s, got, want, err)
		}
	}
	if answered < 5000 {
		t.Fatalf("the 128-bit path answered only %d of 20000", answered)
	}
}

package expr

import (
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

func dec38Row(t *testing.T) row.Row {
	parse := func(text string, i int) row.Value {
		v, err := row.ParseText(text, dec38Table.Schema.Fields[i].Type)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return v
	}
	return row.Row{
		parse("99999999.99", 0),
		parse("10.25", 1),
		parse("12345678.123456789012", 2),
		parse("99999999999999999999999999999999999999", 3),
		parse("1234567890123456789012345678.0123456789", 4),
		parse("0.00", 5),
		row.BigIntValue(9223372036854775807),
		row.DoubleValue(1e300),
		parse("99999999.99", 8),
	}
}

func TestDecimal38(t *testing.T) {
	r := dec38Row(t)
	cases := []evalCase{
		// The examples.
		{"big * big", "DECIMAL(21, 4) 9999999998000000.0001"},
		{"q / 3", "DECIMAL(21, 13) 3.4166666666667"},
		{"f", "DECIMAL(20, 12) 12345678.123456789012"},
		{"z / 3", "DECIMAL(21, 13) 0E-13"},
		// NOT NULL operands keep a NOT NULL result while it cannot overflow.
		{"nn * nn", "DECIMAL(21, 4) NOT NULL 9999999998000000.0001"},
		// Wide results, adjusted types.
		{"f * f", "DECIMAL(38, 21) 152415768327999.543353759025153483936"},
		{"w - 1", "DECIMAL(38, 0) 99999999999999999999999999999999999998"},
		{"w % 7", "DECIMAL(10, 0) 1"},
		{"w2 / 3", "DECIMAL(38, 10) 411522630041152263004115226.0041152263"},
		{"1 / w2", "DECIMAL(38, 18) 0E-18"}, // INT is DECIMAL(10, 0) here
		{"CAST(1 AS DECIMAL(1, 0)) / w2", "DECIMAL(38, 27) 1E-27"},
		{"bi + 0.5", "DECIMAL(21, 1) 9223372036854775807.5"},
		{"CAST(bi AS DECIMAL(19, 0)) * 10", "DECIMAL(30, 0) 92233720368547758070"},
		{"-w", "DECIMAL(38, 0) -99999999999999999999999999999999999999"},
		{"ABS(-w)", "DECIMAL(38, 0) 99999999999999999999999999999999999999"},
		{"12345678901234567890", "DECIMAL(20, 0) NOT NULL 12345678901234567890"},
		{"-12345678901234567890.5", "DECIMAL(21, 1) NOT NULL -12345678901234567890.5"},
		// Overflow past 38 digits is NULL, as Flink's fromBigDecimal, and
		// the adjusted type says it may be.
		{"w + 1", "DECIMAL(38, 0) null"},
		{"w / 7", "DECIMAL(38, 6) null"},
		{"w2 * w2", "DECIMAL(38, 6) null"},
		// Functions.
		{"ROUND(w2, 2)", "DECIMAL(31, 2) 1234567890123456789012345678.01"},
		{"FLOOR(w2)", "DECIMAL(29, 0) 1234567890123456789012345678"},
		{"CEIL(-w2)", "DECIMAL(29, 0) -1234567890123456789012345678"},
		{"SIGN(w2)", "DECIMAL(38, 10) 1.0000000000"},
		// CAST.
		{"CAST(w AS BIGINT)", "BIGINT 687399551400673279"}, // BigDecimal.longValue: the low 64 bits
		{"CAST(w2 AS DOUBLE)", "DOUBLE 1.2345678901234569E27"},
		{"CAST(w2 AS STRING)", "STRING 1234567890123456789012345678.0123456789"},
		{"CAST(dbl AS DECIMAL(38, 0))", "DECIMAL(38, 0) null"},
		{"CAST(1.5E30 AS DECIMAL(38, 2))", "DECIMAL(38, 2) NOT NULL 1500000000000000000000000000000.00"},
		{"CAST('12345678901234567890.125' AS DECIMAL(25, 2))", "DECIMAL(25, 2) NOT NULL 12345678901234567890.13"},
		{"CAST(w2 AS DECIMAL(30, 1))", "DECIMAL(30, 1) 1234567890123456789012345678.0"},
		{"CAST(w2 AS DECIMAL(27, 0))", "DECIMAL(27, 0) null"},
		{"CAST(big AS DECIMAL(38, 20))", "DECIMAL(38, 20) 99999999.99000000000000000000"},
		// Comparisons across scales and widths.
		{"w2 < w", "BOOLEAN true"},
		{"w = 99999999999999999999999999999999999999", "BOOLEAN true"},
		{"w2 < CAST(w2 AS DECIMAL(38, 9))", "BOOLEAN true"}, // ...6789 rounds up to ...679,
		{"big * big > bi", "BOOLEAN false"},
		{"CASE WHEN q > 0 THEN w ELSE q END", "DECIMAL(38, 0) 99999999999999999999999999999999999999"},
	}
	for _, tc := range cases {
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
			if got := show(c, v); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// DECIMAL arithmetic whose values fit an int64 stays allocation-free,
// whatever the declared precision; only values past int64 take the
// math/big path.
func TestDecimalNoAllocation(t *testing.T) {
	r := dec38Row(t)
	for _, text := range []string{"q * q + q / 3", "nn - q", "CAST(q AS DECIMAL(30, 4)) * 3", "q > 3.5"} {
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

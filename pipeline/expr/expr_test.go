package expr

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

func mustType(s string) row.Type {
	t, err := row.ParseType(s)
	if err != nil {
		panic(err)
	}
	return t
}

// testTable is the input of most tests: one column of each type, and a
// NULL of each in the x_ columns.
var testTable = Table{Name: "sensor", Schema: row.NewSchema(
	row.Field{Name: "id", Type: mustType("STRING NOT NULL")},
	row.Field{Name: "temp", Type: mustType("DOUBLE")},
	row.Field{Name: "n", Type: mustType("INT NOT NULL")},
	row.Field{Name: "b", Type: mustType("BIGINT")},
	row.Field{Name: "d", Type: mustType("DECIMAL(10, 2)")},
	row.Field{Name: "f", Type: mustType("FLOAT")},
	row.Field{Name: "ok", Type: mustType("BOOLEAN")},
	row.Field{Name: "ts", Type: mustType("TIMESTAMP(3)")},
	row.Field{Name: "lts", Type: mustType("TIMESTAMP_LTZ(3)")},
	row.Field{Name: "day", Type: mustType("DATE")},
	row.Field{Name: "js", Type: mustType("STRING")},
	row.Field{Name: "bin", Type: mustType("BYTES")},
	row.Field{Name: "x_s", Type: mustType("STRING")},
	row.Field{Name: "x_i", Type: mustType("INT")},
	row.Field{Name: "x_d", Type: mustType("DOUBLE")},
	row.Field{Name: "x_b", Type: mustType("BOOLEAN")},
	row.Field{Name: "x_ts", Type: mustType("TIMESTAMP(3)")},
	row.Field{Name: "x_dec", Type: mustType("DECIMAL(10, 2)")},
	row.Field{Name: "neg", Type: mustType("INT")},
	row.Field{Name: "zero", Type: mustType("INT")},
	row.Field{Name: "dneg", Type: mustType("DECIMAL(10, 2)")},
	row.Field{Name: "t", Type: mustType("BOOLEAN")},
	row.Field{Name: "fa", Type: mustType("BOOLEAN")},
	row.Field{Name: "pat", Type: mustType("STRING")},
	row.Field{Name: "temperature", Type: mustType("DOUBLE")},
)}

// 2024-01-02 10:30:45.123
const tsMicros = 1704191445123000

var testRow = row.Row{
	row.StringValue("sensor-1"),
	row.DoubleValue(31.5),
	row.IntValue(42),
	row.BigIntValue(10000000000),
	row.DecimalValue(1250, 2), // 12.50
	row.FloatValue(1.5),
	row.BoolValue(true),
	row.TimestampValue(tsMicros),
	row.TimestampLTZValue(tsMicros),
	row.DateValue(19724), // 2024-01-02
	row.StringValue(`{"a":{"b":[10,{"c":"x\"y"}],"n":null,"t":true},"k y":1.5e3}`),
	row.BytesValue([]byte("hi")),
	row.NullValue, row.NullValue, row.NullValue, row.NullValue, row.NullValue, row.NullValue,
	row.IntValue(-7),
	row.IntValue(0),
	row.DecimalValue(-1255, 2), // -12.55
	row.BoolValue(true),
	row.BoolValue(false),
	row.StringValue("sen%"),
	row.DoubleValue(20),
}

var testClock = func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC) }

func compileText(t testing.TB, text string) (*Compiled, error) {
	t.Helper()
	e, err := sql.ParseExpr(text)
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	return Compile(e, testTable, WithClock(testClock))
}

// show renders a result as "TYPE value" with the print form of the value.
func show(c *Compiled, v row.Value) string {
	return c.Type.String() + " " + v.String()
}

type evalCase struct {
	expr string
	want string // "TYPE value", or the start of an error message after "error: "
}

func runEvalCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			c, err := compileText(t, tc.expr)
			if err != nil {
				if want, ok := strings.CutPrefix(tc.want, "error: "); ok && strings.Contains(err.Error(), want) {
					return
				}
				t.Fatalf("compile: %v (want %s)", err, tc.want)
			}
			v, err := c.Eval(testRow)
			if err != nil {
				if want, ok := strings.CutPrefix(tc.want, "error: "); ok && strings.Contains(err.Error(), want) {
					var ee *EvalError
					if !errors.As(err, &ee) {
						t.Fatalf("run-time error %T is not an *EvalError: %v", err, err)
					}
					return
				}
				t.Fatalf("eval: %v (want %s)", err, tc.want)
			}
			if got := show(c, v); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if !v.IsNull() && v.Type() != c.Type.ID {
				t.Fatalf("value tagged %s, compiled type %s", v.Type(), c.Type)
			}
			if v.IsNull() && c.Type.NotNull {
				t.Fatalf("NULL from a NOT NULL expression")
			}
		})
	}
}

func TestColumnsAndLiterals(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"id", "STRING NOT NULL sensor-1"},
		{"ID", "STRING NOT NULL sensor-1"},
		{"sensor.temp", "DOUBLE 31.5"},
		{"SENSOR.n", "INT NOT NULL 42"},
		{"x_s", "STRING null"},
		{"42", "INT NOT NULL 42"},
		{"3000000000", "BIGINT NOT NULL 3000000000"},
		{"1.50", "DECIMAL(3, 2) NOT NULL 1.50"},
		{"1.5e3", "DOUBLE NOT NULL 1500.0"},
		{"'it''s'", "STRING NOT NULL it's"},
		{"TRUE", "BOOLEAN NOT NULL true"},
		{"NULL", "STRING null"},
		{"DATE '2024-01-02'", "DATE NOT NULL 2024-01-02"},
		{"TIMESTAMP '2024-01-02 10:00:00.5'", "TIMESTAMP(1) NOT NULL 2024-01-02T10:00:00.500"},
	})
}

func TestArithmetic(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"n + 1", "INT NOT NULL 43"},
		{"n - 50", "INT NOT NULL -8"},
		{"n * 2", "INT NOT NULL 84"},
		{"n / 5", "INT NOT NULL 8"},
		{"neg / 2", "INT -3"},
		{"n % 5", "INT NOT NULL 2"},
		{"neg % 5", "INT -2"},
		{"2147483647 + 1", "INT NOT NULL -2147483648"},
		{"9223372036854775807 + 1", "BIGINT NOT NULL -9223372036854775808"},
		{"n + b", "BIGINT 10000000042"},
		{"n + temp", "DOUBLE 73.5"},
		{"n + f", "FLOAT 43.5"},
		{"f * 2", "FLOAT 3.0"},
		{"d + 1", "DECIMAL(13, 2) 13.50"},
		{"d + d", "DECIMAL(11, 2) 25.00"},
		{"d - dneg", "DECIMAL(11, 2) 25.05"},
		{"d * d", "DECIMAL(21, 4) 156.2500"},
		{"d * 1.5", "DECIMAL(13, 3) 18.750"},
		{"d / 3", "DECIMAL(21, 13) 4.1666666666667"},
		{"d / d", "DECIMAL(23, 13) 1.0000000000000"},
		{"dneg / 7", "DECIMAL(21, 13) -1.7928571428571"},
		{"d % 5", "DECIMAL(10, 2) 2.50"},
		{"d + temp", "DOUBLE 44.0"},
		{"d + f", "DOUBLE 14.0"},
		{"b + d", "DECIMAL(22, 2) 10000000012.50"},
		{"-n", "INT NOT NULL -42"},
		{"-d", "DECIMAL(10, 2) -12.50"},
		{"+temp", "DOUBLE 31.5"},
		{"- - n", "INT NOT NULL 42"},
		{"x_i + 1", "INT null"},
		{"NULL + 1", "INT null"},
		{"n / zero", "error: division by zero"},
		{"n % zero", "error: division by zero"},
		{"d / 0", "error: division by zero"},
		{"temp / 0", "DOUBLE Infinity"},
		{"-temp / 0", "DOUBLE -Infinity"},
		{"(temp - temp) / 0", "DOUBLE NaN"},
		{"MOD(n, 5)", "INT NOT NULL 2"},
		{"MOD(b, 7)", "INT 4"},
		{"MOD(temp, 10)", "DOUBLE 1.5"},
		{"99999999.99 * 99999999.99", "DECIMAL(21, 4) NOT NULL 9999999998000000.0001"},
		{"'a' + 1", "error: cannot apply + to STRING and INT"},
		{"ok * 2", "error: cannot apply * to BOOLEAN and INT"},
	})
}

func TestComparison(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"temp > 30", "BOOLEAN true"},
		{"30 < temp", "BOOLEAN true"},
		{"temp >= 31.5", "BOOLEAN true"},
		{"temp <> 31.5", "BOOLEAN false"},
		{"n = 42", "BOOLEAN NOT NULL true"},
		{"n = 42.0", "BOOLEAN NOT NULL true"},
		{"n < b", "BOOLEAN true"},
		{"d = 12.5", "BOOLEAN true"},
		{"d > 12.499", "BOOLEAN true"},
		{"d < temp", "BOOLEAN true"},
		{"id = 'sensor-1'", "BOOLEAN NOT NULL true"},
		{"id <> 'x'", "BOOLEAN NOT NULL true"},
		{"id < 'sensor-2'", "BOOLEAN NOT NULL true"},
		{"ok = TRUE", "BOOLEAN true"},
		{"x_i = 1", "BOOLEAN null"},
		{"x_i = x_i", "BOOLEAN null"},
		{"NULL = NULL", "BOOLEAN null"},
		{"ts = lts", "BOOLEAN true"},
		{"ts > DATE '2024-01-02'", "BOOLEAN true"},
		{"day = DATE '2024-01-02'", "BOOLEAN true"},
		{"ts > '2024-01-01 00:00:00'", "BOOLEAN true"},
		{"n = '42'", "BOOLEAN NOT NULL true"},
		{"n = '42.5'", "BOOLEAN NOT NULL false"},
		{"(temp - temp) / 0 = (temp - temp) / 0", "BOOLEAN false"},
		{"(temp - temp) / 0 <> 1", "BOOLEAN true"},
		{"ts > 'yesterday'", "error: cannot compare TIMESTAMP(3) with 'yesterday'"},
		{"id = 1", "error: cannot compare STRING with INT"},
		{"n BETWEEN 40 AND 50", "BOOLEAN NOT NULL true"},
		{"n BETWEEN 43 AND 50", "BOOLEAN NOT NULL false"},
		{"n NOT BETWEEN 43 AND 50", "BOOLEAN NOT NULL true"},
		{"n BETWEEN x_i AND 50", "BOOLEAN null"},
		{"n BETWEEN x_i AND 41", "BOOLEAN false"},
		{"n NOT BETWEEN x_i AND 41", "BOOLEAN true"},
		{"n IN (1, 2, 42)", "BOOLEAN NOT NULL true"},
		{"n IN (1, 2)", "BOOLEAN NOT NULL false"},
		{"n NOT IN (1, 2)", "BOOLEAN NOT NULL true"},
		{"n IN (1, NULL)", "BOOLEAN null"},
		{"n IN (42, NULL)", "BOOLEAN true"},
		{"n NOT IN (1, NULL)", "BOOLEAN null"},
		{"x_i IN (1, 2)", "BOOLEAN null"},
		{"id IN ('a', 'sensor-1')", "BOOLEAN NOT NULL true"},
		{"temp IN (31.5, 2)", "BOOLEAN true"},
		{"d IN (12.5, 1)", "BOOLEAN true"},
		{"n IN (b, 42)", "BOOLEAN true"},
		{"n IN (b, x_i)", "BOOLEAN null"},
		{"n IN ('a')", "error: IN: cannot compare INT with 'a'"},
		{"temp * 2 > 60", "BOOLEAN true"},
		{"n + 1 = 43", "BOOLEAN NOT NULL true"},
		{"UPPER(id) >= 'SENSOR'", "BOOLEAN NOT NULL true"},
		{"x_i + 1 < 5", "BOOLEAN null"},
	})
}

// TestThreeValuedLogic checks AND, OR, NOT and IS against SQL's truth
// tables over TRUE, FALSE and UNKNOWN.
func TestThreeValuedLogic(t *testing.T) {
	vals := map[string]string{"t": "true", "fa": "false", "x_b": "null"}
	names := []string{"t", "fa", "x_b"}
	and := func(a, b string) string {
		switch {
		case a == "false" || b == "false":
			return "false"
		case a == "null" || b == "null":
			return "null"
		}
		return "true"
	}
	or := func(a, b string) string {
		switch {
		case a == "true" || b == "true":
			return "true"
		case a == "null" || b == "null":
			return "null"
		}
		return "false"
	}
	var cases []evalCase
	for _, a := range names {
		for _, b := range names {
			cases = append(cases,
				evalCase{a + " AND " + b, "BOOLEAN " + and(vals[a], vals[b])},
				evalCase{a + " OR " + b, "BOOLEAN " + or(vals[a], vals[b])},
			)
		}
		not := map[string]string{"true": "false", "false": "true", "null": "null"}[vals[a]]
		cases = append(cases,
			evalCase{"NOT " + a, "BOOLEAN " + not},
			evalCase{a + " IS NULL", "BOOLEAN NOT NULL " + map[bool]string{true: "true", false: "false"}[vals[a] == "null"]},
			evalCase{a + " IS TRUE", "BOOLEAN NOT NULL " + map[bool]string{true: "true", false: "false"}[vals[a] == "true"]},
			evalCase{a + " IS NOT TRUE", "BOOLEAN NOT NULL " + map[bool]string{true: "true", false: "false"}[vals[a] != "true"]},
			evalCase{a + " IS FALSE", "BOOLEAN NOT NULL " + map[bool]string{true: "true", false: "false"}[vals[a] == "false"]},
			evalCase{a + " IS NOT FALSE", "BOOLEAN NOT NULL " + map[bool]string{true: "true", false: "false"}[vals[a] != "false"]},
			evalCase{a + " IS UNKNOWN", "BOOLEAN NOT NULL " + map[bool]string{true: "true", false: "false"}[vals[a] == "null"]},
		)
	}
	cases = append(cases,
		evalCase{"FALSE AND n / zero = 1", "BOOLEAN NOT NULL false"},
		evalCase{"TRUE OR n / zero = 1", "BOOLEAN NOT NULL true"},
		evalCase{"fa AND n / zero = 1", "BOOLEAN false"},
		evalCase{"t AND n / zero = 1", "error: division by zero"},
		evalCase{"x_s IS NULL", "BOOLEAN NOT NULL true"},
		evalCase{"id IS NOT NULL", "BOOLEAN NOT NULL true"},
		evalCase{"x_i IS NOT DISTINCT FROM x_i", "BOOLEAN NOT NULL true"},
		evalCase{"x_i IS NOT DISTINCT FROM n", "BOOLEAN NOT NULL false"},
		evalCase{"x_i IS DISTINCT FROM NULL", "BOOLEAN NOT NULL false"},
		evalCase{"n IS NOT DISTINCT FROM 42", "BOOLEAN NOT NULL true"},
		evalCase{"b IS DISTINCT FROM n", "BOOLEAN NOT NULL true"},
		evalCase{"n IS NOT DISTINCT FROM 42 + 1", "BOOLEAN NOT NULL false"},
		evalCase{"n AND t", "error: AND needs BOOLEAN operands, not INT"},
		evalCase{"NOT n", "error: NOT needs a BOOLEAN, not INT"},
		evalCase{"n IS TRUE", "error: IS TRUE needs a BOOLEAN"},
	)
	runEvalCases(t, cases)
}

func TestConditionals(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"CASE WHEN temp > 30 THEN 'hot' ELSE 'ok' END", "STRING NOT NULL hot"},
		{"CASE WHEN temp > 40 THEN 'hot' END", "STRING null"},
		{"CASE WHEN x_b THEN 1 WHEN t THEN 2 END", "INT 2"},
		{"CASE n WHEN 1 THEN 'one' WHEN 42 THEN 'answer' ELSE 'other' END", "STRING NOT NULL answer"},
		{"CASE x_i WHEN 1 THEN 'one' ELSE 'other' END", "STRING NOT NULL other"},
		{"CASE WHEN t THEN n ELSE temp END", "DOUBLE 42.0"},
		{"CASE WHEN t THEN n ELSE d END", "DECIMAL(12, 2) 42.00"},
		{"CASE WHEN FALSE THEN 1 / 0 ELSE 2 END", "INT NOT NULL 2"},
		{"CASE WHEN fa THEN n / zero ELSE 2 END", "INT 2"},
		{"CASE WHEN t THEN 'a' ELSE 1 END", "error: CASE: STRING and INT have no common type"},
		{"CASE WHEN n THEN 1 END", "error: a WHEN condition must be BOOLEAN, not INT"},
		{"COALESCE(x_s, id)", "STRING NOT NULL sensor-1"},
		{"COALESCE(x_s, x_s)", "STRING null"},
		{"COALESCE(x_i, n, 1)", "INT NOT NULL 42"},
		{"COALESCE(x_i, temp)", "DOUBLE 31.5"},
		{"COALESCE(NULL, 1)", "INT NOT NULL 1"},
		{"COALESCE(n, 1 / 0)", "INT NOT NULL 42"},
		{"IFNULL(x_i, 7)", "INT NOT NULL 7"},
		{"IF(temp > 30, 'hot', 'cold')", "STRING NOT NULL hot"},
		{"IF(x_b, 'yes', 'no')", "STRING NOT NULL no"},
		{"IF(n, 1, 2)", "error: IF needs a BOOLEAN condition, not INT"},
		{"NULLIF(n, 42)", "INT null"},
		{"NULLIF(n, 1)", "INT 42"},
		{"NULLIF(x_i, 1)", "INT null"},
	})
}

func TestCast(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"CAST(n AS STRING)", "STRING NOT NULL 42"},
		{"CAST(temp AS STRING)", "STRING 31.5"},
		{"CAST(d AS STRING)", "STRING 12.50"},
		{"CAST(ok AS STRING)", "STRING TRUE"},
		{"CAST(ts AS STRING)", "STRING 2024-01-02 10:30:45.123"},
		{"CAST(day AS STRING)", "STRING 2024-01-02"},
		{"CAST(id AS VARCHAR(3))", "VARCHAR(3) NOT NULL sen"},
		{"CAST(bin AS STRING)", "STRING hi"},
		{"CAST('12' AS INT)", "INT NOT NULL 12"},
		{"CAST(' 12 ' AS BIGINT)", "BIGINT NOT NULL 12"},
		{"CAST('12.7' AS INT)", "INT NOT NULL 12"},
		{"CAST('12x' AS INT)", "error: cannot parse \"12x\" as INT"},
		{"CAST(id AS INT)", "error: CAST(id AS INT): cannot parse \"sensor-1\" as INT"},
		{"TRY_CAST(id AS INT)", "INT null"},
		{"TRY_CAST('12' AS INT)", "INT 12"},
		{"CAST('99999999999' AS INT)", "error: out of range"},
		{"CAST('1.005' AS DECIMAL(5, 2))", "DECIMAL(5, 2) NOT NULL 1.01"},
		{"CAST('3.5e2' AS DOUBLE)", "DOUBLE NOT NULL 350.0"},
		{"CAST('yes' AS BOOLEAN)", "BOOLEAN NOT NULL true"},
		{"CAST('2024-02-03' AS DATE)", "DATE NOT NULL 2024-02-03"},
		{"CAST('2024-02-03 04:05:06' AS DATE)", "DATE NOT NULL 2024-02-03"},
		{"CAST('2024-02-03 04:05:06.789' AS TIMESTAMP(3))", "TIMESTAMP(3) NOT NULL 2024-02-03T04:05:06.789"},
		{"CAST('2024-02-03T04:05:06Z' AS TIMESTAMP_LTZ(3))", "TIMESTAMP_LTZ(3) NOT NULL 2024-02-03T04:05:06Z"},
		{"CAST(temp AS INT)", "INT 31"},
		{"CAST(-temp AS BIGINT)", "BIGINT -31"},
		{"CAST(1e20 AS INT)", "INT NOT NULL 2147483647"},
		{"CAST(b AS INT)", "INT 1410065408"},
		{"CAST(d AS INT)", "INT 12"},
		{"CAST(dneg AS BIGINT)", "BIGINT -12"},
		{"CAST(temp AS DECIMAL(5, 1))", "DECIMAL(5, 1) 31.5"},
		{"CAST(2.675 AS DECIMAL(4, 2))", "DECIMAL(4, 2) NOT NULL 2.68"},
		{"CAST(2.675e0 AS DECIMAL(4, 2))", "DECIMAL(4, 2) NOT NULL 2.68"},
		// A DECIMAL too narrow gives NULL, as in Flink (its
		// DecimalData.fromBigDecimal returns null); the type of a CAST
		// that can overflow is nullable.
		{"CAST(n AS DECIMAL(3, 1))", "DECIMAL(3, 1) 42.0"},
		{"CAST(n AS DECIMAL(12, 2))", "DECIMAL(12, 2) NOT NULL 42.00"},
		{"CAST(n AS DECIMAL(2, 1))", "DECIMAL(2, 1) null"},
		{"CAST(1.0E300 AS DECIMAL(10, 1))", "DECIMAL(10, 1) null"},
		{"CAST(99999999.99 AS DECIMAL(5, 1))", "DECIMAL(5, 1) null"},
		{"CAST(99999.99 AS DECIMAL(5, 1))", "DECIMAL(5, 1) null"}, // rounds up to 100000.0
		{"CAST(9999.94 AS DECIMAL(5, 1))", "DECIMAL(5, 1) NOT NULL 9999.9"},
		// A text that does not fit is an error, as in Flink 2.3
		// ("For input string: '123456'. Overflow.").
		{"CAST('123456' AS DECIMAL(5, 1))", "error: cannot parse \"123456\" as DECIMAL(5, 1)"},
		{"CAST('1234567890123456789012' AS DECIMAL(5, 1))", "error: cannot parse \"1234567890123456789012\" as DECIMAL(5, 1)"},
		{"CAST('1E999' AS DECIMAL(5, 1))", "error: cannot parse \"1E999\" as DECIMAL(5, 1)"},
		{"CAST('2.5E-7' AS DECIMAL(18, 12))", "DECIMAL(18, 12) NOT NULL 2.50000E-7"}, // shown as print shows it
		{"CAST(CAST('2.5E-7' AS DECIMAL(18, 12)) AS STRING)", "STRING NOT NULL 0.000000250000"},
		{"CAST(d AS DECIMAL(2, 1))", "DECIMAL(2, 1) null"},
		{"CAST(-temp AS DECIMAL(2, 1))", "DECIMAL(2, 1) null"},
		{"CAST(12345678901 AS DECIMAL(10, 0))", "DECIMAL(10, 0) null"},
		{"CAST('abc' AS DECIMAL(5, 1))", "error: cannot parse \"abc\" as DECIMAL(5, 1)"},
		{"CAST(n AS DECIMAL(2, 1)) IS NULL", "BOOLEAN NOT NULL true"},
		{"CAST(d AS DOUBLE)", "DOUBLE 12.5"},
		{"CAST(n AS BOOLEAN)", "BOOLEAN NOT NULL true"},
		{"CAST(zero AS BOOLEAN)", "BOOLEAN false"},
		{"CAST(ok AS INT)", "INT 1"},
		{"CAST(ts AS DATE)", "DATE 2024-01-02"},
		{"CAST(day AS TIMESTAMP(3))", "TIMESTAMP(3) 2024-01-02T00:00"},
		{"CAST(ts AS TIMESTAMP_LTZ(3))", "TIMESTAMP_LTZ(3) 2024-01-02T10:30:45.123Z"},
		{"CAST(ts AS TIMESTAMP(0))", "TIMESTAMP(0) 2024-01-02T10:30:45"},
		{"CAST(ts AS BIGINT)", "error: cannot CAST TIMESTAMP(3) to BIGINT; UNIX_TIMESTAMP"},
		{"CAST(1704191445 AS TIMESTAMP_LTZ(3))", "error: use TO_TIMESTAMP_LTZ(epoch, 0) for seconds"},
		{"CAST(x_s AS INT)", "INT null"},
		{"CAST(NULL AS DATE)", "DATE null"},
		{"CAST(ok AS DATE)", "error: cannot CAST BOOLEAN to DATE"},
		{"CAST(day AS INT)", "error: cannot CAST DATE to INT"},
		{"CAST(bin AS INT)", "error: cannot CAST BYTES to INT"},
		{"CAST(id AS BYTES)", "BYTES NOT NULL [115, 101, 110, 115, 111, 114, 45, 49]"},
	})
}

func TestTimeArithmetic(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"ts - INTERVAL '5' SECOND", "TIMESTAMP(3) 2024-01-02T10:30:40.123"},
		{"lts + INTERVAL '1' HOUR", "TIMESTAMP_LTZ(3) 2024-01-02T11:30:45.123Z"},
		{"INTERVAL '2' DAY + ts", "TIMESTAMP(3) 2024-01-04T10:30:45.123"},
		{"ts + INTERVAL '1:30' MINUTE TO SECOND", "TIMESTAMP(3) 2024-01-02T10:32:15.123"},
		{"day + INTERVAL '1' DAY", "DATE 2024-01-03"},
		{"day - INTERVAL '36' HOUR", "DATE 2023-12-31"},
		{"ts + (INTERVAL '1' SECOND + INTERVAL '1' SECOND)", "TIMESTAMP(3) 2024-01-02T10:30:47.123"},
		{"ts - INTERVAL '1' SECOND * 3", "TIMESTAMP(3) 2024-01-02T10:30:42.123"},
		{"x_ts - INTERVAL '5' SECOND", "TIMESTAMP(3) null"},
		{"ts - ts", "error: cannot apply - to TIMESTAMP(3) and TIMESTAMP(3)"},
		{"INTERVAL '5' SECOND", "error: an INTERVAL is not a value here"},
		{"n + INTERVAL '1' SECOND", "error: cannot apply + to INT and INTERVAL"},
	})
}

func mustEval(t *testing.T, c *Compiled) row.Value {
	t.Helper()
	v, err := c.Eval(testRow)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// What the compiler reports about an expression besides its value:
// positioned errors, constant folding, scopes, the result type of
// aggregates, whether it reads the clock or is one column.
// expr_test.go checks the values expressions give.

func TestErrorsArePositioned(t *testing.T) {
	cases := []struct {
		expr string
		msg  string
		pos  string
	}{
		{"temprature > 30", `column "temprature" not found in table sensor; did you mean "temperature"?`, "1:1"},
		{"n + nope", `column "nope" not found in table sensor`, "1:5"},
		{"other.n", `table "other" is not in scope here`, "1:1"},
		{"'a' + 1", "cannot apply + to STRING and INT", "1:5"},
		{"UPPPER(id)", "unknown function UPPPER; did you mean UPPER?", "1:1"},
		{"FROBNICATE(id)", "unknown function FROBNICATE", "1:1"},
		{"n > 1 AND SUM(n) > 3", "aggregate function SUM is not allowed here", "1:11"},
		{"COUNT(*)", "aggregate function COUNT is not allowed here", "1:1"},
		{"UPPER(id, id)", "UPPER takes 1 argument, got 2", "1:1"},
		{"SUBSTRING(id)", "SUBSTRING takes 2 or 3 arguments, got 1", "1:1"},
		{"UPPER(n)", "UPPER argument 1 must be a STRING, not INT", "1:7"},
		{"CAST(ok AS DATE)", "cannot CAST BOOLEAN to DATE", "1:1"},
		{"CAST('12x' AS INT)", `CAST('12x' AS INT): cannot parse "12x" as INT`, "1:1"},
		{"n\n  + 'x'", "cannot apply + to INT and STRING", "2:3"},
		{"REGEXP_EXTRACT(id, '(a')", "invalid regular expression", "1:20"},
		{"REGEXP(id, '(?=x)')", "RE2 syntax", "1:12"},
		{"id LIKE 'a\\' ESCAPE '\\'", "ends with the escape character", "1:9"},
		{"JSON_VALUE(js, 'a.b')", "a path starts with $", "1:16"},
		{"DATE_FORMAT(ts, 'yyyy-MM-dd Q')", "pattern letter Q is not supported", "1:17"},
		{"EXTRACT(HOUR FROM day)", "a DATE has no time of day", "1:9"},
		{"TO_TIMESTAMP_LTZ(b, 2)", "precision must be 0 (seconds) or 3", "1:21"},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := compileText(t, tc.expr)
			if err == nil {
				t.Fatalf("compiled; want error %q", tc.msg)
			}
			var se *sql.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *sql.Error: %v", err, err)
			}
			if !strings.Contains(se.Msg, tc.msg) {
				t.Fatalf("message %q does not contain %q", se.Msg, tc.msg)
			}
			if se.Pos.String() != tc.pos {
				t.Fatalf("position %s, want %s (%s)", se.Pos, tc.pos, se.Msg)
			}
		})
	}
}

func TestConstantFolding(t *testing.T) {
	cases := []struct {
		expr  string
		konst bool
	}{
		{"1 + 2 * 3", true},
		{"UPPER('a') || 'b'", true},
		{"CAST('12' AS INT) + 1", true},
		{"n + 1", false},
		{"CURRENT_TIMESTAMP", false},
		{"TRUE OR n > 1", true},
		{"FALSE AND n > 1", true},
		{"CASE WHEN FALSE THEN n ELSE 1 END", true},
		{"COALESCE(NULL, 2)", true},
	}
	for _, tc := range cases {
		c, err := compileText(t, tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if c.Const != tc.konst {
			t.Errorf("%s: Const = %v, want %v", tc.expr, c.Const, tc.konst)
		}
		if c.Const {
			v, err := c.Eval(nil)
			if err != nil || !row.Equal(v, c.Value) {
				t.Errorf("%s: Eval(nil) = %v, %v; Value = %v", tc.expr, v, err, c.Value)
			}
		}
	}
}

func TestSubstituteAndScopes(t *testing.T) {
	e, err := sql.ParseExpr("SUM(n) * 2 + k")
	if err != nil {
		t.Fatal(err)
	}
	in := Table{Name: "agg", Schema: row.NewSchema(
		row.Field{Name: "k", Type: mustType("BIGINT NOT NULL")},
		row.Field{Name: "$sum", Type: mustType("INT")},
	)}
	c, err := Compile(e, in, WithSubstitute(func(x sql.Expr) (int, row.Type, bool) {
		if call, ok := x.(*sql.Call); ok && IsAggregate(call.Name) {
			return 1, in.Schema.Fields[1].Type, true
		}
		return 0, row.Type{}, false
	}))
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Eval(row.Row{row.BigIntValue(5), row.IntValue(10)})
	if err != nil || v.String() != "25" || c.Type.String() != "BIGINT" {
		t.Fatalf("got %v %v %s", v, err, c.Type)
	}
	// An alias replaces the table name as the qualifier shown, both work.
	al := Table{Name: "sensor", Alias: "s", Schema: testTable.Schema}
	for _, text := range []string{"s.n", "sensor.n", "n"} {
		e, _ := sql.ParseExpr(text)
		if _, err := Compile(e, al); err != nil {
			t.Errorf("%s: %v", text, err)
		}
	}
	e, _ = sql.ParseExpr("s.nn")
	if _, err := Compile(e, al); err == nil || !strings.Contains(err.Error(), `column "nn" not found in table s; did you mean "n"?`) {
		t.Errorf("got %v", err)
	}
}

func TestTruePredicate(t *testing.T) {
	for text, want := range map[string]bool{"t": true, "fa": false, "x_b": false, "temp > 30 AND id <> 'x'": true} {
		c, err := compileText(t, text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.True(testRow)
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", text, got, err, want)
		}
	}
}

func TestAggregateType(t *testing.T) {
	cases := []struct{ name, arg, want string }{
		{"COUNT", "STRING", "BIGINT NOT NULL"},
		{"sum", "INT NOT NULL", "INT"},
		{"SUM", "DECIMAL(10, 2)", "DECIMAL(38, 2)"},
		{"AVG", "DECIMAL(10, 2)", "DECIMAL(38, 6)"},
		{"AVG", "DECIMAL(10, 8)", "DECIMAL(38, 8)"},
		{"AVG", "DOUBLE", "DOUBLE"},
		{"MAX", "TIMESTAMP(3) NOT NULL", "TIMESTAMP(3)"},
	}
	for _, tc := range cases {
		got, err := AggregateType(tc.name, mustType(tc.arg))
		if err != nil || got.String() != tc.want {
			t.Errorf("%s(%s) = %v %v, want %s", tc.name, tc.arg, got, err, tc.want)
		}
	}
	if _, err := AggregateType("SUM", mustType("STRING")); err == nil {
		t.Error("SUM(STRING) accepted")
	}
	if !IsAggregate("avg") || IsAggregate("UPPER") {
		t.Error("IsAggregate")
	}
}

// TestClock: an expression that reads the clock says which function does,
// so that the planner can refuse exactly-once output for it.
func TestClock(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{"UPPER(id) || 'x'", ""},
		{"UNIX_TIMESTAMP('2024-01-01 00:00:00')", ""},
		{"NOW()", "NOW()"},
		{"CASE WHEN id > 'a' THEN CURRENT_TIMESTAMP ELSE NULL END", "CURRENT_TIMESTAMP()"},
		{"DATE_FORMAT(PROCTIME(), 'yyyy')", "PROCTIME()"},
		{"UNIX_TIMESTAMP() - 1", "UNIX_TIMESTAMP()"},
		{"CURRENT_DATE", "CURRENT_DATE()"},
	} {
		c, err := compileText(t, tt.expr)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if c.Clock != tt.want {
			t.Errorf("%s: Clock = %q, want %q", tt.expr, c.Clock, tt.want)
		}
	}
}

// TestIsColumn: an expression that is one column as it is says which;
// any computation, a constant or a conversion of the value does not.
func TestIsColumn(t *testing.T) {
	cases := []struct {
		text string
		col  int // -1: not a column
	}{
		{"id", 0},
		{"b", 3},
		{"sensor.temp", 1},
		{"(b)", 3},
		{"b + 1", -1},
		{"CAST(n AS BIGINT)", -1},
		{"COALESCE(b, 0)", -1},
		{"42", -1},
		{"UPPER(id)", -1},
	}
	for _, tc := range cases {
		c, err := compileText(t, tc.text)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		col := -1
		if c.IsColumn {
			col = c.Column
		}
		if col != tc.col {
			t.Errorf("%s: column %d, want %d", tc.text, col, tc.col)
		}
		if c.IsColumn && !row.Equal(mustEval(t, c), testRow[c.Column]) {
			t.Errorf("%s: its value is not column %d's", tc.text, c.Column)
		}
	}
}

// TestShifted: a TIMESTAMP column plus or less a constant day-time
// interval says which column and by how much, and its value is the
// column's so shifted; anything else (a month interval, a DATE, an
// interval that is not constant, two columns) does not.
func TestShifted(t *testing.T) {
	cases := []struct {
		text  string
		col   int // -1: not shifted
		shift int64
	}{
		{"ts - INTERVAL '1' SECOND", 7, -1_000_000},
		{"ts + INTERVAL '5' MINUTE", 7, 300_000_000},
		{"INTERVAL '2' SECOND + lts", 8, 2_000_000},
		{"lts - INTERVAL '0.5' SECOND", 8, -500_000},
		{"x_ts - INTERVAL '1' SECOND", 16, -1_000_000},
		{"ts - INTERVAL '1' SECOND - INTERVAL '1' SECOND", -1, 0},
		{"ts - INTERVAL '1' MONTH", -1, 0},
		{"day + INTERVAL '1' DAY", -1, 0},
		{"ts", -1, 0},
		{"ts - INTERVAL '1' SECOND * n", -1, 0},
		{"CAST(ts AS TIMESTAMP(3)) - INTERVAL '1' SECOND", 7, -1_000_000}, // the column as it is
		{"COALESCE(ts, x_ts) - INTERVAL '1' SECOND", -1, 0},
	}
	for _, tc := range cases {
		c, err := compileText(t, tc.text)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		col, shift := -1, int64(0)
		if c.Shifted {
			col, shift = c.ShiftColumn, c.ShiftMicros
		}
		if col != tc.col || shift != tc.shift {
			t.Errorf("%s: shifted column %d by %d, want %d by %d", tc.text, col, shift, tc.col, tc.shift)
		}
		if !c.Shifted || testRow[col].IsNull() {
			continue
		}
		if v := mustEval(t, c); v.Micros() != testRow[col].Micros()+shift {
			t.Errorf("%s: %v is not column %d's %v shifted by %d", tc.text, v, col, testRow[col], shift)
		}
	}
}

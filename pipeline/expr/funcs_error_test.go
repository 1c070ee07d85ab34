package expr

import (
	"errors"
	"strings"
	"testing"
)

// ERROR(reason) fails the row it is evaluated on with reason, wherever
// it stands: a CASE, IF or COALESCE branch takes the other branches'
// type (and keeps their NOT NULL), a branch not taken never fails, and
// the call is never folded at plan time nor dropped because its type is
// NULL's (an operand of a comparison, a function or a CAST). It never
// gives a NULL, so an expression over it stays NOT NULL.
func TestErrorFunction(t *testing.T) {
	cases := []struct {
		expr string
		typ  string // the compiled type
		want string // the value, or "error: reason"
	}{
		{"CASE WHEN neg < 0 THEN ERROR('negative x') ELSE neg END", "INT", "error: negative x"},
		{"CASE WHEN n < 0 THEN ERROR('negative n') ELSE n END", "INT NOT NULL", "42"},
		{"CASE WHEN n > 0 THEN 'big' ELSE ERROR('small') END", "STRING NOT NULL", "big"},
		{"IF(n > 0, ERROR('positive'), n)", "INT NOT NULL", "error: positive"},
		{"COALESCE(x_i, ERROR('x_i is missing'))", "INT NOT NULL", "error: x_i is missing"},
		{"COALESCE(n, ERROR('never'))", "INT NOT NULL", "42"},
		{"ERROR('always')", "STRING", "error: always"},
		{"ERROR(CONCAT('bad id ', id))", "STRING", "error: bad id sensor-1"},
		{"ERROR(x_s)", "STRING", "error: no reason given (NULL)"},
		{"ERROR('a') = 'b'", "BOOLEAN NOT NULL", "error: a"},
		{"n < ERROR('b')", "BOOLEAN NOT NULL", "error: b"},
		{"ERROR('c') IS NULL", "BOOLEAN NOT NULL", "error: c"},
		{"UPPER(ERROR('d'))", "STRING NOT NULL", "error: d"},
		{"ABS(ERROR('e'))", "INT", "error: e"},
		{"ERROR('f') + 1", "INT NOT NULL", "error: f"},
		{"CAST(ERROR('g') AS INT)", "INT NOT NULL", "error: g"},
		{"GREATEST(ERROR('h'), 1)", "INT NOT NULL", "error: h"},
		{"EXTRACT(YEAR FROM ERROR('i'))", "BIGINT", "error: i"},
		{"ERROR('j') AND FALSE", "BOOLEAN NOT NULL", "error: j"},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			c, err := compileText(t, tc.expr)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			if c.Const {
				t.Fatalf("folded to the constant %v", c.Value)
			}
			if got := c.Type.String(); got != tc.typ {
				t.Errorf("type %s, want %s", got, tc.typ)
			}
			v, err := c.Eval(testRow)
			if reason, ok := strings.CutPrefix(tc.want, "error: "); ok {
				var ee *EvalError
				if !errors.As(err, &ee) || ee.Err.Error() != reason || err.Error() != "ERROR: "+reason {
					t.Fatalf("eval = %v, %v; want the *EvalError %q", v, err, "ERROR: "+reason)
				}
				return
			}
			if err != nil || v.String() != tc.want {
				t.Fatalf("eval = %v, %v; want %s", v, err, tc.want)
			}
		})
	}
}

func TestErrorFunctionRefusals(t *testing.T) {
	for expr, want := range map[string]string{
		"ERROR(n)":        "ERROR takes a STRING reason",
		"ERROR()":         "ERROR takes 1 argument",
		"ERROR('a', 'b')": "ERROR takes 1 argument",
	} {
		if _, err := compileText(t, expr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", expr, err, want)
		}
	}
}

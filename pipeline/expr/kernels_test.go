package expr

import (
	"math"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

func TestDecimalKernels(t *testing.T) {
	type op func(a int64, sa int, b int64, sb int, s, p int) (int64, error)
	cases := []struct {
		name         string
		f            op
		a, sa, b, sb int64
		s, p         int
		want         int64
		err          error
	}{
		{"add aligns", decAdd, 125, 2, 5, 1, 2, 10, 175, nil},
		{"add overflow", decAdd, 999, 0, 1, 0, 0, 3, 0, errDecimalOverflow},
		{"add int64 overflow", decAdd, math.MaxInt64, 0, 1, 0, 0, 18, 0, errDecimalOverflow},
		{"mul rounds half up", decMul, 125, 2, 125, 2, 3, 10, 1563, nil}, // 1.5625 -> 1.563
		{"mul negative rounds away", decMul, -125, 2, 125, 2, 3, 10, -1563, nil},
		{"mul 128-bit", decMul, 999999999999999999, 18, 999999999999999999, 18, 18, 18, 999999999999999998, nil},
		{"mul 128-bit rounds", decMul, 999999999999999999, 18, 999999999999999999, 18, 9, 18, 1000000000, nil},
		{"mul overflow", decMul, 999999999999999999, 0, 10, 0, 0, 18, 0, errDecimalOverflow},
		{"div", decDiv, 100, 2, 3, 0, 6, 18, 333333, nil},
		{"div rounds half up", decDiv, 200, 2, 3, 0, 6, 18, 666667, nil},
		{"div negative", decDiv, -200, 2, 3, 0, 6, 18, -666667, nil},
		{"div by zero", decDiv, 1, 0, 0, 2, 6, 18, 0, errDivByZero},
		{"div scale below", decDiv, 123456, 6, 1, 0, 2, 18, 12, nil}, // 0.123456 -> 0.12
		{"mod sign of dividend", decMod, -725, 2, 200, 2, 2, 10, -125, nil},
		{"mod by zero", decMod, 1, 0, 0, 0, 0, 10, 0, errDivByZero},
	}
	for _, tc := range cases {
		got, err := tc.f(tc.a, int(tc.sa), tc.b, int(tc.sb), tc.s, tc.p)
		if err != tc.err || (err == nil && got != tc.want) {
			t.Errorf("%s: got %d, %v; want %d, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
	cmps := []struct {
		a, sa, b, sb int64
		want         int
	}{
		{125, 2, 13, 1, -1}, {130, 2, 13, 1, 0}, {-5, 0, 1, 18, -1},
		{math.MaxInt64, 0, math.MaxInt64, 18, 1}, {-math.MaxInt64, 0, -1, 18, -1},
	}
	for _, tc := range cmps {
		if got := decCmp(tc.a, int(tc.sa), tc.b, int(tc.sb)); got != tc.want {
			t.Errorf("decCmp(%d e-%d, %d e-%d) = %d, want %d", tc.a, tc.sa, tc.b, tc.sb, got, tc.want)
		}
	}
	for _, tc := range []struct {
		f    float64
		s, p int
		want int64
		ok   bool
	}{
		{2.675, 2, 4, 268, true}, {-2.675, 2, 4, -268, true}, {0.1, 3, 5, 100, true},
		{1e20, 0, 18, 0, false}, {123.456, 0, 3, 123, true}, {999.5, 0, 3, 0, false},
		{1e-30, 2, 5, 0, true}, {math.NaN(), 2, 5, 0, false},
	} {
		got, err := decFromFloat(tc.f, tc.s, tc.p)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("decFromFloat(%v, %d, %d) = %d, %v", tc.f, tc.s, tc.p, got, err)
		}
	}
}

// TestDecimalTypes mirrors Flink's LogicalTypeMerging rules, capped at 18
// digits.
func TestDecimalTypes(t *testing.T) {
	cases := []struct {
		name string
		got  row.Type
		want string
	}{
		{"add", addDecimalType(10, 2, 10, 2), "DECIMAL(11, 2)"},
		{"add int", addDecimalType(10, 2, 10, 0), "DECIMAL(13, 2)"},
		{"mul", mulDecimalType(10, 2, 5, 1), "DECIMAL(16, 3)"},
		{"mul widens", mulDecimalType(10, 4, 10, 4), "DECIMAL(21, 8)"},
		{"mul adjusts", mulDecimalType(38, 10, 38, 10), "DECIMAL(38, 6)"},
		{"mul adjusts, small scale kept", mulDecimalType(38, 2, 38, 2), "DECIMAL(38, 4)"},
		{"add adjusts as Flink's javadoc", addDecimalType(38, 8, 32, 8), "DECIMAL(38, 7)"},
		{"div", divDecimalType(5, 2, 3, 1), "DECIMAL(10, 6)"},
		{"div as Flink's test", divDecimalType(5, 4, 3, 2), "DECIMAL(11, 8)"},
		{"add as Flink's test", addDecimalType(5, 4, 3, 2), "DECIMAL(6, 4)"},
		{"mul as Flink's test", mulDecimalType(5, 4, 3, 2), "DECIMAL(9, 6)"},
		{"div widens", divDecimalType(10, 2, 10, 2), "DECIMAL(23, 13)"},
		{"div by int", divDecimalType(10, 2, 10, 0), "DECIMAL(21, 13)"},
		{"div adjusts", divDecimalType(38, 10, 38, 10), "DECIMAL(38, 6)"},
		{"avg", divDecimalType(38, 2, 20, 0), "DECIMAL(38, 6)"},
		{"avg keeps a larger scale", divDecimalType(38, 12, 20, 0), "DECIMAL(38, 12)"},
		{"mod adjusts", modDecimalType(38, 0, 38, 38), "DECIMAL(38, 38)"},
		{"mod", modDecimalType(10, 2, 5, 0), "DECIMAL(7, 2)"},
		{"round down", roundDecimalType(10, 4, 2), "DECIMAL(9, 2)"},
		{"round negative", roundDecimalType(10, 4, -1), "DECIMAL(7, 0)"},
		{"round noop", roundDecimalType(10, 2, 4), "DECIMAL(10, 2)"},
		{"common", commonExactType(mustType("DECIMAL(10, 2)"), mustType("DECIMAL(5, 4)")), "DECIMAL(12, 4)"},
		{"common bigint", commonExactType(mustType("BIGINT"), mustType("DECIMAL(10, 2)")), "DECIMAL(21, 2)"},
		{"common keeps integer digits", commonExactType(mustType("DECIMAL(38, 0)"), mustType("DECIMAL(10, 2)")), "DECIMAL(38, 0)"},
		{"common ints", commonExactType(mustType("INT"), mustType("BIGINT")), "BIGINT"},
	}
	for _, tc := range cases {
		if tc.got.String() != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, tc.got, tc.want)
		}
	}
	common := []struct{ a, b, want string }{
		{"INT", "DOUBLE", "DOUBLE"},
		{"INT", "FLOAT", "FLOAT"},
		{"DECIMAL(5, 2)", "FLOAT", "DOUBLE"},
		{"VARCHAR(3)", "VARCHAR(5)", "VARCHAR(5)"},
		{"VARCHAR(3)", "STRING", "STRING"},
		{"TIMESTAMP(3)", "TIMESTAMP_LTZ(6)", "TIMESTAMP_LTZ(6)"},
		{"DATE", "TIMESTAMP(3)", "TIMESTAMP(3)"},
		{"INT NOT NULL", "INT NOT NULL", "INT NOT NULL"},
		{"INT NOT NULL", "BIGINT", "BIGINT"},
	}
	for _, tc := range common {
		got, err := CommonType(mustType(tc.a), mustType(tc.b))
		if err != nil || got.String() != tc.want {
			t.Errorf("CommonType(%s, %s) = %v %v, want %s", tc.a, tc.b, got, err, tc.want)
		}
	}
	if _, err := CommonType(mustType("STRING"), mustType("INT")); err == nil {
		t.Error("STRING and INT have a common type")
	}
}

// TestCastMatrix checks which casts compile, following Flink's
// LogicalTypeCasts.
func TestCastMatrix(t *testing.T) {
	types := []string{"BOOLEAN", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL(10, 2)", "STRING", "BYTES", "DATE", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)"}
	// allowed[from] lists the targets, by index in types.
	allowed := map[string]string{
		"BOOLEAN":          "BOOLEAN INT BIGINT FLOAT DOUBLE DECIMAL(10, 2) STRING",
		"INT":              "BOOLEAN INT BIGINT FLOAT DOUBLE DECIMAL(10, 2) STRING",
		"BIGINT":           "BOOLEAN INT BIGINT FLOAT DOUBLE DECIMAL(10, 2) STRING",
		"FLOAT":            "BOOLEAN INT BIGINT FLOAT DOUBLE DECIMAL(10, 2) STRING",
		"DOUBLE":           "BOOLEAN INT BIGINT FLOAT DOUBLE DECIMAL(10, 2) STRING",
		"DECIMAL(10, 2)":   "BOOLEAN INT BIGINT FLOAT DOUBLE DECIMAL(10, 2) STRING",
		"STRING":           "BOOLEAN INT BIGINT FLOAT DOUBLE DECIMAL(10, 2) STRING BYTES DATE TIMESTAMP(3) TIMESTAMP_LTZ(3)",
		"BYTES":            "STRING BYTES",
		"DATE":             "STRING DATE TIMESTAMP(3) TIMESTAMP_LTZ(3)",
		"TIMESTAMP(3)":     "STRING DATE TIMESTAMP(3) TIMESTAMP_LTZ(3)",
		"TIMESTAMP_LTZ(3)": "STRING DATE TIMESTAMP(3) TIMESTAMP_LTZ(3)",
	}
	for _, from := range types {
		for _, to := range types {
			want := false
			for _, a := range splitTypes(allowed[from]) {
				if a == to {
					want = true
				}
			}
			if got := CanCast(mustType(from), mustType(to)); got != want {
				t.Errorf("CanCast(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
}

// splitTypes splits a space-separated list of type names, keeping
// "DECIMAL(10, 2)" whole.
func splitTypes(s string) []string {
	var out []string
	for _, f := range strings.Fields(strings.ReplaceAll(s, ", ", ",")) {
		out = append(out, strings.ReplaceAll(f, ",", ", "))
	}
	return out
}

func TestRoundFloat(t *testing.T) {
	cases := []struct {
		x     float64
		d     int64
		trunc bool
		want  float64
	}{
		{2.675, 2, false, 2.68}, {2.665, 2, false, 2.67}, {-2.5, 0, false, -3},
		{1234.5678, -2, false, 1200}, {0.5, 0, false, 1}, {0.49999999999999994, 0, false, 0},
		{1e300, 2, false, 1e300}, {123.456, 1, true, 123.4}, {-123.456, 1, true, -123.4},
		{5e-324, 2, false, 0}, {9.5, -1, false, 10}, {99999999999999999e3, -5, false, 1e20},
	}
	for _, tc := range cases {
		if got := roundFloat(tc.x, tc.d, tc.trunc); got != tc.want {
			t.Errorf("roundFloat(%v, %d, %v) = %v, want %v", tc.x, tc.d, tc.trunc, got, tc.want)
		}
	}
	if !math.IsNaN(roundFloat(math.NaN(), 2, false)) || !math.IsInf(roundFloat(math.Inf(-1), 2, false), -1) {
		t.Error("NaN or Inf changed")
	}
}

func FuzzLikePattern(f *testing.F) {
	for _, s := range []string{"a%b_c", "%%", "_", "a!%b", "!", "é_%é", "%a%b%c%"} {
		f.Add(s, "abc")
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		lp, err := parseLike(pattern, '!')
		if err != nil {
			return
		}
		lp.match(text)
	})
}

func FuzzJSONValue(f *testing.F) {
	for _, s := range []string{`{"a":{"b":[1,{"c":"x"}]}}`, `[1,2]`, `"s"`, `{"a\"b":1}`, `{`} {
		f.Add(s, "$.a.b[1].c")
	}
	f.Add(`{"k y":1}`, `$['k y']`)
	f.Fuzz(func(t *testing.T, doc, path string) {
		steps, err := parseJSONPath(path)
		if err != nil {
			return
		}
		jsonValue(doc, steps)
	})
}

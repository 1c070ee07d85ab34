package expr

import (
	"math"
	"testing"
)

// TestJavaFormat: java.util.Formatter's output (Java 17, Locale.US) for
// the arguments PRINTF hands it; "!" marks a format Java refuses.
func TestJavaFormat(t *testing.T) {
	i32 := func(v int64) jarg { return jarg{kind: jInt, i: v, bits: 32} }
	dbl := func(f float64) jarg { return jarg{kind: jDouble, f: f} }
	str := func(s string) jarg { return jarg{kind: jString, s: s} }
	cases := []struct {
		f    string
		args []jarg
		want string
	}{
		{"%s and %s", []jarg{str("a"), i32(1)}, "a and 1"},
		{"%3$s %1$s %s %<s", []jarg{str("a"), str("b"), str("c")}, "c a a a"},
		{"%5.2s|%-4s|", []jarg{str("héllo"), str("😀")}, "   hé|😀  |"},
		{"%.1s", []jarg{str("😀")}, "?"},
		{"%e|%E", []jarg{dbl(0.000123456), dbl(1e100)}, "1.234560e-04|1.000000E+100"},
		{"%f|%f|%f", []jarg{dbl(math.NaN()), dbl(math.Inf(-1)), dbl(math.Inf(1))}, "NaN|-Infinity|Infinity"},
		{"%(f|%+f|% 08.1f", []jarg{dbl(math.Inf(-1)), dbl(math.Inf(1)), dbl(-2.25)}, "(Infinity)|+Infinity|-00002.3"},
		{"%G", []jarg{dbl(1e-10)}, "1.00000E-10"},
		{"%x|%X|%#o", []jarg{i32(-1), jarg{kind: jInt, i: -1, bits: 16}, i32(8)}, "ffffffff|FFFF|010"},
		{"%d", []jarg{{kind: jInt, i: math.MinInt64, bits: 64}}, "-9223372036854775808"},
		{"%,d", []jarg{{kind: jInt, i: math.MinInt64, bits: 64}}, "-9,223,372,036,854,775,808"},
		{"%c|%C", []jarg{i32('a'), i32('b')}, "a|B"},
		{"%-6b|%.2b", []jarg{{kind: jNull}, {kind: jBool, s: "true"}}, "false |tr"},
		{"%s", []jarg{{kind: jFloat, f: float64(float32(0.1))}}, "0.1"},
		{"%.3f", []jarg{{kind: jFloat, f: float64(float32(0.1))}}, "0.100"},
		{"%d", []jarg{str("x")}, "!"},
		{"%s %s", []jarg{str("x")}, "!"},
		{"%c", []jarg{i32(-1)}, "!"},
		{"%#s", []jarg{str("x")}, "!"},
		{"%+x", []jarg{i32(1)}, "!"},
		{"%.2d", []jarg{i32(1)}, "!"},
		{"%,e", []jarg{dbl(1)}, "!"},
		{"%#g", []jarg{dbl(1)}, "!"},
		{"%-05d", []jarg{i32(1)}, "!"},
		{"%+ d", []jarg{i32(1)}, "!"},
		{"%--5d", []jarg{i32(1)}, "!"},
		{"%0s", []jarg{str("x")}, "!"},
		{"%", nil, "!"},
		{"%5", nil, "!"},
		{"%.f", []jarg{dbl(1)}, "!"},
		{"%0$s", []jarg{str("x")}, "!"},
		{"%<s", []jarg{str("x")}, "!"},
		{"%2147483648s", []jarg{str("x")}, "!"},
		{"%1048577s", []jarg{str("x")}, "!"},
		{"%5n", nil, "!"},
		{"%,%", nil, "!"},
	}
	for _, tc := range cases {
		got, err := javaFormat(tc.f, tc.args)
		if err != nil {
			got = "!"
		}
		if got != tc.want {
			t.Errorf("format %q: got %q (%v), want %q", tc.f, got, err, tc.want)
		}
	}
}

// FuzzJavaFormat: no format string panics, whatever the arguments.
func FuzzJavaFormat(f *testing.F) {
	for _, s := range []string{"%s", "%-10.3f|%e|%g", "%2$x %<o %1$c", "%,(+ 010d", "%.1000000f", "%99999999999s", "%%%n%", "%-", "%1$"} {
		f.Add(s, int64(-7), 1.5e300)
	}
	f.Fuzz(func(t *testing.T, format string, i int64, d float64) {
		args := []jarg{{kind: jInt, i: i, bits: 64}, {kind: jDouble, f: d}, {kind: jString, s: format}, {kind: jNull},
			{kind: jInt, i: int64(int8(i)), bits: 8}, {kind: jFloat, f: float64(float32(d))}, {kind: jBool, s: "true"}}
		_, _ = javaFormat(format, args)
	})
}

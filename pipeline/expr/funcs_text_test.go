package expr

import "testing"

// TestTextFunctions: STARTSWITH, ENDSWITH, HEX, BIN and the URL codes,
// with the results of the Java methods Flink calls.
func TestTextFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"STARTSWITH('hello', 'he')", "BOOLEAN NOT NULL true"},
		{"STARTSWITH('hello', '')", "BOOLEAN NOT NULL true"},
		{"ENDSWITH('hello', 'he')", "BOOLEAN NOT NULL false"},
		{"ENDSWITH(x_s, 'o')", "BOOLEAN null"},
		{"STARTSWITH('a', 1)", "error: STARTSWITH argument 2"},
		{"HEX(20)", "STRING NOT NULL 14"},
		{"HEX(-1)", "STRING NOT NULL FFFFFFFFFFFFFFFF"},
		{"HEX('hello,world')", "STRING NOT NULL 68656C6C6F2C776F726C64"},
		{"HEX(x_i)", "STRING null"},
		{"BIN(4)", "STRING NOT NULL 100"},
		{"BIN(0)", "STRING NOT NULL 0"},
		{"BIN(-1)", "STRING NOT NULL 1111111111111111111111111111111111111111111111111111111111111111"},
		{"URL_ENCODE('a b&c=d/é*~')", "STRING NOT NULL a+b%26c%3Dd%2F%C3%A9*%7E"},
		{"URL_DECODE('a+b%26c%3Dd%2F%C3%A9')", "STRING a b&c=d/é"},
		{"URL_DECODE('%zz')", "STRING null"},
		{"URL_DECODE('%4')", "STRING null"},
		{"URL_DECODE(x_s)", "STRING null"},
		{"IS_ALPHA('abcÄ')", "BOOLEAN NOT NULL true"},
		{"IS_ALPHA('ab1')", "BOOLEAN NOT NULL false"},
		{"IS_ALPHA('')", "BOOLEAN NOT NULL false"},
		{"IS_ALPHA(x_s)", "BOOLEAN NOT NULL false"},
		{"IS_DIGIT('0123')", "BOOLEAN NOT NULL true"},
		{"IS_DIGIT('-1')", "BOOLEAN NOT NULL false"},
		{"IS_DIGIT(x_s)", "BOOLEAN NOT NULL false"},
	})
}

// TestJSONQuote: JSON_QUOTE escapes, JSON_UNQUOTE undoes a valid string
// literal and leaves anything else.
func TestJSONQuote(t *testing.T) {
	runEvalCases(t, []evalCase{
		{`JSON_QUOTE('a"b\c/d')`, `STRING NOT NULL "a\"b\\c\/d"`},
		{"JSON_QUOTE(x_s)", "STRING null"},
		{"JSON_QUOTE('Äx😀')", `STRING NOT NULL "\u00c4x\ud83d\ude00"`},
		{`JSON_UNQUOTE('"a\"b\u0041"')`, `STRING NOT NULL a"bA`},
		{`JSON_UNQUOTE('"bad\x"')`, `STRING NOT NULL "bad\x"`},
		{"JSON_UNQUOTE('[1]')", "STRING NOT NULL [1]"},
		{"JSON_UNQUOTE(JSON_QUOTE('x/y'))", "STRING NOT NULL x/y"},
	})
}

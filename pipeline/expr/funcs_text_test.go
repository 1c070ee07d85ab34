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

package expr

import "testing"

// TestCollectionFunctions: the ARRAY and MAP functions and SPLIT, with
// Flink 2.3's documented NULL rules (the conformance cases fn-collection-*
// hold Flink's own results).
func TestCollectionFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"ARRAY_CONTAINS(ARRAY[1, 2, 3], 2)", "BOOLEAN NOT NULL true"},
		{"ARRAY_CONTAINS(ARRAY[1, 2, 3], 4)", "BOOLEAN NOT NULL false"},
		{"ARRAY_CONTAINS(ARRAY[1, CAST(NULL AS INT)], CAST(NULL AS INT))", "BOOLEAN NOT NULL true"},
		{"ARRAY_CONTAINS(ARRAY[1, 2], CAST(2 AS BIGINT))", "BOOLEAN NOT NULL true"},
		{"ARRAY_CONTAINS(ARRAY[1], 'a')", "error: ARRAY_CONTAINS argument 2"},
		{"ARRAY_CONTAINS(1, 1)", "error: ARRAY_CONTAINS argument 1 must be an ARRAY"},
		{"ARRAY_POSITION(ARRAY['a', 'b', 'b'], 'b')", "INT NOT NULL 2"},
		{"ARRAY_POSITION(ARRAY['a'], 'z')", "INT NOT NULL 0"},
		{"ARRAY_POSITION(ARRAY[1, CAST(NULL AS INT)], CAST(NULL AS INT))", "INT null"},
		{"ARRAY_REMOVE(ARRAY[1, 2, 1, 3], 1)", "ARRAY<INT NOT NULL> NOT NULL [2, 3]"},
		{"ARRAY_REMOVE(ARRAY[1, CAST(NULL AS INT)], CAST(NULL AS INT))", "ARRAY<INT> NOT NULL [1]"},
		{"ARRAY_APPEND(ARRAY[1, 2], 3)", "ARRAY<INT> NOT NULL [1, 2, 3]"},
		{"ARRAY_APPEND(ARRAY[1], CAST(NULL AS INT))", "ARRAY<INT> NOT NULL [1, null]"},
		{"ARRAY_PREPEND(ARRAY['b'], 'a')", "ARRAY<STRING> NOT NULL [a, b]"},
		{"ARRAY_DISTINCT(ARRAY[1, 2, 1, 3, 2])", "ARRAY<INT NOT NULL> NOT NULL [1, 2, 3]"},
		{"ARRAY_REVERSE(ARRAY[1, 2, 3])", "ARRAY<INT NOT NULL> NOT NULL [3, 2, 1]"},
		{"ARRAY_MAX(ARRAY[3, 7, CAST(NULL AS INT), 5])", "INT 7"},
		{"ARRAY_MIN(ARRAY['b', 'a', 'c'])", "STRING a"},
		{"ARRAY_MAX(ARRAY[CAST(NULL AS INT)])", "INT null"},
		{"ARRAY_CONCAT(ARRAY[1, 2], ARRAY[3])", "ARRAY<INT NOT NULL> NOT NULL [1, 2, 3]"},
		{"ARRAY_CONCAT(ARRAY[1], CAST(NULL AS ARRAY<INT>))", "ARRAY<INT> null"},
		{"ARRAY_JOIN(ARRAY['a', CAST(NULL AS STRING), 'c'], '-')", "STRING NOT NULL a-c"},
		{"ARRAY_JOIN(ARRAY['a', CAST(NULL AS STRING), 'c'], '-', '?')", "STRING NOT NULL a-?-c"},
		{"ARRAY_JOIN(ARRAY['a'], x_s)", "STRING null"},
		{"ARRAY_JOIN(ARRAY[1], ',')", "error: ARRAY_JOIN argument 1 must be an ARRAY<STRING>"},
		{"MAP_KEYS(MAP['a', 1, 'b', 2])", "ARRAY<STRING NOT NULL> NOT NULL [a, b]"},
		{"MAP_VALUES(MAP['a', 1, 'b', 2])", "ARRAY<INT NOT NULL> NOT NULL [1, 2]"},
		{"SPLIT('a,b,,c,', ',')", "ARRAY<STRING> NOT NULL [a, b, , c, ]"},
		{"SPLIT('abc', '')", "ARRAY<STRING> NOT NULL [a, b, c]"},
		{"SPLIT('abc', 'x')", "ARRAY<STRING> NOT NULL [abc]"},
		{"SPLIT(x_s, ',')", "ARRAY<STRING> null"},
	})
}

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
	})
}

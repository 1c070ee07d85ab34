package expr

import "testing"

// TestMoreStringFunctions: expected values taken from Flink 2.3.
func TestMoreStringFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"TRANSLATE('hello world', 'lo', 'x')", "STRING NOT NULL hexx wrxd"},
		{"TRANSLATE('hello', 'el', 'ipq')", "STRING NOT NULL hippo"},
		{"TRANSLATE(x_s, 'a', 'b')", "STRING null"},
		{"TRANSLATE('abc', '', 'x')", "STRING NOT NULL abc"},
		{"TRANSLATE('abca', 'aa', 'xy')", "STRING NOT NULL xbcx"},
		{"TRANSLATE('ÄÖü', 'Ö', 'o')", "STRING NOT NULL Äoü"},
		{"TRANSLATE('a😀b', '😀', 'x')", "STRING NOT NULL axb"},
		{"TRANSLATE('abc', 'b', x_s)", "STRING NOT NULL ac"},
		{"TRANSLATE('abc', x_s, 'x')", "STRING NOT NULL abc"},
		{"ELT(2, 'a', 'b', 'c')", "STRING b"},
		{"ELT(0, 'a')", "STRING null"},
		{"ELT(4, 'a', 'b')", "STRING null"},
		{"ELT(x_i, 'a')", "STRING null"},
		{"ELT(1, x_s, 'x')", "STRING null"},
		{"ELT(1, 1, 2)", "error: ELT argument 2 must be a STRING or BYTES"},
		{"ELT(b, 'a')", "error: ELT argument 1 must be an INT"},
		{"REGEXP_EXTRACT_ALL('a1b22c333', '[0-9]+')", "ARRAY<STRING> null"},
		{"REGEXP_EXTRACT_ALL('k1=v1;k2=v2', '(\\w+)=(\\w+)', 2)", "ARRAY<STRING> [v1, v2]"},
		{"REGEXP_EXTRACT_ALL('abc', '(x)')", "ARRAY<STRING> []"},
		{"REGEXP_EXTRACT_ALL('a1b22', '[0-9]+', 0)", "ARRAY<STRING> [1, 22]"},
		{"REGEXP_EXTRACT_ALL('a1b22', '([0-9])([a-z])?', 2)", "ARRAY<STRING> [b, null, null]"},
		{"REGEXP_EXTRACT_ALL('abc', '(b)', 3)", "ARRAY<STRING> null"},
		{"REGEXP_EXTRACT_ALL('abc', '(b)', -1)", "ARRAY<STRING> null"},
		{"REGEXP_EXTRACT_ALL(x_s, '(b)')", "ARRAY<STRING> null"},
		{"REGEXP_EXTRACT_ALL('', '(x)*', 1)", "ARRAY<STRING> [null]"},
		// Java finds the empty match where a non-empty one ended, Go's
		// FindAll skips it (RegexpFunctionsITCase, fn-flink-regexp-extract-all-groups).
		{"REGEXP_EXTRACT_ALL('abcdeabde', '(abcdeabde)|([a-z]*)', 2)", "ARRAY<STRING> [null, ]"},
		{"REGEXP_EXTRACT_ALL('ab x', 'x*', 0)", "ARRAY<STRING> [, , , x, ]"},
		{"REGEXP_EXTRACT_ALL('aa-b', '([a-z]*)', 1)", "ARRAY<STRING> [aa, , b, ]"},
	})
}

// TestIsJSON: expected values taken from Flink 2.3.
func TestIsJSON(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"'1' IS JSON", "BOOLEAN NOT NULL true"},
		{"'{}' IS JSON OBJECT", "BOOLEAN NOT NULL true"},
		{"'[]' IS JSON ARRAY", "BOOLEAN NOT NULL true"},
		{"'\"a\"' IS JSON SCALAR", "BOOLEAN NOT NULL true"},
		{"'1' IS JSON VALUE", "BOOLEAN NOT NULL true"},
		{"'x' IS JSON", "BOOLEAN NOT NULL false"},
		{"'{}' IS NOT JSON ARRAY", "BOOLEAN NOT NULL true"},
		{"x_s IS JSON", "BOOLEAN NOT NULL false"},
		{"x_s IS NOT JSON", "BOOLEAN NOT NULL true"},
		{"'null' IS JSON SCALAR", "BOOLEAN NOT NULL true"},
		{"'' IS JSON", "BOOLEAN NOT NULL false"},
		{"'{\"a\":1}' IS JSON SCALAR", "BOOLEAN NOT NULL false"},
		{"' [1] ' IS JSON ARRAY", "BOOLEAN NOT NULL true"},
		{"'{\"a\":1,\"a\":2}' IS JSON", "BOOLEAN NOT NULL true"},
		{"'{} x' IS JSON", "BOOLEAN NOT NULL true"},
		{"'1 2' IS JSON SCALAR", "BOOLEAN NOT NULL true"},
		{"'01' IS JSON", "BOOLEAN NOT NULL false"},
		{"' ' IS JSON", "BOOLEAN NOT NULL false"},
		{"'NaN' IS JSON", "BOOLEAN NOT NULL false"},
		{"'{\"a\":}' IS JSON OBJECT", "BOOLEAN NOT NULL false"},
		{"'[1,]' IS JSON", "BOOLEAN NOT NULL false"},
		{"n IS JSON", "error: IS JSON VALUE needs a STRING, not INT"},
	})
}

// TestJSONQueryReturningArray: expected values taken from Flink 2.3.
func TestJSONQueryReturningArray(t *testing.T) {
	runEvalCases(t, []evalCase{
		{`JSON_QUERY('{"a":[1,2]}', '$.a' RETURNING ARRAY<STRING> EMPTY ARRAY ON EMPTY)`, "ARRAY<STRING> [1, 2]"},
		{`JSON_QUERY('{}', 'lax $.a' RETURNING ARRAY<STRING> EMPTY ARRAY ON EMPTY)`, "ARRAY<STRING> []"},
		{`JSON_QUERY('{"a":[1.5e3]}', '$.a' RETURNING ARRAY<STRING>)`, "ARRAY<STRING> [1.5E+3]"},
		{`JSON_QUERY('{"a":{"k":1}}', '$.a' RETURNING ARRAY<STRING>)`, "ARRAY<STRING> null"},
		{`JSON_QUERY('{"a":[[1,2],{"b":1.50}]}', '$.a' RETURNING ARRAY<STRING>)`, `ARRAY<STRING> [[1,2], {"b":1.50}]`},
		{`JSON_QUERY('{"a":[1,"x",{"k":true},null]}', '$.a' RETURNING ARRAY<STRING>)`, `ARRAY<STRING> [1, x, {"k":true}, null]`},
		{`JSON_QUERY('{"a":1}', '$.a' RETURNING ARRAY<STRING>)`, "ARRAY<STRING> null"},
		{`JSON_QUERY('{"a":1}', '$.a' RETURNING ARRAY<INT>)`, "error: JSON_QUERY returns STRING or ARRAY<STRING>, not ARRAY<INT>"},
	})
}

// TestJSONPathsOfSeveralValues: Jayway's wildcards, deep scan, index
// lists, slices and filters; expected values taken from Flink 2.3.
func TestJSONPathsOfSeveralValues(t *testing.T) {
	runEvalCases(t, []evalCase{
		{`JSON_VALUE('{"a":[{"b":1},{"b":2}]}', '$.a[*].b')`, "STRING null"},
		{`JSON_QUERY('{"a":[{"b":1},{"b":2}]}', '$.a[*].b')`, "STRING [1,2]"},
		{`JSON_QUERY('{"a":{"x":1,"c":{"x":2}}}', '$..x')`, "STRING [1,2]"},
		{`JSON_QUERY('{"a":{"b":{"c":1}},"c":2}', '$..c')`, "STRING [2,1]"},
		{`JSON_QUERY('{"a":[{"p":1},{"p":3}]}', '$.a[?(@.p > 1)]')`, `STRING [{"p":3}]`},
		{`JSON_QUERY('{"a":[1,2,3]}', '$.a[*]' RETURNING ARRAY<STRING>)`, "ARRAY<STRING> [1, 2, 3]"},
		{`JSON_EXISTS('{"a":[{"p":1}]}', '$.a[?(@.p == 1)]')`, "BOOLEAN NOT NULL true"},
		{`JSON_EXISTS('{"a":[{"p":1}]}', '$.a[?(@.p == 2)]')`, "BOOLEAN NOT NULL true"},
		{`JSON_QUERY('{"a":[{"p":1}]}', '$.a[?(@.p == 2)]')`, "STRING []"},
		{`JSON_QUERY('{"a":[1,2,3]}', '$.a[0:2]')`, "STRING [1,2]"},
		{`JSON_QUERY('{"a":[1,2,3]}', '$.a[-1:]')`, "STRING [3]"},
		{`JSON_QUERY('{"a":{"b":1,"c":2}}', '$.a.*')`, "STRING [1,2]"},
		{`JSON_QUERY('{"a":[{"p":1}]}', 'lax $.a[*].q')`, "STRING []"},
		{`JSON_QUERY('{"a":[{"p":1}]}', '$.a[*].q')`, "STRING []"},
		{`JSON_QUERY('{"a":[{"p":"x"},{"p":"y"}]}', '$.a[?(@.p == "y")].p')`, `STRING ["y"]`},
		{`JSON_QUERY('{"a":[1,2,3,4]}', '$.a[1,3]')`, "STRING [2,4]"},
		{`JSON_QUERY('{"a":[{"p":1},{"p":3}]}', '$.a[?(@.p > 1 && @.p < 5)].p')`, "STRING [3]"},
		{`JSON_QUERY('{"a":[{"p":1},{"p":3}]}', '$.a[?(@.p > 1 || @.p == 1)].p')`, "STRING [1,3]"},
		{`JSON_QUERY('{"a":[1,2,3]}', '$.a[?(@.p ~ 1)]')`, "error: a filter ends with )]"},
	})
}

// TestJSONPathMissingBeforeSeveral: a member missing before the first step
// of several values makes the path lead nowhere (Flink 2.3: NULL).
func TestJSONPathMissingBeforeSeveral(t *testing.T) {
	runEvalCases(t, []evalCase{
		{`JSON_QUERY('{"other":1}', '$.items[?(@.p > 1)].n')`, "STRING null"},
		{`JSON_QUERY('{"other":1}', '$.items[1,0].p')`, "STRING null"},
		{`JSON_QUERY('{"other":1}', 'lax $.items[*]' EMPTY ARRAY ON EMPTY)`, "STRING []"},
		{`JSON_EXISTS('{"other":1}', '$.items[*]')`, "BOOLEAN NOT NULL false"},
		{`JSON_QUERY('{"items":[{"p":3,"n":"b"}]}', '$.items[?(@.p > 1)]')`, `STRING [{"n":"b","p":3}]`},
	})
}

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
		{"ARRAY_APPEND(ARRAY[1, 2], CAST(3 AS BIGINT))", "error: ARRAY_APPEND argument 2 must be of the array's element type INT or narrower"},
		{"ARRAY_APPEND(ARRAY[CAST(1 AS BIGINT)], 2)", "ARRAY<BIGINT> NOT NULL [1, 2]"},
		{"ARRAY_PREPEND(ARRAY[1.25], 3)", "ARRAY<DECIMAL(3, 2)> NOT NULL [3.00, 1.25]"},
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
		{"CARDINALITY(SPLIT('', ','))", "INT NOT NULL 0"},
		{"SPLIT(';', ';')", "ARRAY<STRING> NOT NULL [, ]"},
		{"SPLIT('', '')", "ARRAY<STRING> NOT NULL []"},
		{"SPLIT(x_s, ',')", "ARRAY<STRING> null"},
	})
}

// TestArraySetFunctions: the set operations, ARRAY_SLICE's offsets and
// ARRAY_SORT's orders.
func TestArraySetFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"ARRAY_UNION(ARRAY[1, 2, 2], ARRAY[3, 1])", "ARRAY<INT NOT NULL> NOT NULL [1, 2, 3]"},
		{"ARRAY_INTERSECT(ARRAY[1, 2, 2, 3], ARRAY[2, 3])", "ARRAY<INT NOT NULL> NOT NULL [2, 3]"},
		{"ARRAY_EXCEPT(ARRAY[1, 2, 1, 3], ARRAY[2])", "ARRAY<INT NOT NULL> NOT NULL [1, 3]"},
		{"ARRAY_EXCEPT(ARRAY[1], CAST(NULL AS ARRAY<INT NOT NULL>))", "ARRAY<INT NOT NULL> null"},
		{"ARRAY_UNION(ARRAY[1], ARRAY['a'])", "error: ARRAY_UNION argument 2"},
		{"ARRAY_SLICE(ARRAY[1, 2, 3, 4], 2, 3)", "ARRAY<INT NOT NULL> NOT NULL [2, 3]"},
		{"ARRAY_SLICE(ARRAY[1, 2, 3, 4], -2)", "ARRAY<INT NOT NULL> NOT NULL [3, 4]"},
		{"ARRAY_SLICE(ARRAY[1, 2, 3, 4], 0, 1)", "ARRAY<INT NOT NULL> NOT NULL [1]"},
		{"ARRAY_SLICE(ARRAY[1, 2, 3, 4], 3, 2)", "ARRAY<INT NOT NULL> NOT NULL []"},
		{"ARRAY_SLICE(ARRAY[1, 2, 3, 4], 2, 10)", "ARRAY<INT NOT NULL> NOT NULL [2, 3, 4]"},
		{"ARRAY_SLICE(ARRAY[1], x_i)", "ARRAY<INT NOT NULL> null"},
		{"ARRAY_SORT(ARRAY[3, CAST(NULL AS INT), 1, 2])", "ARRAY<INT> NOT NULL [null, 1, 2, 3]"},
		{"ARRAY_SORT(ARRAY[3, CAST(NULL AS INT), 1], FALSE)", "ARRAY<INT> NOT NULL [3, 1, null]"},
		{"ARRAY_SORT(ARRAY[3, CAST(NULL AS INT), 1], TRUE, FALSE)", "ARRAY<INT> NOT NULL [1, 3, null]"},
		{"ARRAY_SORT(ARRAY['b', 'a'], x_b)", "ARRAY<STRING NOT NULL> null"},
	})
}

// TestMapFunctions: a map's entries, in its order.
func TestMapFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"MAP_ENTRIES(MAP['a', 1, 'b', 2])", "ARRAY<ROW<`key` STRING NOT NULL, `value` INT NOT NULL> NOT NULL> NOT NULL [+I[a, 1], +I[b, 2]]"},
	})
}

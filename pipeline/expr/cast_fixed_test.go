package expr

import "testing"

// TestCastFixedWidth: a CAST to CHAR(n) or BINARY(n) gives exactly n
// characters or bytes, and one to VARBINARY(n) at most n bytes, as in
// Flink 2.3 (conformance cases fn-flink-cast-char-pad,
// fn-flink-cast-string-to-binary, fn-cast-to-varchar).
func TestCastFixedWidth(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"CAST('foo' AS CHAR(5))", "VARCHAR(5) NOT NULL foo  "},
		{"CAST('' AS CHAR(3))", "VARCHAR(3) NOT NULL    "},
		{"CAST('日本' AS char(3))", "VARCHAR(3) NOT NULL 日本 "},
		{"CAST('abcdef' AS CHAR(3))", "VARCHAR(3) NOT NULL abc"},
		{"CAST('foo' AS VARCHAR(5))", "VARCHAR(5) NOT NULL foo"},
		{"CAST(CAST(NULL AS STRING) AS CHAR(3)) IS NULL", "BOOLEAN NOT NULL true"},
		{"CAST(CAST('666F' AS BINARY(2)) AS STRING)", "STRING NOT NULL 66"},
		{"CAST(CAST('AAbbCcDdEe' AS VARBINARY(4)) AS STRING)", "STRING NOT NULL AAbb"},
		{"CHAR_LENGTH(CAST(CAST('a' AS BINARY(3)) AS STRING))", "INT NOT NULL 3"},
		{"CHAR_LENGTH(CAST(CAST('a' AS VARBINARY(3)) AS STRING))", "INT NOT NULL 1"},
		{"CAST(CAST('aaBBCcDdEe' AS BYTES) AS STRING)", "STRING NOT NULL aaBBCcDdEe"},
		// No length: CHAR and BINARY are CHAR(1) and BINARY(1), VARCHAR
		// and VARBINARY unbounded (fn-range-cast-no-length).
		{"CAST('abc' AS CHAR)", "VARCHAR(1) NOT NULL a"},
		{"CAST('abc' AS character)", "VARCHAR(1) NOT NULL a"},
		{"CAST('' AS CHAR)", "VARCHAR(1) NOT NULL  "},
		{"CAST(123 AS CHAR)", "VARCHAR(1) NOT NULL 1"},
		{"CAST('abc' AS CHARACTER(2))", "VARCHAR(2) NOT NULL ab"},
		{"CAST('abc' AS VARCHAR)", "STRING NOT NULL abc"},
		{"CAST(CAST('666F' AS BINARY) AS STRING)", "STRING NOT NULL 6"},
		{"CHAR_LENGTH(CAST(CAST('' AS BINARY) AS STRING))", "INT NOT NULL 1"},
		{"CAST(CAST('666F' AS VARBINARY) AS STRING)", "STRING NOT NULL 666F"},
	})
}

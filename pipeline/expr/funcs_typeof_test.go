package expr

import "testing"

// TestTypeOfJSONString: TYPEOF names its argument's type as Flink's
// asSummaryString does (and STRING as VARCHAR(2147483647) when forced),
// a constant; JSON_STRING writes one value as JSON, NULL for NULL
// (MiscFunctionsITCase, JsonFunctionsITCase).
func TestTypeOfJSONString(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"TYPEOF(n)", "STRING NOT NULL INT NOT NULL"},
		{"TYPEOF(x_i)", "STRING NOT NULL INT"},
		{"TYPEOF(x_i + 1)", "STRING NOT NULL INT"},
		{"TYPEOF(CAST(NULL AS BIGINT))", "STRING NOT NULL BIGINT"},
		{"TYPEOF(2.50)", "STRING NOT NULL DECIMAL(3, 2) NOT NULL"},
		{"TYPEOF(x_s)", "STRING NOT NULL STRING"},
		{"TYPEOF(x_s, TRUE)", "STRING NOT NULL VARCHAR(2147483647)"},
		{"TYPEOF(x_s, FALSE)", "STRING NOT NULL STRING"},
		{"TYPEOF(ts)", "STRING NOT NULL TIMESTAMP(3)"},
		{"TYPEOF(x_s, x_b)", "error: the second argument of TYPEOF must be the constant TRUE or FALSE"},
		{"JSON_STRING(1)", "STRING NOT NULL 1"},
		{"JSON_STRING('a\"b')", `STRING NOT NULL "a\"b"`},
		{"JSON_STRING(1.5E0)", "STRING NOT NULL 1.5"},
		{"JSON_STRING(TRUE)", "STRING NOT NULL true"},
		{"JSON_STRING(ARRAY[1, 2])", "STRING NOT NULL [1,2]"},
		{"JSON_STRING(x_i)", "STRING null"},
		// A TIMESTAMP as Java's ISO_LOCAL_DATE_TIME writes it, as Flink's
		// JSON_STRING (and JSON_ARRAYAGG) give it: seconds always, the
		// fraction without trailing zeros.
		{"JSON_STRING(TIMESTAMP '2024-01-01 10:01:00')", `STRING NOT NULL "2024-01-01T10:01:00"`},
		{"JSON_STRING(TIMESTAMP '1969-12-31 23:59:59.500')", `STRING NOT NULL "1969-12-31T23:59:59.5"`},
		{"JSON_STRING(TIMESTAMP '2024-01-15 10:30:45.123')", `STRING NOT NULL "2024-01-15T10:30:45.123"`},
		{"JSON_STRING(CAST(TIMESTAMP '2024-01-15 10:30:45.120' AS TIMESTAMP(6)))", `STRING NOT NULL "2024-01-15T10:30:45.12"`},
	})
}

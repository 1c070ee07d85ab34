package sql

import (
	"strings"
	"testing"
)

// TestParseFunctionClauses: the clauses of the SQL/JSON functions and
// the unit keyword of TIMESTAMPADD / TIMESTAMPDIFF parse, and Format
// writes them back in a form that parses to the same text.
func TestParseFunctionClauses(t *testing.T) {
	cases := []struct{ in, want string }{
		{"TIMESTAMPADD(day, 1, ts)", "TIMESTAMPADD(DAY, 1, ts)"},
		{"TIMESTAMPDIFF(MONTH, a, b)", "TIMESTAMPDIFF(MONTH, a, b)"},
		{"FLOOR(ts to day)", "FLOOR(ts TO DAY)"},
		{"CEILING((ts + INTERVAL '1' HOUR) TO Week)", "CEILING((ts + INTERVAL '1' HOUR) TO WEEK)"},
		{"FLOOR((INTERVAL '1' HOUR) TO DAY)", "FLOOR((INTERVAL '1' HOUR) TO DAY)"},
		{"CEIL(CAST(x AS DATE) TO YEAR)", "CEIL(CAST(x AS DATE) TO YEAR)"},
		{"JSON_VALUE(j, '$.a')", "JSON_VALUE(j, '$.a')"},
		{"JSON_VALUE(j, '$.a' RETURNING INT)", "JSON_VALUE(j, '$.a' RETURNING INT)"},
		{"JSON_VALUE(j, '$.a' RETURNING DECIMAL(10, 2) NULL ON EMPTY)", "JSON_VALUE(j, '$.a' RETURNING DECIMAL(10, 2) NULL ON EMPTY)"},
		{"JSON_VALUE(j, '$.a' RETURNING DOUBLE DEFAULT x + 1 ON EMPTY ERROR ON ERROR)", "JSON_VALUE(j, '$.a' RETURNING DOUBLE DEFAULT x + 1 ON EMPTY ERROR ON ERROR)"},
		{"JSON_VALUE(j, '$.a' DEFAULT 'd' ON ERROR)", "JSON_VALUE(j, '$.a' DEFAULT 'd' ON ERROR)"},
		{"JSON_QUERY(j, '$.a' WITH ARRAY WRAPPER)", "JSON_QUERY(j, '$.a' WITH UNCONDITIONAL ARRAY WRAPPER)"},
		{"JSON_QUERY(j, '$.a' WITH CONDITIONAL WRAPPER EMPTY ARRAY ON EMPTY EMPTY OBJECT ON ERROR)", "JSON_QUERY(j, '$.a' WITH CONDITIONAL ARRAY WRAPPER EMPTY ARRAY ON EMPTY EMPTY OBJECT ON ERROR)"},
		{"JSON_QUERY(j, '$' RETURNING STRING WITHOUT ARRAY WRAPPER)", "JSON_QUERY(j, '$' RETURNING STRING WITHOUT ARRAY WRAPPER)"},
		{"JSON_EXISTS(j, '$.a' UNKNOWN ON ERROR)", "JSON_EXISTS(j, '$.a' UNKNOWN ON ERROR)"},
		{"JSON_OBJECT('a' VALUE 1, KEY 'b' VALUE x ABSENT ON NULL)", "JSON_OBJECT(KEY 'a' VALUE 1, KEY 'b' VALUE x ABSENT ON NULL)"},
		{"JSON_OBJECT()", "JSON_OBJECT()"},
		{"JSON_ARRAY(1, NULL NULL ON NULL)", "JSON_ARRAY(1, NULL NULL ON NULL)"},
		{"JSON_ARRAY(NULL ON NULL)", "JSON_ARRAY(NULL ON NULL)"},
		{"JSON_OBJECTAGG(KEY k VALUE v)", "JSON_OBJECTAGG(KEY k VALUE v)"},
		{"JSON_OBJECTAGG(k VALUE v ABSENT ON NULL) FILTER (WHERE x > 1)", "JSON_OBJECTAGG(KEY k VALUE v ABSENT ON NULL) FILTER (WHERE x > 1)"},
		{"JSON_OBJECTAGG(KEY KEY VALUE v NULL ON NULL)", "JSON_OBJECTAGG(KEY KEY VALUE v NULL ON NULL)"},
		{"JSON_ARRAYAGG(x NULL ON NULL)", "JSON_ARRAYAGG(x NULL ON NULL)"},
		// Flink takes ORDER BY in JSON_ARRAYAGG and ignores it.
		{"JSON_ARRAYAGG(x ORDER BY y DESC NULLS LAST, z ABSENT ON NULL)", "JSON_ARRAYAGG(x ABSENT ON NULL)"},
		{"ARRAY_AGG(x IGNORE NULLS)", "ARRAY_AGG(x IGNORE NULLS)"},
		{"ARRAY_AGG(DISTINCT x) respect nulls", "ARRAY_AGG(DISTINCT x RESPECT NULLS)"},
		{"ARRAY_AGG(x) IGNORE NULLS FILTER (WHERE b)", "ARRAY_AGG(x IGNORE NULLS) FILTER (WHERE b)"},
		{"ts + INTERVAL '1' month", "ts + INTERVAL '1' MONTH"},
		{"d - INTERVAL '-2' YEARS", "d - INTERVAL '-2' YEAR"},
		{"d - INTERVAL '1-6' YEAR TO MONTH", "d - INTERVAL '1-6' YEAR TO MONTH"},
	}
	for _, tc := range cases {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Fatalf("ParseExpr(%q): %v", tc.in, err)
		}
		got := Format(e)
		if got != tc.want {
			t.Fatalf("Format(%q) = %q, want %q", tc.in, got, tc.want)
		}
		again, err := ParseExpr(got)
		if err != nil {
			t.Fatalf("ParseExpr(Format(%q)) = %q: %v", tc.in, got, err)
		}
		if Format(again) != got {
			t.Fatalf("Format is not stable for %q: %q then %q", tc.in, got, Format(again))
		}
	}
}

func TestParseFunctionClauseErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"JSON_VALUE(j)", `expected "," and the JSON path`},
		{"JSON_VALUE(j, '$' ON EMPTY)", "expected ) to close JSON_VALUE("},
		{"JSON_VALUE(j, '$' NULL ON NOTHING)", "expected EMPTY or ERROR after ON"},
		{"JSON_VALUE(j, '$' NULL ON ERROR NULL ON EMPTY)", "ON EMPTY comes before ON ERROR"},
		{"JSON_VALUE(j, '$' NULL ON EMPTY NULL ON EMPTY)", "ON EMPTY is written twice"},
		{"JSON_VALUE(j, '$' RETURNING BOGUS)", "BOGUS"},
		{"JSON_EXISTS(j, '$' TRUE ON EMPTY)", "JSON_EXISTS has only an ON ERROR clause"},
		{"JSON_VALUE(j, '$' ABSENT ON NULL)", "ON NULL belongs to JSON_OBJECT, JSON_ARRAY and their aggregates"},
		{"JSON_OBJECT(KEY 'a' 1)", "expected VALUE"},
		{"JSON_QUERY(j, '$' WITH ARRAY)", "expected WRAPPER"},
		{"UPPER(x RETURNING INT)", "not supported yet"},
		{"JSON_OBJECTAGG(KEY k 1)", "expected VALUE"},
		{"JSON_OBJECTAGG(KEY k VALUE v, KEY a VALUE b)", "expected ) to close JSON_OBJECTAGG("},
		{"LISTAGG(x IGNORE NULLS)", "IGNORE NULLS belongs to ARRAY_AGG"},
		{"ARRAY_AGG(x IGNORE NULLS) RESPECT NULLS", "RESPECT NULLS belongs to ARRAY_AGG, once"},
	}
	for _, tc := range cases {
		_, err := ParseExpr(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("ParseExpr(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

package sql

import (
	"strings"
	"testing"
)

// TestOrderLimit: a query's ORDER BY with LIMIT, OFFSET or FETCH parses
// into OrderBy and Limit and formats back in the FETCH form; a
// parenthesised operand with its own LIMIT stays apart; ORDER BY without
// a row count has no Limit; an OFFSET without a row count and malformed
// counts are refused where they are written.
func TestOrderLimit(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT a FROM t ORDER BY b DESC NULLS LAST, 2 LIMIT 3", "SELECT a FROM t ORDER BY b DESC NULLS LAST, 2 FETCH NEXT 3 ROWS ONLY"},
		{"SELECT a FROM t ORDER BY a OFFSET 2 ROWS FETCH FIRST 1 ROW ONLY", "SELECT a FROM t ORDER BY a OFFSET 2 ROWS FETCH NEXT 1 ROWS ONLY"},
		{"SELECT a FROM t ORDER BY a LIMIT 4 OFFSET 1", "SELECT a FROM t ORDER BY a OFFSET 1 ROWS FETCH NEXT 4 ROWS ONLY"},
		{"SELECT a FROM t UNION ALL SELECT a FROM u ORDER BY a LIMIT 1", "SELECT a FROM t UNION ALL SELECT a FROM u ORDER BY a FETCH NEXT 1 ROWS ONLY"},
		{"(SELECT a FROM t ORDER BY a LIMIT 1) UNION ALL SELECT a FROM u", "SELECT * FROM (SELECT a FROM t ORDER BY a FETCH NEXT 1 ROWS ONLY) UNION ALL SELECT a FROM u"},
		{"SELECT * FROM (SELECT a FROM t ORDER BY a DESC LIMIT 2) WHERE a > 1", "SELECT * FROM (SELECT a FROM t ORDER BY a DESC FETCH NEXT 2 ROWS ONLY) WHERE a > 1"},
		// Without a row count: a sort of every row (Limit nil).
		{"SELECT a FROM t ORDER BY a DESC, b NULLS FIRST", "SELECT a FROM t ORDER BY a DESC, b NULLS FIRST"},
		{"SELECT a FROM t JOIN u USING (a, b)", "SELECT a FROM t JOIN u USING (a, b)"},
		{"SELECT * FROM t NATURAL FULL OUTER JOIN u", "SELECT * FROM t NATURAL FULL JOIN u"},
	} {
		q, err := Parse(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := Format(q); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	q, err := Parse("SELECT a FROM t ORDER BY a OFFSET 2 ROWS FETCH NEXT 5 ROWS ONLY")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.OrderBy) != 1 || q.Limit == nil || q.Limit.Offset != 2 || q.Limit.Fetch != 5 {
		t.Errorf("order %v limit %+v, want one key, offset 2, fetch 5", q.OrderBy, q.Limit)
	}
	for _, c := range []struct{ in, msg string }{
		{"SELECT a FROM t ORDER BY a OFFSET 2", "1:28: OFFSET without LIMIT or FETCH is not supported"},
		{"SELECT a FROM t ORDER BY a LIMIT x", "1:34: expected a row count after LIMIT"},
		{"SELECT a FROM t ORDER BY a FETCH FIRST 2 ROWS", "end of query"},
		{"SELECT a FROM t LIMIT 3", "1:17: LIMIT is not supported yet"},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one holding %q", c.in, err, c.msg)
		}
	}
}

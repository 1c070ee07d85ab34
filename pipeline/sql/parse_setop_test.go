package sql

import "testing"

// TestSetOps: INTERSECT and EXCEPT [ALL] parse into Ops and format back
// as written; a parenthesised operand is kept apart where INTERSECT's
// tighter binding would change its meaning.
func TestSetOps(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT a FROM t INTERSECT SELECT a FROM u", "SELECT a FROM t INTERSECT SELECT a FROM u"},
		{"SELECT a FROM t EXCEPT ALL SELECT a FROM u UNION SELECT a FROM v", "SELECT a FROM t EXCEPT ALL SELECT a FROM u UNION SELECT a FROM v"},
		{"SELECT a FROM t INTERSECT DISTINCT SELECT a FROM u", "SELECT a FROM t INTERSECT SELECT a FROM u"},
		{"(SELECT a FROM t UNION ALL SELECT a FROM u) INTERSECT SELECT a FROM v",
			"SELECT * FROM (SELECT a FROM t UNION ALL SELECT a FROM u) INTERSECT SELECT a FROM v"},
		{"SELECT a FROM t UNION ALL (SELECT a FROM u UNION ALL SELECT a FROM w) INTERSECT SELECT a FROM v",
			"SELECT a FROM t UNION ALL SELECT * FROM (SELECT a FROM u UNION ALL SELECT a FROM w) INTERSECT SELECT a FROM v"},
		{"SELECT a FROM t EXCEPT (SELECT a FROM u UNION ALL SELECT a FROM w)",
			"SELECT a FROM t EXCEPT SELECT * FROM (SELECT a FROM u UNION ALL SELECT a FROM w)"},
		{"(SELECT a FROM t INTERSECT SELECT a FROM u) UNION ALL SELECT a FROM v", "SELECT a FROM t INTERSECT SELECT a FROM u UNION ALL SELECT a FROM v"},
		{"SELECT a FROM t INTERSECT (SELECT a FROM u)", "SELECT a FROM t INTERSECT SELECT a FROM u"},
	} {
		q, err := Parse(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := Format(q); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	q, err := Parse("SELECT a FROM t UNION ALL SELECT a FROM u EXCEPT SELECT a FROM v INTERSECT ALL SELECT a FROM w")
	if err != nil {
		t.Fatal(err)
	}
	want := []SetOp{Union, Except, Intersect}
	for i, op := range want {
		if q.Op(i) != op || q.UnionDistinct(i) != (i == 1) {
			t.Errorf("op %d: %s distinct=%v, want %s distinct=%v", i, q.Op(i), q.UnionDistinct(i), op, i == 1)
		}
	}
}

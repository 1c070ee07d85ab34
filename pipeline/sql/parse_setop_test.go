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

// TestGroupingSets: GROUPING SETS, ROLLUP and CUBE parse into one
// GroupingSets element each and format back.
func TestGroupingSets(t *testing.T) {
	for _, in := range []string{
		"SELECT a, b, COUNT(*) FROM t GROUP BY GROUPING SETS ((a, b), a, ())",
		"SELECT a, b, COUNT(*) FROM t GROUP BY ROLLUP(a, b)",
		"SELECT a, b, c, GROUPING(a), GROUPING_ID(a, b) FROM t GROUP BY c, CUBE(a, (b, c))",
	} {
		q, err := Parse(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := Format(q); got != in {
			t.Errorf("got  %s\nwant %s", got, in)
		}
	}
	q, _ := Parse("SELECT a FROM t GROUP BY GROUPING SETS ((a, b), a, ())")
	g, ok := q.Selects[0].GroupBy[0].(*GroupingSets)
	if !ok || g.Kind != GroupingSetsList || len(g.Sets) != 3 || len(g.Sets[0]) != 2 || len(g.Sets[1]) != 1 || g.Sets[2] != nil {
		t.Errorf("parsed %#v", q.Selects[0].GroupBy[0])
	}
}

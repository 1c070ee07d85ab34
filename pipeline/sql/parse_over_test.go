package sql

import "testing"

// TestParseOver reads OVER clauses back to canonical text: the ranking
// functions of Top-N and the NULL-order and direction words.
func TestParseOver(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC)",
			"ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC)"},
		{"rank() over (partition by a, b order by c asc, d desc nulls first)",
			"RANK() OVER (PARTITION BY a, b ORDER BY c, d DESC NULLS FIRST)"},
		{"DENSE_RANK() OVER (ORDER BY x NULLS LAST)", "DENSE_RANK() OVER (ORDER BY x NULLS LAST)"},
		{"SUM(a) OVER ()", "SUM(a) OVER ()"},
		{"COUNT(*) FILTER (WHERE a > 1) OVER (PARTITION BY b)", "COUNT(*) FILTER (WHERE a > 1) OVER (PARTITION BY b)"},
		{"ROW_NUMBER() OVER (PARTITION BY k ORDER BY proctime) + 1", "ROW_NUMBER() OVER (PARTITION BY k ORDER BY proctime) + 1"},
	} {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.in, err)
			continue
		}
		if got := Format(e); got != tc.want {
			t.Errorf("Format(ParseExpr(%q)) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestOverShape checks the tree of a Top-N ranking call.
func TestOverShape(t *testing.T) {
	e, err := ParseExpr("ROW_NUMBER() OVER (PARTITION BY c ORDER BY s DESC, t)")
	if err != nil {
		t.Fatal(err)
	}
	o, ok := e.(*Over)
	if !ok {
		t.Fatalf("got %T, want *Over", e)
	}
	if o.Call.Name != "ROW_NUMBER" || len(o.Call.Args) != 0 {
		t.Errorf("call = %s(%d args)", o.Call.Name, len(o.Call.Args))
	}
	if o.OverAt.Col != 14 || o.Window.At.Col != 19 {
		t.Errorf("OVER at %v, ( at %v", o.OverAt, o.Window.At)
	}
	w := o.Window
	if len(w.PartitionBy) != 1 || len(w.OrderBy) != 2 || w.Frame != nil {
		t.Fatalf("window = %+v", w)
	}
	if !w.OrderBy[0].Desc || w.OrderBy[0].NullsFirst() || w.OrderBy[1].Desc || !w.OrderBy[1].NullsFirst() {
		t.Errorf("order = %+v %+v", w.OrderBy[0], w.OrderBy[1])
	}
}

func TestOverErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ROW_NUMBER() OVER", `1:18: expected "(" or a window name after OVER, got end of query`},
		{"ROW_NUMBER() OVER (PARTITION a)", "1:30: expected BY after PARTITION, got name a"},
		{"ROW_NUMBER() OVER (ORDER BY a NULLS)", "1:36: expected FIRST or LAST after NULLS, got \")\""},
		{"ROW_NUMBER() OVER (ORDER BY a", "1:30: unexpected end of query: missing ) for OVER ( at 1:19"},
	} {
		_, err := ParseExpr(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseExpr(%q) = %v, want %s", tc.in, err, tc.want)
		}
	}
}

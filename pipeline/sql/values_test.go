package sql

import "testing"

func TestParseValues(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT x, y FROM (VALUES (1, 'a'), (2, 'b')) AS t (x, y)", ""},
		{"SELECT * FROM (VALUES 1, 2.5, NULL) t", "SELECT * FROM (VALUES (1), (2.5), (NULL)) AS t"},
		{"SELECT * FROM (VALUES (1)) AS t (x) JOIN s ON t.x = s.a", ""},
		{"SELECT a FROM s WHERE a IN (SELECT x FROM (VALUES (1), (2)) AS v (x))", ""},
		{"SELECT 1, 'a'", ""},
		{"VALUES (1, 'a'), (2, 'b')", "SELECT * FROM (VALUES (1, 'a'), (2, 'b'))"},
		{"SELECT a FROM s WHERE a IN (VALUES 1, 2)", "SELECT a FROM s WHERE a IN (SELECT * FROM (VALUES (1), (2)))"},
		{"SELECT a FROM s UNION ALL VALUES (3)", "SELECT a FROM s UNION ALL SELECT * FROM (VALUES (3))"},
		{"SELECT 1 UNION ALL SELECT 2", ""},
		{"SELECT * FROM (SELECT 1 AS x)", ""},
		{"SELECT x FROM UNNEST(ARRAY[1, 2]) AS t (x)", ""},
		{"SELECT x, n FROM UNNEST(ARRAY['a']) WITH ORDINALITY AS t (x, n)", ""},
	} {
		q, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		want := tc.want
		if want == "" {
			want = tc.in
		}
		if got := Format(q); got != want {
			t.Errorf("Format(Parse(%q)) =\n %s\nwant\n %s", tc.in, got, want)
		}
		roundTrip(t, tc.in, q)
	}
}

// TestParseValuesShape checks the tree: a SELECT without FROM and a lone
// UNNEST read the implicit one-row table, and VALUES keeps every row.
func TestParseValuesShape(t *testing.T) {
	q, err := Parse("SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	v, ok := q.Selects[0].From.(*Values)
	if !ok || !v.Implicit || len(v.Rows) != 1 || len(v.Rows[0]) != 0 {
		t.Fatalf("SELECT 1 reads %#v, want the implicit one-row table", q.Selects[0].From)
	}
	q, err = Parse("SELECT x FROM UNNEST(ARRAY[1]) AS t (x)")
	if err != nil {
		t.Fatal(err)
	}
	u, ok := q.Selects[0].From.(*Unnest)
	if !ok {
		t.Fatalf("lone UNNEST parsed as %T", q.Selects[0].From)
	}
	if in, ok := u.Input.(*Values); !ok || !in.Implicit {
		t.Fatalf("lone UNNEST reads %#v, want the implicit one-row table", u.Input)
	}
	q, err = Parse("SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, NULL)) AS t (x, y)")
	if err != nil {
		t.Fatal(err)
	}
	v = q.Selects[0].From.(*Values)
	if v.Implicit || len(v.Rows) != 3 || len(v.Rows[2]) != 2 || v.Alias.Name != "t" || len(v.Columns) != 2 || v.Columns[1].Name != "y" {
		t.Fatalf("VALUES parsed as %#v", v)
	}
}

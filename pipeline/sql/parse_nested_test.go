package sql

import (
	"strings"
	"testing"
)

func TestParseNested(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT ARRAY[1, 2], MAP['a', 1], ROW(1, 'a') FROM t", ""},
		{"SELECT arr[1], m['k'], r.f, t.r.f, r.f.g, arr[1][2], (x).f FROM t", ""},
		{"SELECT CARDINALITY(arr), ELEMENT(arr) FROM t", ""},
		{"SELECT CAST(x AS ARRAY<INT>), CAST(y AS MAP<STRING, ARRAY<BIGINT NOT NULL>>) FROM t", ""},
		{"SELECT CAST(x AS ROW<a INT, `b c` STRING>), CAST(x AS ROW(a INT)) FROM t",
			"SELECT CAST(x AS ROW<`a` INT, `b c` STRING>), CAST(x AS ROW<`a` INT>) FROM t"},
		{"SELECT x FROM t CROSS JOIN UNNEST(t.arr) AS u (x)", ""},
		{"SELECT x FROM t, UNNEST(arr) u(x, n)", "SELECT x FROM t CROSS JOIN UNNEST(arr) AS u (x, n)"},
		{"SELECT x FROM t CROSS JOIN LATERAL UNNEST(arr) WITH ORDINALITY AS u (x, n)", "SELECT x FROM t CROSS JOIN UNNEST(arr) WITH ORDINALITY AS u (x, n)"},
		{"SELECT x FROM t CROSS JOIN UNNEST(a) AS u (x) CROSS JOIN UNNEST(u.x) AS v (y)", ""},
		{"SELECT x FROM t LEFT JOIN UNNEST(arr) AS u (x) ON TRUE", ""},
		{"SELECT x FROM t LEFT OUTER JOIN LATERAL UNNEST(arr) WITH ORDINALITY AS u (x, n) ON TRUE", "SELECT x FROM t LEFT JOIN UNNEST(arr) WITH ORDINALITY AS u (x, n) ON TRUE"},
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

func TestParseNestedErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT ARRAY[] FROM t", "1:14: ARRAY[] needs at least one element"},
		{"SELECT MAP['a'] FROM t", "1:8: MAP[...] needs an even number of arguments"},
		{"SELECT arr[1 FROM t", "1:14:"},
		{"SELECT r.select FROM t", "1:10: expected a column name after r., got the keyword SELECT"},
		{"SELECT a.b.select FROM t", "1:12: expected a field name after ., got the keyword SELECT"},
		{"SELECT CAST(x AS ARRAY<INT, INT>) FROM t", "1:18: type \"ARRAY<INT, INT>\": ARRAY takes 1 type parameter(s), got 2"},
		{"SELECT x FROM t CROSS JOIN UNNEST(a, b) AS u (x)", "1:36: UNNEST of several arrays"},
		{"SELECT x FROM t CROSS JOIN UNNEST(a) AS u (x, X)", "1:47: duplicate column X"},
		{"SELECT x FROM t LEFT JOIN UNNEST(a) AS u (x) ON x > 1", "1:49: LEFT JOIN UNNEST(...) takes ON TRUE"},
		{"SELECT x FROM t LEFT JOIN UNNEST(a) AS u (x)", "ON TRUE after LEFT JOIN UNNEST"},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want %q", tc.in, err, tc.want)
		}
	}
}

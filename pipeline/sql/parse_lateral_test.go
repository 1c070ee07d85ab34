package sql

import (
	"strings"
	"testing"
)

func TestParseLateralTable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT w FROM t CROSS JOIN LATERAL TABLE(split(s)) AS x (w)", ""},
		{"SELECT w FROM t, LATERAL TABLE(split(s, ' ')) AS x", "SELECT w FROM t CROSS JOIN LATERAL TABLE(SPLIT(s, ' ')) AS x"},
		{"SELECT w FROM t JOIN LATERAL TABLE(split(s)) AS x (w, n) ON TRUE", "SELECT w FROM t CROSS JOIN LATERAL TABLE(SPLIT(s)) AS x (w, n)"},
		{"SELECT w FROM t LEFT JOIN LATERAL TABLE(split(s)) x (w) ON TRUE", "SELECT w FROM t LEFT JOIN LATERAL TABLE(SPLIT(s)) AS x (w) ON TRUE"},
		{"SELECT w FROM t CROSS JOIN LATERAL TABLE(f(a)) AS x (w) CROSS JOIN LATERAL TABLE(g(x.w)) AS y (v)", "SELECT w FROM t CROSS JOIN LATERAL TABLE(F(a)) AS x (w) CROSS JOIN LATERAL TABLE(G(x.w)) AS y (v)"},
	} {
		q, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		want := tc.want
		if want == "" {
			want = strings.Replace(tc.in, "split(", "SPLIT(", 1)
		}
		if got := Format(q); got != want {
			t.Errorf("Format(Parse(%q)) =\n %s\nwant\n %s", tc.in, got, want)
		}
		roundTrip(t, tc.in, q)
	}
	for _, tc := range []struct{ in, want string }{
		{"SELECT w FROM t CROSS JOIN LATERAL TABLE(1 + 2) AS x", "1:42: LATERAL TABLE(...) takes a call of a table function"},
		{"SELECT w FROM t LEFT JOIN LATERAL TABLE(f(s)) AS x (w) ON w = 'a'", "1:59: JOIN LATERAL TABLE(...) takes ON TRUE"},
		{"SELECT w FROM t LEFT JOIN LATERAL TABLE(f(s)) AS x (w)", "ON TRUE after JOIN LATERAL TABLE"},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want %q", tc.in, err, tc.want)
		}
	}
}

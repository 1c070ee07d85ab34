package sql

import (
	"strings"
	"testing"
)

// TestParseFrame reads OVER windows with frames, and WINDOW clauses, back
// to canonical text.
func TestParseFrame(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT SUM(a) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t", ""},
		{"SELECT SUM(a) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW) FROM t", ""},
		{"SELECT COUNT(*) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t", ""},
		{"SELECT COUNT(*) OVER (ORDER BY ts RANGE UNBOUNDED PRECEDING) FROM t", ""},
		{"SELECT COUNT(*) OVER (ORDER BY ts ROWS 5 PRECEDING) FROM t", ""},
		{"SELECT COUNT(*) OVER (ORDER BY ts ROWS BETWEEN CURRENT ROW AND CURRENT ROW) FROM t", ""},
		{"select sum(a) over w, max(a) over w as m from t window w as (partition by k order by ts rows between 1 preceding and current row)",
			"SELECT SUM(a) OVER w, MAX(a) OVER w AS m FROM t WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"},
		{"SELECT SUM(a) OVER w1, SUM(a) OVER w2 FROM t WHERE a > 0 WINDOW w1 AS (ORDER BY ts), w2 AS (ORDER BY ts ROWS 1 PRECEDING)", ""},
		{"SELECT k FROM (SELECT k, SUM(a) OVER w FROM t WINDOW w AS (ORDER BY ts)) AS s", ""},
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
			t.Errorf("Format(Parse(%q))\n got %q\nwant %q", tc.in, got, want)
		}
	}
}

// TestNamedWindowShared: every OVER w shares the WINDOW clause's window.
func TestNamedWindowShared(t *testing.T) {
	q, err := Parse("SELECT SUM(a) OVER w, COUNT(*) OVER w FROM t WINDOW w AS (ORDER BY ts ROWS 3 PRECEDING)")
	if err != nil {
		t.Fatal(err)
	}
	items := q.Selects[0].Items
	a, b := items[0].Expr.(*Over), items[1].Expr.(*Over)
	if a.Window == nil || a.Window != b.Window || a.Window.Frame.Unit != FrameRows || a.Window.Frame.Preceding == nil {
		t.Fatalf("windows %+v %+v", a.Window, b.Window)
	}
}

func TestFrameErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT SUM(a) OVER (ORDER BY ts ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t", "1:62: an OVER window ends at CURRENT ROW"},
		{"SELECT SUM(a) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM t", "1:70: an OVER window ends at CURRENT ROW"},
		{"SELECT SUM(a) OVER (ORDER BY ts ROWS 1 FOLLOWING) FROM t", "1:40: an OVER window ends at CURRENT ROW: FOLLOWING is not supported"},
		{"SELECT SUM(a) OVER (ORDER BY ts ROWS BETWEEN 1 PRECEDING) FROM t", "1:57: expected AND after the frame's start"},
		{"SELECT SUM(a) OVER (ORDER BY ts ROWS 1) FROM t", "1:39: expected PRECEDING after the frame's offset"},
		{"SELECT SUM(a) OVER w FROM t", "1:20: window w is not defined: add WINDOW w AS"},
		{"SELECT SUM(a) OVER w FROM t WINDOW w AS (ORDER BY ts), w AS (ORDER BY ts)", "1:56: window w is defined twice"},
		{"SELECT SUM(a) OVER w FROM t WINDOW w (ORDER BY ts)", "1:38: expected AS after the window name"},
		{"SELECT SUM(a) OVER w FROM t WINDOW w AS ORDER BY ts", "1:41: expected \"(\" and the window after AS"},
		{"SELECT a FROM t WINDOW w AS (ORDER BY ts) WHERE a > 1", "1:43: "},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %s...", tc.in, err, tc.want)
		}
	}
}

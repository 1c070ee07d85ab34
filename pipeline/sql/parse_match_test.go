package sql

import (
	"strings"
	"testing"
)

var matchFormatCases = []struct{ in, want string }{
	{"SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES A.v AS av, LAST(B.v) AS lb ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C) DEFINE A AS A.v > 1, B AS B.v < PREV(B.v)) AS m", ""},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts ASC, v DESC MEASURES SUM(A.v) AS s PATTERN (A{2,3}? B*? C{2} D{1,} E{,4} F?) WITHIN INTERVAL '1' HOUR DEFINE B AS TRUE)",
		"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts, v DESC MEASURES SUM(A.v) AS s PATTERN (A{2,3}? B*? C{2} D{1,} E{,4} F?) WITHIN INTERVAL '1' HOUR DEFINE B AS TRUE)"},
	{"select * from t match_recognize (partition by k, j order by ts measures first(a.v) as f after match skip to next row pattern ( a  b {3} ) define a as a.v = 1) x",
		"SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY k, j ORDER BY ts MEASURES FIRST(a.v) AS f AFTER MATCH SKIP TO NEXT ROW PATTERN (a b{3}) DEFINE a AS a.v = 1) AS x"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.v AS a AFTER MATCH SKIP TO FIRST B PATTERN (A B) DEFINE A AS TRUE)", ""},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.v AS a AFTER MATCH SKIP TO B PATTERN (A B) DEFINE A AS TRUE)",
		"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.v AS a AFTER MATCH SKIP TO LAST B PATTERN (A B) DEFINE A AS TRUE)"},
	{"SELECT * FROM (SELECT * FROM t) MATCH_RECOGNIZE (ORDER BY ts ALL ROWS PER MATCH PATTERN (A) DEFINE A AS TRUE) AS m WHERE m.k > 1", ""},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (`a b` B) DEFINE `a b` AS TRUE)", ""},
}

var matchErrorCases = []struct{ in, want string }{
	{"SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS TRUE)", "1:34: expected ORDER BY in MATCH_RECOGNIZE, got name PATTERN"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A | B) DEFINE A AS TRUE)", "1:57: alternation (|) in a pattern is not supported by Flink"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A (B C)+) DEFINE A AS TRUE)", "1:57: pattern groups are not supported: Flink applies quantifiers to single variables only, as in (A B+ C)"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (^A) DEFINE A AS TRUE)", "1:55: anchors (^, $) in a pattern are not supported by Flink"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN ({- A -} B) DEFINE A AS TRUE)", "1:55: pattern exclusion ({- ... -}) is not supported by Flink; a quantifier follows a variable"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A{3,1}) DEFINE A AS TRUE)", "1:56: the quantifier's upper bound 1 is below its lower bound 3"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A{x}) DEFINE A AS TRUE)", "1:56: expected a quantifier {n}, {n,}, {n,m} or {,m}"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A", "1:56: unexpected end of query: missing ) for PATTERN ( at 1:54"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN () DEFINE A AS TRUE)", "1:55: expected a pattern variable, got \")\""},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS TRUE", "1:74: unexpected end of query: missing ) for MATCH_RECOGNIZE ( at 1:33"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.v PATTERN (A) DEFINE A AS TRUE)", "1:59: expected AS and a name after a measure, got name PATTERN"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) SUBSET U = (A) DEFINE A AS TRUE)", "1:58: SUBSET is not supported: Flink supports no SUBSET in MATCH_RECOGNIZE"},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS TRUE) x\n WHERE ?", "2:8: unexpected character '?'"},
}

func TestParseMatchRecognize(t *testing.T) {
	for _, tc := range matchFormatCases {
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
			t.Errorf("Format(Parse(%q))\n got %s\nwant %s", tc.in, got, want)
		}
		roundTrip(t, tc.in, q)
	}
	for _, tc := range matchErrorCases {
		_, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) = nil error, want %s", tc.in, tc.want)
			continue
		}
		checkError(t, tc.in, err)
		e := err.(*Error)
		if got := e.Pos.String() + ": " + e.Msg; got != tc.want {
			t.Errorf("Parse(%q)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestParseMatchShape(t *testing.T) {
	q, err := Parse("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B*? C{2,} D{,3}) DEFINE A AS TRUE)")
	if err != nil {
		t.Fatal(err)
	}
	m := q.Selects[0].From.(*MatchRecognize)
	type term struct {
		name      string
		min, max  int
		reluctant bool
	}
	want := []term{{"A", 1, 1, false}, {"B", 0, PatternUnbounded, true}, {"C", 2, PatternUnbounded, false}, {"D", 0, 3, false}}
	for i, x := range m.Pattern.Terms {
		if got := (term{x.Var.Name, x.Min, x.Max, x.Reluctant}); got != want[i] {
			t.Errorf("term %d = %+v, want %+v", i, got, want[i])
		}
	}
	if m.Input.(*TableRef).Name.Name != "t" || m.Skip != SkipDefault {
		t.Errorf("input %v skip %v", m.Input, m.Skip)
	}
}

func FuzzParseMatch(f *testing.F) {
	for _, tc := range matchFormatCases {
		f.Add(tc.in)
	}
	for _, tc := range matchErrorCases {
		f.Add(tc.in)
	}
	f.Add("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A{" + strings.Repeat("9", 20) + "}) DEFINE A AS TRUE)")
	f.Fuzz(func(t *testing.T, src string) {
		q, err := Parse(src)
		if err != nil {
			checkError(t, src, err)
			return
		}
		roundTrip(t, src, q)
	})
}

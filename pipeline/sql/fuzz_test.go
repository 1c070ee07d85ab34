package sql

import (
	"errors"
	"strings"
	"testing"
)

// checkError asserts the parser's error contract: an *Error whose line and
// column agree with its byte offset, inside the text.
func checkError(t *testing.T, src string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not *Error", err, err)
	}
	p := e.Pos
	if p.Line < 1 || p.Col < 1 || p.Offset < 0 || p.Offset > len(src) {
		t.Fatalf("error %q has a position outside %d bytes: %+v", e.Msg, len(src), p)
	}
	line := strings.Count(src[:p.Offset], "\n") + 1
	col := 1
	for i := strings.LastIndexByte(src[:p.Offset], '\n') + 1; i < p.Offset; i++ {
		if src[i]&0xC0 != 0x80 {
			col++
		}
	}
	if line != p.Line || col != p.Col {
		t.Fatalf("error %q at %+v, but offset %d is %d:%d", e.Msg, p, p.Offset, line, col)
	}
	if e.Msg == "" {
		t.Fatalf("error at %v has no message", p)
	}
	_ = e.Snippet(src) // must not panic
}

func FuzzParse(f *testing.F) {
	for _, tc := range formatCases {
		f.Add(tc.in)
	}
	for _, tc := range errorCases {
		f.Add(tc.in)
	}
	f.Add(strings.Repeat("(", 300) + "SELECT a FROM t")
	f.Add("SELECT " + strings.Repeat("-", 300) + "1 FROM t")
	f.Fuzz(func(t *testing.T, src string) {
		q, err := Parse(src)
		if err != nil {
			checkError(t, src, err)
			return
		}
		roundTrip(t, src, q)
	})
}

func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{
		"TO_TIMESTAMP_LTZ(ts, 3)", "FLOOR(ts TO DAY)", "CEILING((INTERVAL '1' HOUR) TO WEEK)", "event_time - INTERVAL '5' SECOND", "a + b * c", "NOT a AND b OR c",
		"CASE WHEN a THEN b ELSE c END", "CAST(x AS DECIMAL(10, 2))", "TRIM(LEADING 'x' FROM s)",
		"SUBSTRING(s FROM 1 FOR 2)", "POSITION('a' IN s)", "EXTRACT(HOUR FROM ts)", "x BETWEEN 1 AND 2",
		"x NOT IN (1, 2)", "x LIKE 'a%' ESCAPE '!'", "x IS NOT NULL", "INTERVAL '1 02:03:04.5' DAY TO SECOND",
		"DATE '2024-01-01'", "TIMESTAMP '2024-01-01 10:00:00.123'", "X'0aff'", "-9223372036854775808",
		"1.5e3", "'it''s'", "`a``b`.c", "COUNT(DISTINCT x)", "CURRENT_TIMESTAMP", "a || b || c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := ParseExpr(src)
		if err != nil {
			checkError(t, src, err)
			return
		}
		roundTrip(t, src, e)
	})
}

package sql

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// errorCases pair bad SQL with the exact error: position and message.
var errorCases = []struct{ in, want string }{
	{"SELECT FROM t", "1:8: expected an expression after SELECT, got FROM"},
	{"SELECT a, FROM t", "1:11: expected an expression after \",\", got FROM"},
	{"SELECT a WHERE b", "1:10: expected \",\" or FROM after a select item, got WHERE"},
	{"SELECT * FROM (VALUES (1, 'a'), (2))", "1:33: this VALUES row has 1 columns, the first has 2"},
	{"SELECT * FROM (VALUES (1, 'a')) AS t(x)", "1:37: the VALUES alias list names 1 columns, the rows have 2"},
	{"SELECT * FROM (VALUES (1, 2)) AS t(x, X)", "1:39: duplicate column X in the VALUES alias list"},
	{"SELECT * FROM VALUES (1)", "1:15: VALUES in FROM must be parenthesised: FROM (VALUES (1, 'a')) AS t(x, y)"},
	{"SELECT * FROM (VALUES (1), ) AS t(x)", "1:28: expected an expression after VALUES, got \")\""},
	{"SELECT a b c FROM t", "1:12: expected \",\" or FROM after a select item, got name c"},
	{"SELECT a FROM", "1:14: expected a table name after FROM, got end of query"},
	{"SELECT a FROM t WHERE", "1:22: expected an expression after WHERE, got end of query"},
	{"SELECT a FROM t WHERE a =", "1:26: expected an expression after \"=\", got end of query"},
	{"SELECT a FROM t GROUP a", "1:23: expected BY after GROUP, got name a"},
	{"SELECT a FROM t GROUP BY", "1:25: expected an expression after GROUP BY, got end of query"},
	{"SELECT a FROM t ORDER BY a OFFSET 1 ROWS", "1:28: OFFSET without LIMIT or FETCH is not supported (nor in Flink); add FETCH NEXT n ROWS ONLY"},
	{"SELECT a FROM t LIMIT 10", "1:17: LIMIT is not supported yet"},
	{"SELECT a FROM t JOIN u USING id", "1:30: expected ( after USING, got name id"},
	{"SELECT a FROM t JOIN u USING (id, ID)", "1:35: duplicate column ID in the USING alias list"},
	{"SELECT a FROM t LEFT u ON true", "1:22: expected JOIN after LEFT"},
	{"SELECT a FROM t JOIN u", "1:23: expected ON after the joined table, got end of query"},
	{"SELECT a FROM t NATURAL JOIN u ON true", "1:32: a NATURAL join takes no ON"},
	{"SELECT a FROM t NATURAL CROSS JOIN u", "1:25: expected JOIN after NATURAL, got CROSS"},
	{"SELECT a FROM t JOIN u FOR SYSTEM_TIME o.ts ON true", "1:40: expected AS OF after FOR SYSTEM_TIME, got name o"},
	{"SELECT a FROM t JOIN u FOR SYSTEM_TIME AS OF ON true", "1:46: expected an expression after FOR SYSTEM_TIME AS OF, got ON"},
	{"SELECT a FROM t JOIN (SELECT * FROM u) FOR SYSTEM_TIME AS OF t.ts ON true", "1:40: FOR SYSTEM_TIME AS OF only follows a table name (FROM t FOR SYSTEM_TIME AS OF x AS alias)"},
	{"SELECT a FROM t UNION", "1:22: expected SELECT after UNION, got end of query"},
	{"SELECT a FROM t UNION DISTINCT", "1:31: expected SELECT after UNION, got end of query"},
	{"SELECT a FROM t MINUS SELECT b FROM u", "1:17: MINUS is not supported: write EXCEPT, as Flink does"},
	{"WITH x AS (SELECT 1 FROM t)", "1:28: expected SELECT after the WITH clause, got end of query"},
	{"WITH x (a) AS (SELECT 1 FROM t) SELECT * FROM x", "1:8: column lists on a WITH query, name(a, b), are not supported; alias the columns in its SELECT list"},
	{"WITH x AS (SELECT 1 FROM t), X AS (SELECT 2 FROM t) SELECT * FROM x", "1:30: the WITH query \"X\" is defined twice"},
	{"WITH x SELECT 1 FROM t", "1:8: expected AS after the WITH query's name, got SELECT"},
	{"WITH RECURSIVE x AS (SELECT 1 FROM t) SELECT * FROM x", "1:6: WITH RECURSIVE is not supported (Flink has no recursive queries)"},
	{"SELECT a FROM t UNION ALL WITH x AS (SELECT 1 FROM t) SELECT * FROM x", "1:27: WITH must begin the query (or a parenthesised query): write WITH name AS (...) SELECT ..."},
	{"SELECT SUM(a) OVER w FROM t", "1:20: window w is not defined: add WINDOW w AS (PARTITION BY ... ORDER BY ...) after the query's WHERE, GROUP BY and HAVING"},
	{"SELECT a FROM t WHERE a IN (SELECT b FROM u", "1:44: unexpected end of query: missing ) for ( at 1:28"},
	{"SELECT a FROM t WHERE EXISTS b", "1:30: expected (SELECT ...) after EXISTS, got name b"},
	{"SELECT (SELECT 1 FROM u FROM t", "1:25: expected ) to close ( at 1:8, got FROM"},
	{"SELECT 'abc FROM t", "1:8: unterminated string literal: ' has no closing '"},
	{"SELECT `abc FROM t", "1:8: unterminated quoted name: ` has no closing `"},
	{"SELECT \"abc\" FROM t", "1:8: double quotes are not used in etld SQL: write 'text' for a string or `name` for a name"},
	{"SELECT a /* comment FROM t", "1:10: unterminated comment: /* has no closing */"},
	{"SELECT a FROM t WHERE a | b", "1:25: unexpected character '|': write || to concatenate strings, OR for a logical or"},
	{"SELECT INTERVAL '5' SECS FROM t", "1:21: unknown interval unit \"SECS\"; did you mean SECONDS?"},
	{"SELECT INTERVAL '1.5' WEEK FROM t", "1:17: invalid interval '1.5' for WEEK: want a whole number of weeks"},
	{"SELECT INTERVAL '1' QUARTER TO MONTH FROM t", "1:29: INTERVAL QUARTER takes no TO"},
	{"SELECT INTERVAL '1-12' YEAR TO MONTH FROM t", "1:17: invalid interval '1-12' for YEAR TO MONTH: month field 12 is out of range (0 to 11)"},
	{"SELECT INTERVAL '1' YEAR TO DAY FROM t", "1:26: INTERVAL YEAR TO DAY: the only year-month range is YEAR TO MONTH"},
	{"SELECT INTERVAL '1.5' MONTH FROM t", "1:17: invalid interval '1.5' for MONTH: want '[-]M'"},
	{"SELECT INTERVAL 5 SECOND FROM t", "1:17: interval value must be quoted: INTERVAL '5' SECOND"},
	{"SELECT INTERVAL '5x' SECOND FROM t", "1:17: invalid interval '5x' for SECOND: want '[-]S[.fff]'"},
	{"SELECT INTERVAL '1:75' MINUTE TO SECOND FROM t", "1:17: invalid interval '1:75' for MINUTE TO SECOND: second field 75 is out of range (0 to 59)"},
	{"SELECT INTERVAL '1' SECOND TO MINUTE FROM t", "1:28: INTERVAL SECOND TO MINUTE: the unit after TO must be smaller than SECOND"},
	{"SELECT INTERVAL '100' SECOND(2) FROM t", "1:17: invalid interval '100' for SECOND: the value has more digits than the precision 2"},
	{"SELECT INTERVAL '1.2345' SECOND FROM t", "1:17: invalid interval '1.2345' for SECOND: fractions of a second go to milliseconds: at most 3 digits after the point"},
	{"SELECT CAST(a AS FOO) FROM t", "1:18: unknown type \"FOO\" (want one of BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), STRING, VARCHAR(n), BYTES, DATE, TIME(p), TIMESTAMP(p), TIMESTAMP_LTZ(p), ARRAY<T>, MAP<K, V>, ROW<name T, ...>)"},
	{"SELECT CAST(a AS DECIMAL(40, 2)) FROM t", "1:18: type \"DECIMAL(40, 2)\": DECIMAL precision must be between 1 and 38"},
	{"SELECT CAST(a AS ARRAY<INT) FROM t", "1:18: type \"ARRAY<INT\": unclosed <"},
	{"SELECT CAST(a) FROM t", "1:14: expected AS and a type in CAST, got \")\""},
	{"SELECT CAST(a AS INT FROM t", "1:28: unexpected end of query: missing ) for CAST( at 1:12"},
	{"SELECT\n  CASE\n  WHEN a THEN b", "3:16: unexpected end of query: missing END for CASE started at 2:3"},
	{"SELECT CASE a END FROM t", "1:15: expected WHEN in CASE started at 1:8, got END"},
	{"SELECT CASE WHEN a b END FROM t", "1:20: expected THEN after WHEN in CASE started at 1:8, got name b"},
	{"SELECT CASE WHEN a THEN b FROM t", "1:27: expected WHEN, ELSE or END in CASE started at 1:8, got FROM"},
	{"SELECT f(a FROM t", "1:12: expected ) to close f( at 1:9, got FROM"},
	{"SELECT f(a,) FROM t", "1:12: expected an expression after \",\", got \")\""},
	{"SELECT SUM(*) FROM t", "1:12: only COUNT accepts *; SUM needs arguments"},
	{"SELECT a FROM t WHERE a BETWEEN 1 FROM t", "1:35: expected AND in BETWEEN started at 1:25, got FROM"},
	{"SELECT a FROM t WHERE a NOT FROM t", "1:29: expected BETWEEN, IN or LIKE after NOT, got FROM"},
	{"SELECT a FROM t WHERE a IS b", "1:28: expected NULL, TRUE, FALSE, UNKNOWN or JSON after IS, got name b"},
	{"SELECT a FROM t WHERE a IS DISTINCT b", "1:37: expected FROM after IS [NOT] DISTINCT, got name b"},
	{"SELECT 99999999999999999999 FROM t", "1:8: integer 99999999999999999999 is out of range for BIGINT"},
	{"SELECT 1.234567890123456789012345678901234567890 FROM t", "1:8: decimal 1.234567890123456789012345678901234567890 has 40 digits; DECIMAL holds at most 38 (write it with an exponent, 1.5E3, for a DOUBLE)"},
	{"SELECT 1e999 FROM t", "1:8: number 1e999 is out of range for DOUBLE"},
	{"SELECT 1e FROM t", "1:8: malformed number 1e: the exponent needs digits"},
	{"SELECT 12abc FROM t", "1:8: malformed number 12abc"},
	{"SELECT X'0g' FROM t", "1:8: binary string X'...' holds a non-hex character 'g'"},
	{"SELECT X'abc' FROM t", "1:8: binary string X'...' needs an even number of hex digits"},
	{"SELECT DATE '2024-13-01' FROM t", "1:13: invalid DATE literal '2024-13-01': want 'YYYY-MM-DD'"},
	{"SELECT TIMESTAMP '2024-01-01T10:00:00' FROM t", "1:18: invalid TIMESTAMP literal '2024-01-01T10:00:00': want 'YYYY-MM-DD HH:MM:SS[.fraction]'"},
	{"SELECT TIME '25:00:00' FROM t", "1:13: invalid TIME literal '25:00:00': want 'HH:MM:SS[.fraction]'"},
	{"SELECT EXTRACT(YEARS FROM ts) FROM t", "1:16: unknown time unit YEARS in EXTRACT; did you mean YEAR?"},
	{"SELECT TRIM(LEADING 'x' s) FROM t", "1:25: expected FROM in TRIM, got name s"},
	{"SELECT OVERLAY(s, 'x', 1) FROM t", "1:17: expected PLACING in OVERLAY(s PLACING r FROM n [FOR len]), got \",\""},
	{"SELECT OVERLAY(s PLACING 'x' 1) FROM t", "1:30: expected FROM in OVERLAY(s PLACING r FROM n [FOR len]), got number 1"},
	{"SELECT POSITION('a' s) FROM t", "1:21: expected IN in POSITION(needle IN haystack), got name s"},
	{"SELECT a.b.c.select FROM t", "1:14: expected a field name after ., got the keyword SELECT; quote it as `select` to use it as a name"},
	{"SELECT t.select FROM t", "1:10: expected a column name after t., got the keyword SELECT; quote it as `select` to use it as a name"},
	{"SELECT a AS FROM t", "1:13: expected an alias after AS, got the keyword FROM; quote it as `FROM` to use it as a name"},
	{"SELECT a AS select FROM t", "1:13: expected an alias after AS, got the keyword SELECT; quote it as `select` to use it as a name"},
	{"SELECT a FROM db.t", "1:17: qualified table names (catalog.database.table) are not supported: name a source or a transform"},
	{"SELECT a FROM t AS x(a, b)", "1:21: column aliases on a FROM item, alias(a, b), are not supported; alias the columns in the SELECT list"},
	{"SELECT * FROM TABLE(SESSION(TABLE t, DESCRIPTOR(ts)))", "1:52: SESSION needs a gap: SESSION(TABLE t [PARTITION BY col, ...], DESCRIPTOR(time_col), gap)"},
	{"SELECT * FROM TABLE(TUMBLE(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' MINUTE))", "1:36: PARTITION BY is only for SESSION windows; TUMBLE reads the table as a whole"},
	{"SELECT * FROM TABLE(SESSION(TABLE t PARTITION k, DESCRIPTOR(ts), INTERVAL '1' MINUTE))", "1:47: expected BY after PARTITION, got name k"},
	{"SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY (a, b, DESCRIPTOR(ts), INTERVAL '1' MINUTE))", "1:67: expected ) to close PARTITION BY ( at 1:50, got \"(\""},
	{"SELECT * FROM TABLE(SESSION(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts)))", "1:71: SESSION is missing the GAP argument: SESSION(TABLE t [PARTITION BY col, ...], DESCRIPTOR(time_col), gap)"},
	{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts)))", "1:51: TUMBLE needs a size: TUMBLE(TABLE t, DESCRIPTOR(time_col), size [, offset])"},
	{"SELECT * FROM TABLE(TUMBLE(t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))", "1:28: write TABLE t to pass a table to a window function"},
	{"SELECT * FROM TABLE(TUMBLE(TABLE t, ts, INTERVAL '1' MINUTE))", "1:37: expected DESCRIPTOR(time_col) naming the time attribute, got name ts"},
	{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(a, b), INTERVAL '1' MINUTE))", "1:49: DESCRIPTOR takes exactly one time column"},
	{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '1' SECOND, 3))", "1:93: TUMBLE takes at most 4 arguments: TUMBLE(TABLE t, DESCRIPTOR(time_col), size [, offset])"},
	{"SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))", "1:69: HOP needs a size: HOP(TABLE t, DESCRIPTOR(time_col), slide, size [, offset])"},
	{"SELECT * FROM TABLE(TUMBLE(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts)))", "1:70: TUMBLE is missing the SIZE argument: TUMBLE(TABLE t, DESCRIPTOR(time_col), size [, offset])"},
	{"SELECT * FROM TABLE(TUMBLE(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZES => INTERVAL '1' MINUTE))", "1:72: TUMBLE has no parameter SIZES; did you mean SIZE? (its parameters: DATA, TIMECOL, SIZE, OFFSET)"},
	{"SELECT * FROM TABLE(TUMBLE(DATA => TABLE t, DATA => TABLE u, SIZE => INTERVAL '1' MINUTE))", "1:45: parameter DATA is given twice"},
	{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), SIZE => INTERVAL '1' MINUTE))", "1:53: named and positional arguments cannot be mixed in TUMBLE"},
	{"SELECT * FROM TABLE(TUMBLE(TABLE (SELECT * FROM t), DESCRIPTOR(ts), INTERVAL '1' MINUTE))", "1:34: a window function reads a named table (TABLE name), not a subquery; define the subquery as its own transform"},
	{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)", "1:73: unexpected end of query: missing ) for TABLE( at 1:20"},
	{"SELECT * FROM TABLE t", "1:15: TABLE name is only valid inside a window function; write FROM name to read a table"},
	{"SELECT * FROM TABLE(FOO(TABLE t))", "1:21: expected TUMBLE, HOP, CUMULATE or SESSION after TABLE(, got name FOO"},
	{"SELECT a FROM t; SELECT b FROM u", "1:18: only one query is allowed; a transform holds a single SELECT"},
	{"SELECT a FROM t)", "1:16: unbalanced ): no ( is open here"},
	{"SELECT ((a FROM t", "1:12: expected ) to close ( at 1:9, got FROM"},
	{"SELECT a FROM t WHERE NOT", "1:26: expected an expression after NOT, got end of query"},
	{"SELECT a FROM t WHERE a = NOT b", "1:27: expected an expression after \"=\", got NOT"},
	{"SELECT a FROM t WHERE a = ANY (1)", "1:27: = ANY (quantified comparison) is not supported yet"},
	{"SELECT t.* + 1 FROM t", "1:12: expected \",\" or FROM after a select item, got \"+\""},
	{"SELECT * + 1 FROM t", "1:10: expected \",\" or FROM after a select item, got \"+\""},
	{"SELECT (a, b FROM t", "1:14: expected ) to close ( at 1:8, got FROM"},
	{"SELECT COUNT(*) FILTER (a > 1) FROM t", "1:25: expected WHERE after FILTER (, got name a"},
	{"SELECT COUNT(*) FILTER (WHERE a > 1 FROM t", "1:37: expected ) to close FILTER ( at 1:24, got FROM"},
	{"SELECT SUM(a) FILTER (WHERE a > 1) OVER (ORDER BY b ROWS 2 FOLLOWING) FROM t", "1:60: an OVER window ends at CURRENT ROW: FOLLOWING is not supported (Flink supports no FOLLOWING)"},
	{"SELECT UPPER(p RETURNING INT) FROM t", "1:16: UPPER(... RETURNING type) is not supported yet; wrap the call in CAST(... AS type)"},
	{"SELECT a FROM t GROUP BY ROLLUP (a, ())", "1:37: () is a grouping set of GROUPING SETS, not an element of ROLLUP"},
	{"SELECT a FROM t GROUP BY GROUPING SETS (a, CUBE (b))", "1:44: CUBE inside GROUPING SETS is not supported; list its grouping sets"},
	{"SELECT a FROM t WHERE a LIKE", "1:29: expected an expression after LIKE, got end of query"},
	{"SELECT a FROM t WHERE a SIMILAR 'x'", "1:33: expected TO after SIMILAR, got string 'x'"},
	{"SELECT a FROM t WHERE é = 1 ¤", "1:29: unexpected character '¤'"},
	{"", "1:1: empty query: expected SELECT"},
	{"  -- only a comment\n", "1:1: empty query: expected SELECT"},
	{"SELECT a FROM t WHERE a = 'x\n\ny", "1:27: unterminated string literal: ' has no closing '"},
	{"SELECT\n\ta,\n\tb c d\nFROM t", "3:6: expected \",\" or FROM after a select item, got name d"},
	{"SELECT a FROM t WHERE a = 1 AND", "1:32: expected an expression after AND, got end of query"},
	{"SELECT a FROM t WHERE a = \x01", "1:27: unexpected character U+0001"},
	{"SELECT a FROM t WHERE a = \xff", "1:27: invalid UTF-8 in query text"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errorCases {
		_, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want %s", tc.in, tc.want)
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q) error is %T, want *Error", tc.in, err)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("Parse(%q)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestParseExprErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "1:1: empty expression"},
		{"a +", "1:4: expected an expression after \"+\", got end of query"},
		{"a b", "1:3: expected end of expression, got name b"},
		{"event_time - INTERVAL '5' SECS", "1:27: unknown interval unit \"SECS\"; did you mean SECONDS?"},
		{"*", "1:1: * is only allowed as a whole select item or in COUNT(*)"},
		{"t.*", "1:1: t.* is only allowed as a whole select item"},
		{"SELECT", "1:1: expected an expression, got SELECT"},
		{"f(a", "1:4: unexpected end of query: missing ) for f( at 1:2"},
	} {
		_, err := ParseExpr(tc.in)
		if err == nil {
			t.Errorf("ParseExpr(%q) succeeded, want %s", tc.in, tc.want)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("ParseExpr(%q)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestErrorExpected(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"SELECT a b c FROM t", []string{",", "FROM"}},
		{"SELECT FROM t", []string{"expression"}},
		{"SELECT CASE WHEN a THEN b FROM t", []string{"WHEN", "ELSE", "END"}},
		{"SELECT a FROM t WHERE a IS b", []string{"NULL", "TRUE", "FALSE", "UNKNOWN", "JSON"}},
		{"SELECT f(a FROM t", []string{")"}},
	} {
		_, err := Parse(tc.in)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Parse(%q) = %v", tc.in, err)
		}
		if !slices.Equal(e.Expected, tc.want) {
			t.Errorf("Parse(%q).Expected = %q, want %q", tc.in, e.Expected, tc.want)
		}
	}
}

func TestSnippet(t *testing.T) {
	for _, tc := range []struct {
		src  string
		pos  Pos
		want string
	}{
		{"SELECT a, FROM t", Pos{1, 11, 10}, "SELECT a, FROM t\n          ^"},
		{"SELECT\n\ta,\n\tb c d\nFROM t", Pos{3, 6, 16}, "\tb c d\n\t    ^"},
		{"SELECT 'héllo' x y", Pos{1, 18, 19}, "SELECT 'héllo' x y\n                 ^"},
		{"SELECT a\r\nFROM", Pos{2, 5, 14}, "FROM\n    ^"},
		{"SELECT a", Pos{1, 9, 8}, "SELECT a\n        ^"},
		{"SELECT a", Pos{5, 1, 0}, ""},
		{"SELECT a", Pos{}, ""},
	} {
		e := &Error{Pos: tc.pos, Msg: "x"}
		if got := e.Snippet(tc.src); got != tc.want {
			t.Errorf("Snippet(%q, %v)\n got %q\nwant %q", tc.src, tc.pos, got, tc.want)
		}
	}
}

func TestPosShift(t *testing.T) {
	base := Pos{Line: 10, Col: 7, Offset: 200}
	for _, tc := range []struct {
		p, want Pos
	}{
		{Pos{1, 1, 0}, Pos{10, 7, 200}},
		{Pos{1, 5, 4}, Pos{10, 11, 204}},
		{Pos{3, 2, 30}, Pos{12, 8, 242}},
		{Pos{}, Pos{}},
	} {
		if got := tc.p.Shift(base, 6); got != tc.want {
			t.Errorf("%v.Shift = %v, want %v", tc.p, got, tc.want)
		}
	}
}

func TestNestingLimit(t *testing.T) {
	for _, src := range []string{
		"SELECT " + strings.Repeat("(", 300) + "a" + strings.Repeat(")", 300) + " FROM t",
		"SELECT " + strings.Repeat("- ", 300) + "a FROM t",
		"SELECT " + strings.Repeat("NOT ", 300) + "a FROM t",
		strings.Repeat("(", 300) + "SELECT a FROM t" + strings.Repeat(")", 300),
		"SELECT a FROM " + strings.Repeat("(SELECT a FROM ", 300) + "t" + strings.Repeat(")", 300),
	} {
		_, err := Parse(src)
		if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("Parse(%.40q...) = %v, want a nesting error", src, err)
		}
	}
	ok := "SELECT " + strings.Repeat("(", 100) + "a" + strings.Repeat(")", 100) + " FROM t"
	if _, err := Parse(ok); err != nil {
		t.Errorf("100 levels: %v", err)
	}
}

var update = flag.Bool("update", false, "rewrite testdata/errors.golden")

// TestErrorGolden keeps what users see, message and caret, in one file
// that reviews show as a whole.
func TestErrorGolden(t *testing.T) {
	var b strings.Builder
	for _, tc := range errorCases {
		_, err := Parse(tc.in)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Parse(%q) = %v", tc.in, err)
		}
		fmt.Fprintf(&b, "== %q\n%s\n", tc.in, e)
		if s := e.Snippet(tc.in); s != "" {
			b.WriteString(s + "\n")
		}
	}
	const path = "testdata/errors.golden"
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestErrorGolden -update)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("error output differs from %s (go test -run TestErrorGolden -update, then review the diff):\n%s", path, got)
	}
}

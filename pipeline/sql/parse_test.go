package sql

import (
	"errors"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// formatCases map SQL to its canonical Format. want "" means the input is
// already canonical.
var formatCases = []struct{ in, want string }{
	// select list, aliases, DISTINCT, clauses
	{"SELECT a FROM t", ""},
	{"select A, b as B2, c C3 from T", "SELECT A, b AS B2, c AS C3 FROM T"},
	{"SELECT DISTINCT a FROM t", ""},
	{"SELECT ALL a FROM t", "SELECT a FROM t"},
	{"SELECT *, t.*, x.* FROM t", ""},
	{"SELECT a FROM t WHERE a > 1 GROUP BY a, b HAVING COUNT(*) > 2", ""},
	{"SELECT a FROM t x", "SELECT a FROM t AS x"},
	{"SELECT a FROM t AS `x y`", ""},
	{"SELECT a FROM t;", "SELECT a FROM t"},
	{"SELECT a FROM t ; ", "SELECT a FROM t"},
	{"SELECT `a``b` FROM `select`", ""},
	{"SELECT `value`, `timestamp`, `count` FROM t", ""},
	{"SELECT value, timestamp, count, date, year FROM t", "SELECT `value`, `timestamp`, `count`, `date`, `year` FROM t"},
	{"SELECT offset, `offset` FROM kafka", "SELECT `offset`, `offset` FROM kafka"},
	{"SELECT a FROM (SELECT a FROM t) AS s", ""},
	{"SELECT a FROM (SELECT a FROM t)", ""},
	{"SELECT a FROM ((SELECT a FROM t)) s", "SELECT a FROM (SELECT a FROM t) AS s"},
	{"SELECT a FROM t UNION ALL SELECT b FROM u UNION ALL SELECT c FROM v", ""},
	{"(SELECT a FROM t) UNION ALL (SELECT b FROM u UNION ALL SELECT c FROM v)",
		"SELECT a FROM t UNION ALL SELECT b FROM u UNION ALL SELECT c FROM v"},
	{"SELECT a FROM t UNION SELECT b FROM u", ""},
	{"SELECT a FROM t UNION DISTINCT SELECT b FROM u UNION ALL SELECT c FROM v",
		"SELECT a FROM t UNION SELECT b FROM u UNION ALL SELECT c FROM v"},
	{"(SELECT a FROM t UNION SELECT b FROM u) UNION ALL SELECT c FROM v",
		"SELECT a FROM t UNION SELECT b FROM u UNION ALL SELECT c FROM v"},
	{"SELECT a FROM t UNION ALL (SELECT b FROM u UNION SELECT c FROM v)",
		"SELECT a FROM t UNION ALL SELECT * FROM (SELECT b FROM u UNION SELECT c FROM v)"},
	{"SELECT a FROM t UNION (SELECT b FROM u UNION ALL SELECT c FROM v)",
		"SELECT a FROM t UNION SELECT * FROM (SELECT b FROM u UNION ALL SELECT c FROM v)"},
	{"WITH x AS (SELECT a FROM t) SELECT a FROM x", ""},
	{"with x as (select a from t), `y z` as (select a from x union all select a from t) select a from `y z`",
		"WITH x AS (SELECT a FROM t), `y z` AS (SELECT a FROM x UNION ALL SELECT a FROM t) SELECT a FROM `y z`"},
	{"SELECT a FROM (WITH x AS (SELECT a FROM t) SELECT a FROM x) s", "SELECT a FROM (WITH x AS (SELECT a FROM t) SELECT a FROM x) AS s"},
	{"SELECT a FROM t UNION ALL (WITH x AS (SELECT a FROM t) SELECT a FROM x)",
		"SELECT a FROM t UNION ALL SELECT * FROM (WITH x AS (SELECT a FROM t) SELECT a FROM x)"},
	{"-- leading comment\nSELECT /* inline */ a -- trailing\nFROM t", "SELECT a FROM t"},
	// FOR SYSTEM_TIME AS OF (temporal and lookup joins)
	{"SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k", ""},
	{"select * from o left join rates for system_time as of o.ts r on o.k = r.k",
		"SELECT * FROM o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k"},
	{"SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts - INTERVAL '1' SECOND ON o.k = r.k", ""},
	{"SELECT * FROM r FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 00:00:00'", ""},

	// precedence and parentheses
	{"SELECT a + b * c, (a + b) * c, a - (b - c), (a - b) - c FROM t",
		"SELECT a + b * c, (a + b) * c, a - (b - c), a - b - c FROM t"},
	{"SELECT a OR b AND c, (a OR b) AND c, NOT a AND b, NOT (a AND b) FROM t", ""},
	{"SELECT 'a' || 1 + 2, 'a' || (1 + 2), a * b || c FROM t", "SELECT 'a' || 1 + 2, 'a' || (1 + 2), a * b || c FROM t"},
	{"SELECT a = b = c, a = (b = c) FROM t", ""},
	{"SELECT NOT NOT a, NOT a = b FROM t", ""},
	{"SELECT a <> b, a != b, a < b, a <= b, a > b, a >= b FROM t",
		"SELECT a <> b, a <> b, a < b, a <= b, a > b, a >= b FROM t"},
	{"SELECT a % b, a / b FROM t", ""},
	{"SELECT -a, - a, +a, -(-a), -(a + b), -a * b FROM t", "SELECT -a, -a, +a, -(-a), -(a + b), -a * b FROM t"},
	{"SELECT -5, - 5, -(5), - -5, 3 - -5, -(-5) FROM t", "SELECT -5, -5, -(5), -(-5), 3 - -5, -(-5) FROM t"},
	{"SELECT a IS NULL, a IS NOT NULL, a IS TRUE, a IS NOT FALSE, a IS UNKNOWN FROM t", ""},
	{"SELECT (a = b) IS NULL, a = b IS NULL, (a + 1) IS NULL FROM t", "SELECT a = b IS NULL, a = b IS NULL, a + 1 IS NULL FROM t"},
	{"SELECT (a AND b) IS NULL FROM t", ""},
	{"SELECT a BETWEEN 1 AND 2, a NOT BETWEEN b + 1 AND c * 2 FROM t", ""},
	{"SELECT a BETWEEN ASYMMETRIC 1 AND 2 FROM t", "SELECT a BETWEEN 1 AND 2 FROM t"},
	{"SELECT a BETWEEN 1 AND 2 AND b FROM t", ""},
	{"SELECT a BETWEEN (1 = 1) AND 2 FROM t", ""},
	{"SELECT a IN (1, 2, 3), a NOT IN ('x') FROM t", ""},
	{"SELECT a LIKE 'x%', a NOT LIKE 'x!%' ESCAPE '!' FROM t", ""},
	{"SELECT a || b LIKE c || '%' FROM t", ""},

	// literals
	{"SELECT 1, 2147483648, 1.50, .5, 1., 1.5e3, 2E-3, 'it''s', '', x'0aFF', X'' FROM t",
		"SELECT 1, 2147483648, 1.50, .5, 1., 1.5E3, 2E-3, 'it''s', '', X'0aFF', X'' FROM t"},
	{"SELECT TRUE, false, NULL, unknown FROM t", "SELECT TRUE, FALSE, NULL, UNKNOWN FROM t"},
	{"SELECT DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00', timestamp '2024-01-01 10:00:00.123456' FROM t",
		"SELECT DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00', TIMESTAMP '2024-01-01 10:00:00.123456' FROM t"},
	{"SELECT INTERVAL '5' SECOND, INTERVAL '10' MINUTES, interval '1' hour, INTERVAL '2' DAYS FROM t",
		"SELECT INTERVAL '5' SECOND, INTERVAL '10' MINUTE, INTERVAL '1' HOUR, INTERVAL '2' DAY FROM t"},
	{"SELECT INTERVAL '1:30' MINUTE TO SECOND, INTERVAL '1 02:03:04.5' DAY TO SECOND FROM t", ""},
	// WEEK is 7 days, QUARTER 3 months, as Calcite reads them.
	{"SELECT INTERVAL '2' WEEK, INTERVAL '-1' QUARTER, INTERVAL '+3' week FROM t",
		"SELECT INTERVAL '14' DAY, INTERVAL '-3' MONTH, INTERVAL '21' DAY FROM t"},
	{"SELECT INTERVAL '100' SECOND, INTERVAL '100' SECOND(3), INTERVAL '05' SECOND(2) FROM t",
		"SELECT INTERVAL '100' SECOND(3), INTERVAL '100' SECOND(3), INTERVAL '05' SECOND FROM t"},
	{"SELECT ts - INTERVAL '5' SECOND FROM t", ""},

	// functions and special forms
	{"SELECT count(*), COUNT(DISTINCT a), count(all a), Sum(b), now(), PROCTIME() FROM t",
		"SELECT COUNT(*), COUNT(DISTINCT a), COUNT(a), SUM(b), NOW(), PROCTIME() FROM t"},
	{"SELECT count(*) filter (where a > 1 and b is null), listagg(distinct s, ';') FILTER (WHERE s <> '') + 0, first_value(x) FROM t",
		"SELECT COUNT(*) FILTER (WHERE a > 1 AND b IS NULL), LISTAGG(DISTINCT s, ';') FILTER (WHERE s <> '') + 0, FIRST_VALUE(x) FROM t"},
	{"SELECT CURRENT_TIMESTAMP, current_date, LOCALTIMESTAMP, CURRENT_TIMESTAMP() FROM t",
		"SELECT CURRENT_TIMESTAMP, CURRENT_DATE, LOCALTIMESTAMP, CURRENT_TIMESTAMP FROM t"},
	{"SELECT `current_date` FROM t", ""},
	{"SELECT CAST(a AS INT), TRY_CAST(b AS decimal(10,2)), CAST(c AS TIMESTAMP(3) WITH LOCAL TIME ZONE), CAST(d AS varchar(5)) FROM t",
		"SELECT CAST(a AS INT), TRY_CAST(b AS DECIMAL(10, 2)), CAST(c AS TIMESTAMP_LTZ(3)), CAST(d AS VARCHAR(5)) FROM t"},
	{"SELECT CAST(a AS STRING), CAST(a AS BIGINT NOT NULL), CAST(a AS DOUBLE) FROM t", ""},
	{"SELECT CASE WHEN a > 1 THEN 'x' WHEN a > 0 THEN 'y' ELSE 'z' END FROM t", ""},
	{"SELECT CASE a WHEN 1 THEN 'one' END FROM t", ""},
	{"SELECT TRIM(s), TRIM(BOTH FROM s), TRIM(LEADING 'x' FROM s), TRIM(TRAILING FROM s), TRIM('x' FROM s) FROM t",
		"SELECT TRIM(s), TRIM(s), TRIM(LEADING 'x' FROM s), TRIM(TRAILING FROM s), TRIM(BOTH 'x' FROM s) FROM t"},
	{"SELECT SUBSTRING(s FROM 2), SUBSTRING(s FROM 2 FOR 3), substring(s, 2, 3), SUBSTRING(s, 2) FROM t",
		"SELECT SUBSTRING(s FROM 2), SUBSTRING(s FROM 2 FOR 3), SUBSTRING(s FROM 2 FOR 3), SUBSTRING(s FROM 2) FROM t"},
	{"SELECT overlay(s PLACING 'ab' FROM 2), OVERLAY(s PLACING r || 'x' FROM n + 1 FOR 3) FROM t",
		"SELECT OVERLAY(s PLACING 'ab' FROM 2), OVERLAY(s PLACING r || 'x' FROM n + 1 FOR 3) FROM t"},
	{"SELECT POSITION('a' IN s), EXTRACT(year FROM ts), EXTRACT(EPOCH FROM ts) FROM t",
		"SELECT POSITION('a' IN s), EXTRACT(YEAR FROM ts), EXTRACT(EPOCH FROM ts) FROM t"},
	{"SELECT LEFT(s, 2), RIGHT(s, 1) FROM t", ""},
	{"SELECT REGEXP_EXTRACT(line, '(\\d+)', 1), JSON_VALUE(payload, '$.a'), TO_TIMESTAMP_LTZ(ts, 3) FROM t", ""},
	{"SELECT DATE_FORMAT(ts, 'yyyy-MM-dd'), IF(a > 1, 'x', 'y'), COALESCE(a, b, 0) FROM t", ""},
	{"SELECT `my fn`(a) FROM t", "SELECT `MY FN`(a) FROM t"},

	// window table functions
	{"SELECT * FROM TABLE(TUMBLE(TABLE sensor, DESCRIPTOR(event_time), INTERVAL '1' MINUTE))", ""},
	{"SELECT * FROM TABLE(TUMBLE(TABLE sensor, DESCRIPTOR(event_time), INTERVAL '1' MINUTE, INTERVAL '10' SECOND)) AS w", ""},
	{"SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)) w",
		"SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTE, INTERVAL '10' MINUTE)) AS w"},
	{"SELECT * FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' HOUR, INTERVAL '1' DAY))", ""},
	{"SELECT * FROM TABLE(TUMBLE(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '10' MINUTES))",
		"SELECT * FROM TABLE(TUMBLE(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '10' MINUTE))"},
	{"SELECT * FROM TABLE(HOP(SIZE => INTERVAL '10' MINUTE, data => TABLE t, SLIDE => INTERVAL '5' MINUTE, TIMECOL => DESCRIPTOR(ts)))",
		"SELECT * FROM TABLE(HOP(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '5' MINUTE, SIZE => INTERVAL '10' MINUTE))"},
	{"SELECT * FROM TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)",
		"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))"},
	{"SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' MINUTE))", ""},
	{"SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY (k, j), DESCRIPTOR(ts), INTERVAL '5' MINUTE))", ""},
	{"SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY k, j, DESCRIPTOR(ts), INTERVAL '5' MINUTE))", ""},
	{"SELECT * FROM TABLE(SESSION(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTE))", ""},
	{"SELECT * FROM TABLE(SESSION(DATA => TABLE t PARTITION BY k, TIMECOL => DESCRIPTOR(ts), GAP => INTERVAL '5' MINUTE))", ""},
	{"SELECT * FROM TABLE(SESSION(TIMECOL => DESCRIPTOR(ts), GAP => INTERVAL '5' MINUTE, DATA => TABLE t))",
		"SELECT * FROM TABLE(SESSION(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), GAP => INTERVAL '5' MINUTE))"},
	{"SELECT * FROM TABLE(TUMBLE(TABLE `my table`, DESCRIPTOR(`time`), INTERVAL '1' MINUTE))", ""},
	{"SELECT window_start, window_end, id, COUNT(*) FROM TABLE(TUMBLE(TABLE sensor, DESCRIPTOR(event_time), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, id", ""},
}

func TestParseFormat(t *testing.T) {
	for _, tc := range formatCases {
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
	}
}

func TestParseExprFormat(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"TO_TIMESTAMP_LTZ(ts, 3)", ""},
		{"event_time - INTERVAL '5' SECOND", ""},
		{"  a+1  ", "a + 1"},
		{"t.a", ""},
		{"`t`.`a b`", "t.`a b`"},
		{"CAST(ts AS TIMESTAMP(3))", ""},
	} {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.in, err)
			continue
		}
		want := tc.want
		if want == "" {
			want = tc.in
		}
		if got := Format(e); got != want {
			t.Errorf("Format(ParseExpr(%q)) = %s, want %s", tc.in, got, want)
		}
	}
}

func mustExpr(t *testing.T, src string) Expr {
	t.Helper()
	e, err := ParseExpr(src)
	if err != nil {
		t.Fatalf("ParseExpr(%q): %v", src, err)
	}
	return e
}

func TestLiteralTypes(t *testing.T) {
	for _, tc := range []struct {
		src   string
		kind  LitKind
		typ   string
		value string
	}{
		{"42", LitInt, "INT NOT NULL", "42"},
		{"-2147483648", LitInt, "INT NOT NULL", "-2147483648"},
		{"2147483648", LitInt, "BIGINT NOT NULL", "2147483648"},
		{"-9223372036854775808", LitInt, "BIGINT NOT NULL", "-9223372036854775808"},
		{"1.50", LitDecimal, "DECIMAL(3, 2) NOT NULL", "1.50"},
		{"0.5", LitDecimal, "DECIMAL(1, 1) NOT NULL", "0.5"},
		{".5", LitDecimal, "DECIMAL(1, 1) NOT NULL", "0.5"},
		{"-12.5", LitDecimal, "DECIMAL(3, 1) NOT NULL", "-12.5"},
		{"1.", LitDecimal, "DECIMAL(1, 0) NOT NULL", "1"},
		{"1.5e3", LitDouble, "DOUBLE NOT NULL", "1500.0"},
		{"'it''s'", LitString, "STRING NOT NULL", "it's"},
		{"X'0aff'", LitBytes, "BYTES NOT NULL", "[10, -1]"},
		{"TRUE", LitBool, "BOOLEAN NOT NULL", "true"},
		{"NULL", LitNull, "NULL", "null"},
		{"UNKNOWN", LitUnknown, "BOOLEAN", "null"},
		{"DATE '2024-02-29'", LitDate, "DATE NOT NULL", "2024-02-29"},
		{"TIMESTAMP '2024-01-01 10:00:00'", LitTimestamp, "TIMESTAMP(0) NOT NULL", "2024-01-01T10:00"},
		{"TIMESTAMP '2024-01-01 10:00:00.123'", LitTimestamp, "TIMESTAMP(3) NOT NULL", "2024-01-01T10:00:00.123"},
	} {
		lit, ok := mustExpr(t, tc.src).(*Literal)
		if !ok {
			t.Errorf("%s: not a literal", tc.src)
			continue
		}
		if lit.Kind != tc.kind || lit.Type.String() != tc.typ || lit.Value.String() != tc.value {
			t.Errorf("%s: kind %d type %s value %s; want kind %d type %s value %s",
				tc.src, lit.Kind, lit.Type, lit.Value, tc.kind, tc.typ, tc.value)
		}
	}
}

func TestIntervalValues(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want time.Duration
	}{
		{"INTERVAL '5' SECOND", 5 * time.Second},
		{"INTERVAL '1.5' SECOND", 1500 * time.Millisecond},
		{"INTERVAL '10' MINUTES", 10 * time.Minute},
		{"INTERVAL '-2' HOUR", -2 * time.Hour},
		{"INTERVAL '3' DAYS", 72 * time.Hour},
		{"INTERVAL '1:30' MINUTE TO SECOND", 90 * time.Second},
		{"INTERVAL '2:05' HOUR TO MINUTE", 2*time.Hour + 5*time.Minute},
		{"INTERVAL '1 02:03:04.005' DAY TO SECOND", 26*time.Hour + 3*time.Minute + 4*time.Second + 5*time.Millisecond},
		{"INTERVAL '1 02' DAY TO HOUR", 26 * time.Hour},
		{"INTERVAL '-1 00:01' DAY TO MINUTE", -(24*time.Hour + time.Minute)},
		{"INTERVAL '1:02:03' HOUR TO SECOND", time.Hour + 2*time.Minute + 3*time.Second},
	} {
		iv, ok := mustExpr(t, tc.src).(*IntervalLit)
		if !ok {
			t.Errorf("%s: not an interval", tc.src)
			continue
		}
		if iv.Value != tc.want {
			t.Errorf("%s = %v, want %v", tc.src, iv.Value, tc.want)
		}
	}
}

func TestASTShape(t *testing.T) {
	q, err := Parse("SELECT id, COUNT(DISTINCT v) AS n\nFROM TABLE(HOP(TABLE s, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' MINUTE)) w\nWHERE v > 0 GROUP BY id HAVING COUNT(*) > 1")
	if err != nil {
		t.Fatal(err)
	}
	sel := q.Selects[0]
	if len(sel.Items) != 2 || sel.Items[1].Alias.Name != "n" || sel.Where == nil || len(sel.GroupBy) != 1 || sel.Having == nil {
		t.Fatalf("unexpected select: %+v", sel)
	}
	call := sel.Items[1].Expr.(*Call)
	if call.Name != "COUNT" || !call.Distinct || call.Star || len(call.Args) != 1 || call.At != (Pos{1, 12, 11}) {
		t.Errorf("COUNT(DISTINCT v) = %+v", call)
	}
	w, ok := sel.From.(*WindowTVF)
	if !ok {
		t.Fatalf("FROM is %T", sel.From)
	}
	if w.Kind != Hop || w.Table.Name != "s" || w.TimeCol.Name != "ts" || w.Alias.Name != "w" ||
		w.Slide.(*IntervalLit).Value != 5*time.Second || w.Size.(*IntervalLit).Value != time.Minute ||
		w.Step != nil || w.Offset != nil || w.At != (Pos{2, 6, 39}) || w.KindAt != (Pos{2, 12, 45}) {
		t.Errorf("window = %+v", w)
	}
	if sel.GroupByAt != (Pos{3, 13, 131}) {
		t.Errorf("GroupByAt = %v", sel.GroupByAt)
	}
	b := sel.Where.(*Binary)
	if b.Op != OpGt || b.Pos() != (Pos{3, 7, 125}) || b.OpAt != (Pos{3, 9, 127}) {
		t.Errorf("WHERE = %+v at %v", b, b.Pos())
	}
	star := sel.Having.(*Binary).L.(*Call)
	if !star.Star || star.Name != "COUNT" {
		t.Errorf("HAVING COUNT(*) = %+v", star)
	}
}

func TestIdentCase(t *testing.T) {
	e := mustExpr(t, "MyTable.`MyCol`")
	ref := e.(*ColumnRef)
	if ref.Table != (Ident{At: Pos{1, 1, 0}, Name: "MyTable"}) || ref.Column != (Ident{At: Pos{1, 9, 8}, Name: "MyCol", Quoted: true}) {
		t.Errorf("ref = %+v", ref)
	}
	if got := Format(e); got != "MyTable.MyCol" {
		t.Errorf("Format = %s", got)
	}
}

func TestCastType(t *testing.T) {
	c := mustExpr(t, "CAST(x AS DECIMAL(10, 2))").(*Cast)
	if c.Type != (row.Type{ID: row.Decimal, Precision: 10, Scale: 2}) || c.TypeText != "DECIMAL(10, 2)" || c.TypeAt != (Pos{1, 11, 10}) {
		t.Errorf("cast = %+v", c)
	}
	c = mustExpr(t, "TRY_CAST(x AS TIMESTAMP(3) WITH LOCAL TIME ZONE)").(*Cast)
	if !c.Try || c.Type.ID != row.TimestampLTZ || c.Type.Precision != 3 {
		t.Errorf("try_cast = %+v", c)
	}
}

func TestPositionsAcrossLines(t *testing.T) {
	src := "SELECT\n\ta,\n  'héllo' || b\nFROM t"
	q, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	cat := q.Selects[0].Items[1].Expr.(*Binary)
	if cat.L.Pos() != (Pos{3, 3, 13}) || cat.OpAt != (Pos{3, 11, 22}) || cat.R.Pos() != (Pos{3, 14, 25}) {
		t.Errorf("positions: L %v op %v R %v", cat.L.Pos(), cat.OpAt, cat.R.Pos())
	}
	if tr := q.Selects[0].From.(*TableRef); tr.Pos() != (Pos{4, 6, 32}) {
		t.Errorf("FROM t at %v", tr.Pos())
	}
}

func TestParseErrorIsError(t *testing.T) {
	_, err := Parse("SELECT")
	var e *Error
	if !errors.As(err, &e) || e.Pos.Line != 1 {
		t.Fatalf("Parse error %T %v", err, err)
	}
	_, err = ParseExpr("")
	if !errors.As(err, &e) || e.Msg != "empty expression" {
		t.Fatalf("ParseExpr error %T %v", err, err)
	}
}

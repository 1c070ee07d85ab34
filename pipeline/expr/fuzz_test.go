package expr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

var fuzzSeeds = []string{
	"temp > 30 AND id <> 'x'",
	"CEIL(ts TO QUARTER) > FLOOR(lts TO WEEK)",
	"CEIL(CAST(ts AS TIME) TO HOUR)",
	"n * 2 + b / 3 - d % 7",
	"CASE WHEN x_b THEN n / zero ELSE -d END",
	"CAST(id AS INT) + TRY_CAST(js AS DECIMAL(5, 2))",
	"COALESCE(x_s, UPPER(id), 'z') || SUBSTRING(id, -3, 2)",
	"id LIKE 's_n%' ESCAPE '!' OR pat NOT LIKE id",
	"n IN (1, 2, NULL) AND temp NOT BETWEEN x_d AND 40",
	"REGEXP_EXTRACT(js, '\"(\\w+)\"', 1) = JSON_VALUE(js, '$.a.b[0]')",
	"REGEXP_REPLACE(id, pat, '$0')",
	"DATE_FORMAT(ts - INTERVAL '1' DAY, 'yyyy-MM-dd''T''HH') > TO_TIMESTAMP(x_s)",
	"EXTRACT(DOW FROM lts) + YEAR(day) * ROUND(d, -1)",
	"TO_TIMESTAMP_LTZ(b, 0) > CURRENT_TIMESTAMP",
	"UNIX_TIMESTAMP(id, pat) + FROM_UNIXTIME(n)",
	"LPAD(id, n, pat) || REPEAT(id, neg) || SPLIT_INDEX(id, '-', 1)",
	"IF(ok, CAST(ts AS STRING), CAST(day AS STRING))",
	"NULLIF(n, 42) IS NULL",
	"POWER(temp, f) / LN(d) + SQRT(-1)",
	"CAST(9.99e300 AS DECIMAL(18, 2))",
	"9223372036854775807 * -1 - 1",
	"CAST(x_dec AS BOOLEAN) IS NOT FALSE",
	// Hostile arguments of session 29's functions: huge lengths, widths
	// and precisions, unknown charsets, bounds at zero.
	"OVERLAY(id PLACING id FROM n FOR 2147483647) || OVERLAY(id PLACING pat FROM b FOR -9223372036854775808)",
	"OVERLAY(js PLACING x_s FROM neg FOR b)",
	"PRINTF('%2147483648s|%.999999999f|%99999$s|%<s|%-0d', id, temp, n)",
	"PRINTF(id, n, b, temp, f, d, ok, ts, day) || PRINTF(pat, temp)",
	"ENCODE(id, pat) || DECODE(bin, id) || DECODE(ENCODE(js, 'UTF-16'), 'UTF-32LE')",
	"CAST(STR_TO_MAP(js, pat, '') AS STRING) || CAST(MAP_UNION(STR_TO_MAP(id), STR_TO_MAP(x_s)) AS STRING)",
	"CAST(MAP_FROM_ARRAYS(ARRAY[n, b], ARRAY[id]) AS STRING)",
	"INET_NTOA(b * b) || INET_ATON(js) || IS_DECIMAL(pat)",
	"RAND_INTEGER(n, neg) + RAND_INTEGER(zero) + RAND(x_i)",
}

// FuzzCompile checks that any expression the parser accepts either
// compiles or fails with a positioned *sql.Error, and that evaluating a
// compiled one never panics and honours its declared type.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	nullRow := testRow.Clone()
	for i, fl := range testTable.Schema.Fields {
		if !fl.Type.NotNull {
			nullRow[i] = row.NullValue
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		e, err := sql.ParseExpr(text)
		if err != nil {
			return
		}
		c, err := Compile(e, testTable, WithClock(testClock))
		if err != nil {
			var se *sql.Error
			if !errors.As(err, &se) {
				t.Fatalf("%q: error %T is not a *sql.Error: %v", text, err, err)
			}
			if !se.Pos.IsValid() {
				t.Fatalf("%q: error without a position: %v", text, err)
			}
			return
		}
		for _, r := range []row.Row{testRow, nullRow} {
			v, err := c.Eval(r)
			if err != nil {
				var ee *EvalError
				if !errors.As(err, &ee) {
					t.Fatalf("%q: run-time error %T is not an *EvalError: %v", text, err, err)
				}
				continue
			}
			if v.IsNull() {
				if c.Type.NotNull {
					t.Fatalf("%q: NULL from a %s expression", text, c.Type)
				}
				continue
			}
			if v.Type() != c.Type.ID {
				t.Fatalf("%q: value of type %s from a %s expression", text, v.Type(), c.Type)
			}
		}
	})
}

// TestConcurrentEval runs expressions with per-row caches (computed LIKE
// and regular expression patterns, date formats) from several goroutines;
// run with -race.
func TestConcurrentEval(t *testing.T) {
	c, err := compileText(t, "id LIKE pat OR REGEXP(id, CONCAT(pat, id)) OR DATE_FORMAT(ts, pat) = id")
	if err != nil {
		t.Fatal(err)
	}
	pats := []string{"sen%", "x%", "%-1", "yyyy"}
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func(g int) {
			r := testRow.Clone()
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				r[23] = row.StringValue(pats[(g+i)%len(pats)])
				_, err = c.Eval(r)
			}
			done <- err
		}(g)
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestConcurrentJSONNesting evaluates the writers of nested JSON (one per
// compiled call, shared by every goroutine) concurrently; run with -race.
func TestConcurrentJSONNesting(t *testing.T) {
	c, err := compileText(t, "JSON_ARRAY(ARRAY[n, n], MAP['k', ARRAY[n]], ROW(n, id))")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				var v row.Value
				if v, err = c.Eval(testRow); err == nil && v.Str() != `[[42,42],{"k":[42]},{"EXPR$0":42,"EXPR$1":"sensor-1"}]` {
					err = fmt.Errorf("got %s", v.Str())
				}
			}
			done <- err
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

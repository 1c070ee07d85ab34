package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/sql"
)

// rewrite reaches every operand of every kind of expression, copies what
// it changes and leaves the original as it was.
func TestRewriteReachesEveryOperand(t *testing.T) {
	const src = `CASE a WHEN -a THEN NOT (a IS NULL) ELSE a + 1 END = ` +
		`COALESCE(CAST(a AS STRING), TRIM(LEADING a FROM a), a[a].f, EXTRACT(YEAR FROM a)) ` +
		`AND a BETWEEN a AND a AND a IN (a, a) AND a LIKE a ESCAPE a ` +
		`AND SUM(a) FILTER (WHERE a > 0) OVER (PARTITION BY a ORDER BY a ROWS 2 PRECEDING) > 0 ` +
		`AND a IN (SELECT a FROM t)`
	e, err := sql.ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	before := sql.Format(e)
	out := rewrite(e, func(x sql.Expr) (sql.Expr, bool) {
		if c, ok := x.(*sql.ColumnRef); ok && c.Column.Name == "a" {
			return &sql.ColumnRef{Column: sql.Ident{Name: "b"}}, true
		}
		return nil, false
	})
	// Every a but the subquery's becomes b.
	want := strings.ReplaceAll(before, "a", "b")
	want = strings.Replace(want, "SELECT b FROM t", "SELECT a FROM t", 1)
	if got := sql.Format(out); got != want {
		t.Errorf("rewritten:\n got %s\nwant %s", got, want)
	}
	if got := sql.Format(e); got != before {
		t.Errorf("the original changed:\n got %s\nwant %s", got, before)
	}
}

// walk meets the aggregate calls of a CASE in the order the planner has
// always numbered them (operand, ELSE, then the arms), which lays out an
// aggregate's state, and does not meet a call under OVER as a call.
func TestWalkOrder(t *testing.T) {
	e, err := sql.ParseExpr(`CASE WHEN SUM(x) > 0 THEN SUM(y) ELSE SUM(z) END + COUNT(*) OVER (ORDER BY SUM(w))`)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	walk(e, func(x sql.Expr) bool {
		if c, ok := x.(*sql.Call); ok {
			calls = append(calls, sql.Format(c))
		}
		return true
	})
	if want := []string{"SUM(z)", "SUM(x)", "SUM(y)", "SUM(w)"}; !slices.Equal(calls, want) {
		t.Errorf("walk met %v, want %v", calls, want)
	}
}

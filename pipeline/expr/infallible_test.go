package expr

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// TestInfallible: a constant, a column and a field of one (or of a
// field) are Infallible, what computes anything is not, however unlikely
// its failure: a filter may then run before such a projection without a
// row's error going missing (runtime's earlyFilter).
func TestInfallible(t *testing.T) {
	nested := Table{Name: "t", Schema: row.NewSchema(
		row.Field{Name: "r", Type: mustType("ROW<a BIGINT, s ROW<x STRING>>")},
		row.Field{Name: "n", Type: mustType("INT")},
		row.Field{Name: "s", Type: mustType("STRING")},
	)}
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"n", true},
		{"r", true},
		{"r.a", true},
		{"r.s.x", true},
		{"1", true},
		{"'c'", true},
		{"1 + 2", true},
		{"NULL", true},
		{"n + 1", false},
		{"CAST(s AS INT)", false},
		{"r.a * 2", false},
		{"UPPER(r.s.x)", false},
		{"CASE WHEN n > 1 THEN 1 ELSE 0 END", false},
	} {
		e, err := sql.ParseExpr(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Compile(e, nested)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if c.Infallible != tc.want {
			t.Errorf("%s: Infallible %v, want %v", tc.expr, c.Infallible, tc.want)
		}
	}
}

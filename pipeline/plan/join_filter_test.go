package plan_test

import (
	"log/slog"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/row"
)

// TestJoinFilterKeeps checks that the WHERE conjuncts moved below an
// inner join are also the filters its restore drops rows by (a
// checkpoint of the plan before the move holds every row), each on its
// own input's columns; a join whose WHERE stays above it has none.
func TestJoinFilterKeeps(t *testing.T) {
	src := `version: 1
name: t
sources:
  - name: orders
    type: file
    path: orders.csv
    schema: [id INT, cust INT, amount INT]
  - name: customers
    type: file
    path: customers.csv
    schema: [id INT, region STRING]
transforms:
  - name: moved
    sql: |
      SELECT o.id, c.region FROM orders o JOIN customers c ON o.cust = c.id
      WHERE c.region = 'EU' AND o.amount > 10 AND o.amount < c.id
  - name: kept
    sql: SELECT o.id FROM orders o LEFT JOIN customers c ON o.cust = c.id WHERE c.region = 'EU'
sinks:
  - {name: a, from: moved, type: blackhole}
  - {name: b, from: kept, type: blackhole}
`
	p, err := plan.Build(parse(t, src), plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	keeps := plan.JoinKeeps(p)
	if len(keeps) != 2 {
		t.Fatalf("%d regular joins, want 2", len(keeps))
	}
	var moved, kept [2]func(row.Row) (bool, error)
	for _, k := range keeps {
		if k[0] != nil || k[1] != nil {
			moved = k
		} else {
			kept = k
		}
	}
	if kept[0] != nil || kept[1] != nil || moved[0] == nil || moved[1] == nil {
		t.Fatalf("keeps: the inner join's %v, the left join's %v; want both on the inner join, none on the left one", moved, kept)
	}
	for _, tc := range []struct {
		side int
		r    row.Row
		want bool
	}{
		{0, row.Row{row.IntValue(1), row.IntValue(7), row.IntValue(11)}, true},
		{0, row.Row{row.IntValue(1), row.IntValue(7), row.IntValue(10)}, false},
		{1, row.Row{row.IntValue(7), row.StringValue("EU")}, true},
		{1, row.Row{row.IntValue(7), row.StringValue("US")}, false},
	} {
		got, err := moved[tc.side](tc.r)
		if err != nil || got != tc.want {
			t.Errorf("side %d keeps %v: %v (%v), want %v", tc.side, tc.r, got, err, tc.want)
		}
	}
}

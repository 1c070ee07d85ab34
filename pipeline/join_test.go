package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestJoinPipelines joins two files: orders with customers (inner, left,
// full) and customers with an updating aggregate of the orders, and
// checks each final table against one computed here.
func TestJoinPipelines(t *testing.T) {
	dir := t.TempDir()
	var orders, customers strings.Builder
	names := map[int]string{}
	for c := range 40 {
		names[c] = fmt.Sprintf("c%d", c)
		fmt.Fprintf(&customers, "%d,c%d\n", c, c)
	}
	fmt.Fprintf(&customers, "100,lonely\n")
	names[100] = "lonely"
	var wantInner, wantLeft []string
	totals := map[int]int{}
	for i := range 3000 {
		cust := i % 50 // 40..49 have no customer
		amount := i % 13
		fmt.Fprintf(&orders, "%d,%d,%d\n", i, cust, amount)
		if n, ok := names[cust]; ok {
			wantInner = append(wantInner, fmt.Sprintf("%d,%d,%s", i, amount, n))
			wantLeft = append(wantLeft, fmt.Sprintf("%d,%s", i, n))
			totals[cust] += amount
		} else {
			wantLeft = append(wantLeft, fmt.Sprintf("%d,", i))
		}
	}
	fmt.Fprintf(&orders, "3000,,5\n") // a NULL key matches nothing
	wantLeft = append(wantLeft, "3000,")
	var wantTotals []string
	for c, n := range names {
		if tot, ok := totals[c]; ok {
			wantTotals = append(wantTotals, fmt.Sprintf("%d,%s,%d", c, n, tot))
		} else {
			wantTotals = append(wantTotals, fmt.Sprintf("%d,%s,", c, n))
		}
	}
	for name, data := range map[string]string{"orders.csv": orders.String(), "customers.csv": customers.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	runFile(t, dir, fmt.Sprintf(`version: 1
name: joins
sources:
  - name: orders
    type: file
    path: %s
    schema: [id INT, cust INT, amount INT]
  - name: customers
    type: file
    path: %s
    schema: [id INT, name STRING]
transforms:
  - name: inner_join
    sql: SELECT o.id, o.amount, c.name FROM orders o JOIN customers c ON o.cust = c.id
  - name: left_join
    sql: SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.id
  - name: totals
    sql: |
      SELECT c.id, c.name, t.total
      FROM customers c LEFT JOIN (SELECT cust, SUM(amount) AS total FROM orders GROUP BY cust) t ON c.id = t.cust
sinks:
  - {name: inner, from: inner_join, type: file, path: %s}
  - {name: left, from: left_join, type: file, path: %s, mode: retract}
  - {name: totals, from: totals, type: file, path: %s, mode: retract}
`, out("orders.csv"), out("customers.csv"), out("inner.csv"), out("left.csv"), out("totals.csv")))
	check := func(name string, got, want []string) {
		t.Helper()
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d rows, want %d; first got %q, want %q", name, len(got), len(want), first(got), first(want))
		}
	}
	check("inner", readLines(t, out("inner.csv")), wantInner)
	check("left", foldRows(t, out("left.csv")), wantLeft)
	check("totals", foldRows(t, out("totals.csv")), wantTotals)
}

func first(xs []string) []string { return xs[:min(3, len(xs))] }

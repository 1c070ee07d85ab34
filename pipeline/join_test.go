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
    format: {type: csv, null_literal: ""} # an order of no customer has an empty cust
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

// TestSemiAntiJoinPipelines runs IN, NOT IN (with SQL's NULL rule),
// EXISTS and NOT EXISTS over two files and checks the final tables.
func TestSemiAntiJoinPipelines(t *testing.T) {
	dir := t.TempDir()
	var orders, customers strings.Builder
	var wantIn, wantNotIn []string
	for c := range 40 {
		region := []string{"eu", "us"}[c%2]
		fmt.Fprintf(&customers, "%d,c%d,%s\n", c, c, region)
	}
	fmt.Fprintf(&customers, "100,lonely,eu\n")
	for i := range 2000 {
		cust := i % 50
		fmt.Fprintf(&orders, "%d,%d\n", i, cust)
		switch {
		case cust < 40 && cust%2 == 0:
			wantIn = append(wantIn, fmt.Sprint(i))
		case cust >= 40:
			wantNotIn = append(wantNotIn, fmt.Sprint(i))
		}
	}
	fmt.Fprintf(&orders, "2000,\n") // NULL NOT IN (non-empty) is unknown: left out
	files := map[string]string{
		"orders.csv": orders.String(), "customers.csv": customers.String(),
		"with_null.csv": customers.String() + ",nobody,eu\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	runFile(t, dir, fmt.Sprintf(`version: 1
name: semi
sources:
  - {name: orders, type: file, path: %s, format: {type: csv, null_literal: ""}, schema: [id INT, cust INT]}
  - {name: customers, type: file, path: %s, format: {type: csv, null_literal: ""}, schema: [id INT, name STRING, region STRING]}
  - {name: with_null, type: file, path: %s, format: {type: csv, null_literal: ""}, schema: [id INT, name STRING, region STRING]}
transforms:
  - name: in_eu
    sql: SELECT id FROM orders WHERE cust IN (SELECT id FROM customers WHERE region = 'eu')
  - name: not_in
    sql: SELECT id FROM orders WHERE cust NOT IN (SELECT id FROM customers)
  - name: not_in_null
    sql: SELECT id FROM orders WHERE cust NOT IN (SELECT id FROM with_null)
  - name: buyers
    sql: SELECT c.name FROM customers c WHERE EXISTS (SELECT * FROM orders o WHERE o.cust = c.id AND o.id < 10)
  - name: idle
    sql: SELECT c.name FROM customers c WHERE NOT EXISTS (SELECT * FROM orders o WHERE o.cust = c.id)
sinks:
  - {name: in_eu, from: in_eu, type: file, path: %s}
  - {name: not_in, from: not_in, type: file, path: %s, mode: retract}
  - {name: not_in_null, from: not_in_null, type: file, path: %s, mode: retract}
  - {name: buyers, from: buyers, type: file, path: %s}
  - {name: idle, from: idle, type: file, path: %s, mode: retract}
`, out("orders.csv"), out("customers.csv"), out("with_null.csv"),
		out("in.csv"), out("not_in.csv"), out("not_in_null.csv"), out("buyers.csv"), out("idle.csv")))
	check := func(name string, got, want []string) {
		t.Helper()
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d rows, want %d; first got %q, want %q", name, len(got), len(want), first(got), first(want))
		}
	}
	var wantBuyers []string
	for c := range 10 {
		wantBuyers = append(wantBuyers, fmt.Sprintf("c%d", c))
	}
	check("IN", readLines(t, out("in.csv")), wantIn)
	check("NOT IN", foldRows(t, out("not_in.csv")), wantNotIn)
	check("NOT IN with a NULL", foldRows(t, out("not_in_null.csv")), nil)
	check("EXISTS", readLines(t, out("buyers.csv")), wantBuyers)
	check("NOT EXISTS", foldRows(t, out("idle.csv")), []string{"lonely"})
}

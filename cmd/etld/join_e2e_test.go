package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

const joinOrders = `1,10,5
2,10,7
3,20,1
4,30,9
5,,2
6,20,4
`

const joinCustomers = `10,ann,eu
20,bob,us
40,cy,eu
,nobody,us
`

// joinCases are joins whose final tables (the printed changelogs folded)
// must be Flink's. The order of the changes depends on how the two file
// sources interleave, in Flink as in etld, so the folded tables are
// compared, not the changelogs line by line.
var joinCases = []struct {
	name, sql string
	batch     bool
}{
	{"inner", "SELECT o.id, o.amount, c.name FROM orders o JOIN customers c ON o.cust = c.id", false},
	{"left", "SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.id", false},
	{"right", "SELECT o.id, c.name FROM orders o RIGHT JOIN customers c ON o.cust = c.id", false},
	{"full", "SELECT o.id, c.id AS cid, c.name FROM orders o FULL JOIN customers c ON o.cust = c.id", false},
	{"residual", "SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.id AND o.amount > 4", false},
	{"comma", "SELECT o.id, c.region FROM orders o, customers c WHERE o.cust = c.id AND c.region = 'eu'", false},
	{"over_agg", "SELECT c.name, t.total FROM customers c LEFT JOIN (SELECT cust, SUM(amount) AS total FROM orders GROUP BY cust) t ON c.id = t.cust", false},
	{"in", "SELECT id FROM orders WHERE cust IN (SELECT id FROM customers WHERE region = 'eu')", false},
	{"not_in", "SELECT id FROM orders WHERE cust NOT IN (SELECT id FROM customers)", false},
	{"not_in_nonnull", "SELECT id FROM orders WHERE cust NOT IN (SELECT id FROM customers WHERE id IS NOT NULL)", false},
	{"exists", "SELECT c.name FROM customers c WHERE EXISTS (SELECT * FROM orders o WHERE o.cust = c.id AND o.amount > 4)", false},
	{"not_exists", "SELECT c.name FROM customers c WHERE NOT EXISTS (SELECT * FROM orders o WHERE o.cust = c.id)", false},
	{"batch_full", "SELECT o.id, c.name FROM orders o FULL JOIN customers c ON o.cust = c.id", true},
}

// TestJoinsMatchFlink runs each join through etld and through Flink into
// print and compares the final tables.
func TestJoinsMatchFlink(t *testing.T) {
	dir := t.TempDir()
	orders, customers := filepath.Join(dir, "orders.csv"), filepath.Join(dir, "customers.csv")
	for path, data := range map[string]string{orders: joinOrders, customers: joinCustomers} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var scripts []string
	for _, tc := range joinCases {
		script := filepath.Join(dir, tc.name+".sql")
		mode := ""
		if tc.batch {
			mode = "SET 'execution.runtime-mode' = 'batch';\n"
		}
		text := mode + fmt.Sprintf(`CREATE TABLE orders (id INT, cust INT, amount INT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv', 'csv.null-literal' = '');
CREATE TABLE customers (id INT, name STRING, region STRING)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv', 'csv.null-literal' = '');
%s;
`, orders, customers, tc.sql)
		if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, script)
	}
	flink := testenv.RunFlink(t, 5*time.Minute, scripts...)
	for i, tc := range joinCases {
		t.Run(tc.name, func(t *testing.T) {
			if flink[i].Err != "" {
				t.Fatalf("Flink failed: %s", flink[i].Err)
			}
			execution := "streaming"
			if tc.batch {
				execution = "batch"
			}
			yaml := fmt.Sprintf(`version: 1
name: %s
execution: %s
sources:
  - {name: orders, type: file, path: %s, format: {type: csv, null_literal: ""}, schema: [id INT, cust INT, amount INT]}
  - {name: customers, type: file, path: %s, format: {type: csv, null_literal: ""}, schema: [id INT, name STRING, region STRING]}
transforms:
  - name: q
    sql: %s
sinks:
  - {name: out, from: q, type: print, mode: retract}
`, tc.name, execution, orders, customers, tc.sql)
			path := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := etld(t, dir, "run", "--quiet", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got, want := foldPrinted(t, stdout), foldPrinted(t, flink[i].Out)
			if !slices.Equal(got, want) {
				t.Errorf("etld's table:\n%s\nFlink's:\n%s\n(etld printed:\n%s)", strings.Join(got, "\n"), strings.Join(want, "\n"), stdout)
			}
		})
	}
}

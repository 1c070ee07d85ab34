package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
)

// TestJoinIntoMySQLUpsert writes a LEFT JOIN of customers with an
// updating per-customer aggregate into a MySQL upsert sink keyed by the
// join's upsert key (the customer id), and checks the final table.
func TestJoinIntoMySQLUpsert(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	t.Setenv("JOIN_TEST_DSN", dsn)
	dir := t.TempDir()
	var orders strings.Builder
	totals := map[int]int{}
	for i := range 500 {
		cust := i % 7 // customers 5 and 6 do not exist, 4 has no orders below
		if cust == 4 {
			continue
		}
		fmt.Fprintf(&orders, "%d,%d,%d\n", i, cust, i%10)
		totals[cust] += i % 10
	}
	files := map[string]string{"orders.csv": orders.String(), "customers.csv": "0,ann\n1,bob\n2,cy\n3,dee\n4,eve\n"}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	table := testenv.MySQLTable(t, db, "")
	runFile(t, dir, fmt.Sprintf(`version: 1
name: join_mysql
sources:
  - {name: orders, type: file, path: %s, schema: [id INT, cust INT, amount INT]}
  - {name: customers, type: file, path: %s, schema: [id INT, name STRING], key: [id]}
transforms:
  - name: totals
    sql: |
      SELECT c.id, c.name, t.total
      FROM customers c LEFT JOIN (SELECT cust, SUM(amount) AS total FROM orders GROUP BY cust) t ON c.id = t.cust
sinks:
  - name: db
    from: totals
    type: mysql
    dsn: ${JOIN_TEST_DSN}
    table: %s
    key: [id]
    create_table: true
`, filepath.Join(dir, "orders.csv"), filepath.Join(dir, "customers.csv"), table))
	rows, err := db.Query("SELECT id, name, COALESCE(CAST(total AS CHAR), 'NULL') FROM " + table + " ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id, name, total string
		if err := rows.Scan(&id, &name, &total); err != nil {
			t.Fatal(err)
		}
		got = append(got, id+","+name+","+total)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("0,ann,%d 1,bob,%d 2,cy,%d 3,dee,%d 4,eve,NULL", totals[0], totals[1], totals[2], totals[3])
	if g := strings.Join(got, " "); g != want {
		t.Errorf("table %s holds %q, want %q", table, g, want)
	}
}

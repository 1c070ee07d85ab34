package main

import (
	"database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
)

// binlogPipeline captures two shards of an orders table from the binlog,
// totals them per customer and upserts the totals into a MySQL table.
const binlogPipeline = `version: 1
name: binlog_totals
checkpoint_interval: 500ms
sources:
  - name: orders
    type: mysql
    mode: cdc
    dsn: ${ETLD_BINLOG_DSN}
    tables: [%s, %s]
    schema:
      - id BIGINT
      - customer STRING
      - amount BIGINT
      - shard STRING METADATA FROM 'table_name'
    key: [shard, id]
transforms:
  - name: totals
    sql: |
      SELECT customer, COUNT(*) AS orders, SUM(amount) AS total
      FROM orders
      GROUP BY customer
sinks:
  - name: db
    from: totals
    type: mysql
    dsn: ${ETLD_BINLOG_DSN}
    table: %s
    key: [customer]
    create_table: true
`

// TestBinlogToUpsertTable runs, as a user would, `etld run` on a
// pipeline that captures two tables from the binlog, groups them and
// upserts into a MySQL table: the table must equal the totals computed
// from the source tables while they change, after a graceful stop with
// changes made while etld was down, and after a kill -9.
func TestBinlogToUpsertTable(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a, b := testenv.MySQLTable(t, db, ""), testenv.MySQLTable(t, db, "")
	out := testenv.MySQLTable(t, db, "")
	for _, tb := range []string{a, b} {
		testenv.Exec(t, db, "CREATE TABLE `"+tb+"` (id BIGINT PRIMARY KEY, customer VARCHAR(20), amount BIGINT)")
	}
	testenv.Exec(t, db, "INSERT INTO `"+a+"` VALUES (1, 'ann', 10), (2, 'bob', 20), (3, 'ann', 5)")
	testenv.Exec(t, db, "INSERT INTO `"+b+"` VALUES (1, 'cy', 7), (2, 'ann', 1)")
	dir, state := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "binlog.yaml")
	writeFile(t, path, fmt.Sprintf(binlogPipeline, a, b, out))
	t.Setenv("ETLD_BINLOG_DSN", dsn)

	truth := func() []string {
		return queryLines(t, db, fmt.Sprintf("SELECT customer, COUNT(*), SUM(amount) FROM (SELECT * FROM `%s` UNION ALL SELECT * FROM `%s`) u GROUP BY customer", a, b))
	}
	converged := func(what string, cmd *exec.Cmd, logs *lockedBuffer) {
		t.Helper()
		want := truth()
		testenv.Eventually(t, time.Minute, what, func() error {
			if cmd.ProcessState != nil {
				t.Fatalf("etld exited: %s\n%s", cmd.ProcessState, logs)
			}
			got, err := sortedRows(db, "SELECT customer, orders, total FROM `"+out+"`")
			if err != nil {
				return err // the sink has not made its table yet
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("table %v, want %v", got, want)
			}
			return nil
		})
	}
	start := func() (*exec.Cmd, *lockedBuffer) {
		logs := &lockedBuffer{}
		cmd := exec.Command(etldBin, "run", "--quiet", "--state-dir", state, path)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, logs
	}

	cmd, logs := start()
	converged("the snapshot's totals", cmd, logs)
	testenv.Exec(t, db, "INSERT INTO `"+a+"` VALUES (4, 'dan', 3)")
	testenv.Exec(t, db, "UPDATE `"+a+"` SET amount = amount * 2 WHERE customer = 'ann'")
	testenv.Exec(t, db, "UPDATE `"+b+"` SET customer = 'bob' WHERE id = 1")
	testenv.Exec(t, db, "DELETE FROM `"+a+"` WHERE id = 2")
	converged("the totals after changes", cmd, logs)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("graceful stop: %v\n%s", err, logs)
	}
	testenv.Exec(t, db, "INSERT INTO `"+b+"` VALUES (3, 'eve', 100), (4, 'ann', 1)")
	testenv.Exec(t, db, "DELETE FROM `"+a+"` WHERE customer = 'dan'")
	cmd, logs = start()
	converged("the totals of changes made while etld was stopped", cmd, logs)

	testenv.Exec(t, db, "UPDATE `"+b+"` SET amount = amount + 1")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	testenv.Exec(t, db, "INSERT INTO `"+a+"` VALUES (9, 'fay', 9)")
	cmd, logs = start()
	converged("the totals after a kill -9", cmd, logs)
}

// queryLines runs q and returns its rows as "a|b|c" lines, sorted.
func queryLines(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	out, err := sortedRows(db, q)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sortedRows(db *sql.DB, q string) ([]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		line := ""
		for i, v := range vals {
			if i > 0 {
				line += "|"
			}
			line += v.String
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out, rows.Err()
}

package pipeline_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline"
)

// cdcHistories tell the same story in each changelog format: three rows
// inserted, id 1 renamed, id 2 deleted, id 3's weight changed. Records a
// format skips (Canal's DDL, a Kafka tombstone, another table's rows) and
// one bad record (line 3 of each) are mixed in.
var cdcHistories = map[string]struct {
	format string
	lines  []string
}{
	"debezium-json": {"debezium-json", []string{
		`{"before":null,"after":{"id":1,"name":"a","weight":1.00},"op":"r"}`,
		`{"schema":{"type":"struct"},"payload":{"before":null,"after":{"id":2,"name":"b","weight":2.00},"op":"c"}}`,
		`{"before":null,"after":{"id":"bad"},"op":"c"}`,
		`{"before":null,"after":{"id":3,"name":"c","weight":3.00},"op":"c"}`,
		``,
		`{"before":{"id":1,"name":"a","weight":1.00},"after":{"id":1,"name":"a2","weight":1.00},"op":"u"}`,
		`{"before":{"id":2,"name":"b","weight":2.00},"after":null,"op":"d"}`,
		`{"before":{"id":3,"name":"c","weight":3.00},"after":{"id":3,"name":"c","weight":3.50},"op":"u"}`,
	}},
	"canal-json": {"{type: canal-json, table_include: products}", []string{
		`{"data":null,"type":"CREATE","isDdl":true,"database":"inv","table":"products","sql":"CREATE TABLE products (...)"}`,
		`{"data":[{"id":"1","name":"a","weight":"1.00"},{"id":"2","name":"b","weight":"2.00"}],"old":null,"type":"INSERT","database":"inv","table":"products"}`,
		`{"data":[{"id":"9","name":"x"}],"type":"ALTER","database":"inv","table":"products"}`,
		`{"data":[{"id":"3","name":"c","weight":"3.00"}],"type":"INSERT","database":"inv","table":"products"}`,
		`{"data":[{"id":"7","name":"other table"}],"type":"INSERT","database":"inv","table":"orders"}`,
		`{"data":[{"id":"1","name":"a2","weight":"1.00"},{"id":"3","name":"c","weight":"3.50"}],"old":[{"name":"a"},{"weight":"3.00"}],"type":"UPDATE","database":"inv","table":"products"}`,
		`{"data":[{"id":"2","name":"b","weight":"2.00"}],"type":"DELETE","database":"inv","table":"products"}`,
	}},
	"maxwell-json": {"maxwell-json", []string{
		`{"database":"inv","table":"products","type":"insert","ts":1,"data":{"id":1,"name":"a","weight":1.00}}`,
		`{"database":"inv","table":"products","type":"insert","ts":1,"data":{"id":2,"name":"b","weight":2.00}}`,
		`{"database":"inv","table":"products","type":"update","data":{"id":1,"name":"a2"}`,
		`{"database":"inv","table":"products","type":"insert","ts":1,"data":{"id":3,"name":"c","weight":3.00}}`,
		`{"database":"inv","table":"products","type":"update","ts":2,"data":{"id":1,"name":"a2","weight":1.00},"old":{"name":"a"}}`,
		`{"database":"inv","table":"products","type":"delete","ts":3,"data":{"id":2,"name":"b","weight":2.00}}`,
		`{"database":"inv","table":"products","type":"update","ts":4,"data":{"id":3,"name":"c","weight":3.50},"old":{"weight":3.00}}`,
	}},
	"ogg-json": {"ogg-json", []string{
		`{"table":"INV.PRODUCTS","op_type":"I","op_ts":"2020-05-13 15:40:06.000000","after":{"id":1,"name":"a","weight":1.00}}`,
		`{"table":"INV.PRODUCTS","op_type":"I","after":{"id":2,"name":"b","weight":2.00}}`,
		`{"table":"INV.PRODUCTS","op_type":"T"}`,
		`{"table":"INV.PRODUCTS","op_type":"I","after":{"id":3,"name":"c","weight":3.00}}`,
		`{"table":"INV.PRODUCTS","op_type":"U","before":{"id":1,"name":"a","weight":1.00},"after":{"id":1,"name":"a2","weight":1.00}}`,
		`{"table":"INV.PRODUCTS","op_type":"D","before":{"id":2,"name":"b","weight":2.00}}`,
		`{"table":"INV.PRODUCTS","op_type":"U","before":{"id":3,"name":"c","weight":3.00},"after":{"id":3,"name":"c","weight":3.50}}`,
	}},
}

// TestChangelogFormatsInAFileSource runs a file source of each changelog
// format into an upsert sink (MySQL) and into a file in the same format,
// and checks the final table exactly; the bad record follows on_error.
func TestChangelogFormatsInAFileSource(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	t.Setenv("CDC_TEST_DSN", dsn)
	for name, h := range cdcHistories {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.json")
			if err := os.WriteFile(in, []byte(strings.Join(h.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			table := testenv.UniqueName(t, "cdc")
			table2 := testenv.UniqueName(t, "cdc")
			t.Cleanup(func() {
				db.Exec("DROP TABLE IF EXISTS " + table)
				db.Exec("DROP TABLE IF EXISTS " + table2)
			})
			out := filepath.Join(dir, "out.json")
			yaml := fmt.Sprintf(`version: 1
name: cdc
sources:
  - name: products
    type: file
    path: %s
    format: %s
    key: [id]
    schema:
      - id BIGINT
      - name STRING
      - weight DECIMAL(10, 2)
%%s
transforms:
  - name: by_name
    sql: SELECT name, COUNT(*) AS n, SUM(weight) AS total FROM products GROUP BY name
sinks:
  - name: db
    from: products
    type: mysql
    dsn: ${CDC_TEST_DSN}
    table: %s
    create_table: true
  - name: again
    from: products
    type: file
    path: %s
    format: %s
  - name: names
    from: by_name
    type: file
    path: %s
    mode: retract
`, in, h.format, table, out, h.format, filepath.Join(dir, "names.csv"))

			s := runFile(t, dir, fmt.Sprintf(yaml, "    on_error: skip"))
			if s.Sources[0].Skipped != 1 {
				t.Errorf("skipped %d records, want the one bad record", s.Sources[0].Skipped)
			}
			if got := mysqlTable(t, db, table); got != "1,a2,1.00 3,c,3.50" {
				t.Errorf("table %s holds %q", table, got)
			}
			if got := strings.Join(fold(t, filepath.Join(dir, "names.csv")), " "); got != "a2,1,1 c,1,3.5" {
				t.Errorf("GROUP BY name folds to %q", got)
			}
			// The file the sink wrote in the same format reads back as
			// the same final table. Canal messages as Flink writes them
			// name no table, so table_include would drop them all.
			readBack := h.format
			if name == "canal-json" {
				readBack = name
			}
			again := fmt.Sprintf(`version: 1
name: again
sources:
  - name: products
    type: file
    path: %s
    format: %s
    key: [id]
    schema:
      - id BIGINT
      - name STRING
      - weight DECIMAL(10, 2)
sinks:
  - name: db
    from: products
    type: mysql
    dsn: ${CDC_TEST_DSN}
    table: %s
    create_table: true
`, out, readBack, table2)
			runFile(t, t.TempDir(), again)
			if got := mysqlTable(t, db, table2); got != "1,a2,1.00 3,c,3.50" {
				t.Errorf("read back from %s: %q", readBack, got)
			}

			// on_error: fail stops at the bad record's line.
			path := filepath.Join(dir, "p.yaml")
			if err := os.WriteFile(path, []byte(fmt.Sprintf(yaml, "")), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := pipeline.Load(path, pipeline.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Run(context.Background(), pipeline.RunOptions{})
			if err == nil || !strings.Contains(err.Error(), "in.json:3") || !strings.Contains(err.Error(), "on_error: fail") {
				t.Errorf("fail policy error = %v", err)
			}
		})
	}
}

// mysqlTable returns a table's rows as id,name,weight sorted by id.
func mysqlTable(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	rows, err := db.Query("SELECT id, name, weight FROM " + table + " ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, name, weight string
		if err := rows.Scan(&id, &name, &weight); err != nil {
			t.Fatal(err)
		}
		out = append(out, id+","+name+","+weight)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

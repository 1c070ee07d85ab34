package testenv

import (
	"database/sql"
	"errors"
	"sort"
	"strings"
	"testing"

	// Also the driver of the shared MariaDB.
	"github.com/go-sql-driver/mysql"
)

// MySQL connects the test itself to the shared MariaDB (MySQLDSN), to
// prepare and read tables, and returns the connection, closed when the
// test ends, and the DSN for the code under test.
func MySQL(t testing.TB) (*sql.DB, string) {
	t.Helper()
	dsn := MySQLDSN(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dsn
}

// MySQLTable returns a table name unique to the call, with suffix
// appended (a name that needs quoting), and drops the table when the test
// ends. It creates nothing.
func MySQLTable(t testing.TB, db *sql.DB, suffix string) string {
	t.Helper()
	name := UniqueName(t, "tbl") + suffix
	t.Cleanup(func() {
		if _, err := db.Exec("DROP TABLE IF EXISTS `" + strings.ReplaceAll(name, "`", "``") + "`"); err != nil {
			t.Errorf("drop table %s: %v", name, err)
		}
		DropMySQLFences(t, db, name)
	})
	return name
}

// DropMySQLFences deletes the MySQL sink's fence rows of the tables whose
// names start with prefix (a test's tables): the fence table is shared.
func DropMySQLFences(t testing.TB, db *sql.DB, prefix string) {
	t.Helper()
	_, err := db.Exec("DELETE FROM etld_fences WHERE sink LIKE ?", "%:"+strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(prefix)+"%")
	var me *mysql.MySQLError
	if err != nil && !(errors.As(err, &me) && me.Number == 1146) { // no fence table yet
		t.Errorf("delete the fence rows of %s: %v", prefix, err)
	}
}

// Exec runs query on db, failing t with the query on an error.
func Exec(t testing.TB, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TableLines reads a table as sorted lines of text: each row's values
// joined by sep, a NULL written as null.
func TableLines(t testing.TB, db *sql.DB, table, sep, null string) []string {
	t.Helper()
	rows, err := db.Query("SELECT * FROM `" + strings.ReplaceAll(table, "`", "``") + "`")
	if err != nil {
		t.Fatalf("mysql: %v", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			parts[i] = null
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, sep))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

package testenv

import (
	"database/sql"
	"strings"
	"testing"

	// The driver of the shared MariaDB.
	_ "github.com/go-sql-driver/mysql"
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
	})
	return name
}

// Exec runs query on db, failing t with the query on an error.
func Exec(t testing.TB, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

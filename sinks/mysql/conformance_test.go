package mysql_test

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"

	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/mysql"
)

// TestConformance runs the connector kit on the MySQL sink in upsert
// mode, into a table it creates.
func TestConformance(t *testing.T) {
	db, dsn := openDB(t)
	server, err := driver.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conntest.RunSink(t, conntest.Sink{
		Mode:   connector.Upsert,
		Server: server.Addr,
		Target: func(t *testing.T) conntest.Target {
			name := table(t, db, "")
			return conntest.Target{
				Sink: func(t *testing.T, via string) connector.Sink {
					cfg := server.Clone()
					cfg.Addr = via
					s, err := mysql.New(mysql.Config{DSN: cfg.FormatDSN(), Table: name, CreateTable: true}, connector.SinkEnv{Name: "out"})
					if err != nil {
						t.Fatal(err)
					}
					return s
				},
				Landed: func(t *testing.T) []row.Row { return tableRows(t, db, name) },
			}
		},
	})
}

// tableRows reads the rows (id, v) of conntest.Schema in table name.
func tableRows(t *testing.T, db *sql.DB, name string) []row.Row {
	t.Helper()
	var rows []row.Row
	for _, line := range dump(t, db, name) {
		id, v, _ := strings.Cut(line, "|")
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		r := conntest.Row(n, v)
		if v == "NULL" {
			r[1] = row.NullValue
		}
		rows = append(rows, r)
	}
	return rows
}

package mysql_test

import (
	"fmt"
	"strings"
	"testing"

	driver "github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/sources/mysql"
)

// TestConformance runs the connector kit on a partitioned scan of a
// table, and on a source whose server is away.
func TestConformance(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	sch := testenv.Schema(t, "id BIGINT", "v STRING")
	conntest.RunSource(t, conntest.Source{
		Max: 16,
		Input: func(t *testing.T) func(t *testing.T) connector.Source {
			name := testenv.MySQLTable(t, db, "")
			testenv.Exec(t, db, "CREATE TABLE `"+name+"` (id BIGINT PRIMARY KEY, v VARCHAR(10))")
			var vals []string
			for i := 1; i <= 300; i++ {
				vals = append(vals, fmt.Sprintf("(%d, 'v%d')", i, i))
			}
			testenv.Exec(t, db, "INSERT INTO `"+name+"` VALUES "+strings.Join(vals, ","))
			cfg := mysql.Config{DSN: dsn, Table: name, Scan: mysql.ScanConfig{FetchSize: 10,
				Partition: mysql.PartitionConfig{Column: "id", Num: 3, LowerBound: i64(1), UpperBound: i64(300)}}}
			return func(t *testing.T) connector.Source { return newSource(t, cfg, sch, nil) }
		},
		Broken: func(t *testing.T) connector.Source {
			cfg, err := driver.ParseDSN(dsn)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Addr = testenv.NewProxy(t, cfg.Addr).Addr() // never up
			return newSource(t, mysql.Config{DSN: cfg.FormatDSN(), Table: "t"}, sch, nil)
		},
	})
}

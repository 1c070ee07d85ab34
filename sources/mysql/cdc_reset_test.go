package mysql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sources/mysql"
)

// TestCDCResetSaysTheSnapshotRuns: binlog capture keeps nothing on the
// server, so its reset does no I/O (the DSN names no server) and says
// what the next run starts from, per startup mode.
func TestCDCResetSaysTheSnapshotRuns(t *testing.T) {
	for _, c := range []struct{ mode, want string }{
		{"", "the next run takes a new snapshot of db.orders"},
		{"latest-offset", "reads the binlog from its end"},
		{"snapshot", ""},
	} {
		cfg := mysql.Config{DSN: "u:p@tcp(127.0.0.1:1)/db", Mode: "cdc", Table: "orders", Scan: mysql.ScanConfig{Startup: mysql.StartupConfig{Mode: c.mode}}}
		s, err := mysql.NewCDC(cfg, connector.SourceEnv{Name: "s", Schema: testenv.Schema(t, cdcColumns...)})
		if err != nil {
			t.Fatal(err)
		}
		did, err := s.Reset(context.Background())
		if err != nil || !strings.Contains(did, c.want) || (c.want == "") != (did == "") {
			t.Errorf("mode %q: reset said %q, %v; want %q", c.mode, did, err, c.want)
		}
	}
}

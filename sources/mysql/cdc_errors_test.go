package mysql_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/mysql"
)

// openErr opens a capture of cfg and returns Open's error.
func openErr(t testing.TB, cfg mysql.Config) error {
	t.Helper()
	s := newCDC(t, cfg, nil)
	defer s.Close(context.Background())
	return s.Open(testenv.Context(t, time.Minute))
}

// TestCDCServerRefused: a server whose binlog is off or not row-based is
// refused at Open with the setting to change.
func TestCDCServerRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"binlog off", []string{"--skip-log-bin"}, "binary log is off (log_bin)"},
		{"not ROW", []string{"--binlog-format=MIXED"}, "binlog_format is MIXED: binlog capture needs ROW"},
		{"no column names", []string{"--binlog-row-metadata=MINIMAL"}, "binlog_row_metadata is MINIMAL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := testenv.StartMariaDB(t, c.args...)
			db := m.Open()
			testenv.Exec(t, db, "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(40), n INT)")
			err := openErr(t, mysql.Config{DSN: m.DSN, Table: "t"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Open: %v, want %q", err, c.want)
			}
		})
	}
}

// TestCDCPurgedPosition: a checkpoint whose binlog file the server no
// longer has fails at Open, saying the changes since are lost.
func TestCDCPurgedPosition(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a := cdcTable(t, db, 1)
	s := newCDC(t, mysql.Config{DSN: dsn, Table: a}, nil)
	if err := s.Restore([]byte(`{"binlog":{"file":"mariadb-bin.000000","pos":4},"captured":["etld_test.` + a + `"]}`)); err != nil {
		t.Fatal(err)
	}
	err := s.Open(testenv.Context(t, time.Minute))
	if err == nil || !strings.Contains(err.Error(), "mariadb-bin.000000:4 is no longer on the server") || !strings.Contains(err.Error(), "reset the pipeline's state (etld state reset)") {
		t.Errorf("Open: %v, want the purged position named", err)
	}
	s.Close(context.Background())
	// A table added to a running capture has no snapshot.
	b := cdcTable(t, db, 1)
	s = newCDC(t, mysql.Config{DSN: dsn, Tables: []string{a, b}}, nil)
	s.Restore([]byte(`{"binlog":{"file":"mariadb-bin.000001","pos":4},"captured":["etld_test.` + a + `"]}`))
	if err := s.Open(testenv.Context(t, time.Minute)); err == nil || !strings.Contains(err.Error(), "would have no snapshot") {
		t.Errorf("Open with a table more than the checkpoint's: %v", err)
	}
	s.Close(context.Background())
}

// TestCDCSchemaChange: a column added (first, moving the others) and a
// column widened are read on by name; a declared column dropped or
// changed to another kind, and a truncated table, stop the capture with
// an error naming the change.
func TestCDCSchemaChange(t *testing.T) {
	db, dsn := testenv.MySQL(t)
	a := cdcTable(t, db, 10)
	s := newCDC(t, mysql.Config{DSN: dsn, Table: a}, nil)
	if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	f := newFolded(t)
	readUntil(t, s, f, db, a)
	testenv.Exec(t, db, "ALTER TABLE `"+a+"` ADD COLUMN extra VARCHAR(5) DEFAULT 'x' FIRST, MODIFY n BIGINT")
	testenv.Exec(t, db, "INSERT INTO `"+a+"` (id, v, n) VALUES (11, 'after', 12)")
	testenv.Exec(t, db, "UPDATE `"+a+"` SET n = 100, extra = 'y' WHERE id = 3")
	readUntil(t, s, f, db, a)

	for _, c := range []struct{ change, want string }{
		{"ALTER TABLE `%s` DROP COLUMN v", "has no column v any more"},
		{"UPDATE `%s` SET n = NULL; ALTER TABLE `%s` MODIFY n DATE", "column n of etld_test.%s is now DATE (a schema change before binlog position"},
		{"TRUNCATE TABLE `%s`", "was truncated at"},
	} {
		b := cdcTable(t, db, 3)
		s := newCDC(t, mysql.Config{DSN: dsn, Table: b}, nil)
		if err := s.Open(testenv.Context(t, time.Minute)); err != nil {
			t.Fatal(err)
		}
		f := newFolded(t)
		readUntil(t, s, f, db, b)
		for _, q := range strings.Split(strings.ReplaceAll(c.change, "%s", b), "; ") {
			testenv.Exec(t, db, q)
		}
		testenv.Exec(t, db, "INSERT INTO `"+b+"` (id) VALUES (99)")
		var err error
		for err == nil {
			var got *row.Batch
			if got, err = s.Read(testenv.Context(t, 10*time.Second), 1024); err == nil {
				t.Fatalf("%s: read %v, want an error", c.change, got.Changes)
			}
		}
		if want := strings.ReplaceAll(c.want, "%s", b); !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", c.change, err, want)
		}
		s.Close(context.Background())
	}
}

// TestCDCOptionErrors: binlog capture's options are checked at
// construction, each error naming its option.
func TestCDCOptionErrors(t *testing.T) {
	dsn := "u:s3cretpw@tcp(h:3306)/db"
	for _, c := range []struct {
		cfg  mysql.Config
		want string
	}{
		{mysql.Config{DSN: dsn}, "tables: missing"},
		{mysql.Config{DSN: dsn, Table: "a", Tables: []string{"b"}}, "give either table or tables"},
		{mysql.Config{DSN: dsn, Tables: []string{"a.b.c"}}, `tables[0]: "a.b.c" is not a table name`},
		{mysql.Config{DSN: dsn, Table: "a", Query: "SELECT 1"}, "query: binlog capture reads tables"},
		{mysql.Config{DSN: dsn, Table: "a", Lookup: mysql.LookupConfig{Cache: "partial"}}, "lookup: a binlog capture is not a lookup table"},
		{mysql.Config{DSN: dsn, Table: "a", Scan: mysql.ScanConfig{Startup: mysql.StartupConfig{Mode: "latest"}}}, `scan.startup.mode: unknown startup mode "latest"`},
		{mysql.Config{DSN: dsn, Table: "a", Scan: mysql.ScanConfig{Startup: mysql.StartupConfig{Mode: "specific-offset"}}}, "give file and pos, or gtid_set"},
		{mysql.Config{DSN: dsn, Table: "a", Scan: mysql.ScanConfig{Startup: mysql.StartupConfig{SpecificOffset: mysql.OffsetConfig{GTIDSet: "0-1-1"}}}}, "scan.startup.mode is not specific-offset"},
		{mysql.Config{DSN: dsn, Table: "a", Stop: "end"}, `stop: unknown stop "end"`},
		{mysql.Config{DSN: dsn, Table: "a", Stop: "latest", Scan: mysql.ScanConfig{Startup: mysql.StartupConfig{Mode: "snapshot"}}}, "reads no binlog"},
		{mysql.Config{DSN: "u:s3cretpw@unix(/tmp/s)/db", Table: "a"}, "binlog capture connects over TCP"},
	} {
		c.cfg.Mode = "cdc"
		_, err := mysql.NewCDC(c.cfg, connector.SourceEnv{Name: "s", Schema: testenv.Schema(t, cdcColumns...)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.cfg, err, c.want)
		} else if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("the password is in the error: %v", err)
		}
	}
	// A scan refuses binlog capture's options.
	_, err := mysql.New(mysql.Config{DSN: dsn, Table: "a", ServerID: 7}, connector.SourceEnv{Name: "s", Schema: testenv.Schema(t, cdcColumns...)})
	if err == nil || !strings.Contains(err.Error(), "server_id: is an option of binlog capture: set mode: cdc") {
		t.Errorf("a scan with server_id: %v", err)
	}
}
